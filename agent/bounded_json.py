"""JSON from strings someone else wrote (button values, a modal's `private_metadata`,
stored rows), decoded within bounds and without surprises.

`loads_bounded` refuses text longer than `max_chars` and nesting deeper than
`max_depth` before the parser sees it — depth is found by one scan over the brackets
outside strings, without recursion, so `[[[…10,000…]]]` costs a loop, not a
`RecursionError` — and raises only `JsonRejected` (a `ValueError`), whatever the input.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Literal

Reason = Literal["too_large", "too_deep", "not_json", "not_text"]


class JsonRejected(ValueError):
    """Why a string was not decoded; `reason` says which bound or rule it broke."""

    def __init__(self, reason: Reason, what: str) -> None:
        super().__init__(f"{what}: {reason.replace('_', ' ')}")
        self.reason: Reason = reason
        self.what = what


def outside_strings(text: str, start: int = 0) -> Iterator[tuple[int, str]]:
    """(index, char) of each character of `text` from `start` that is not inside a JSON
    string (the quotes themselves are skipped too): the one scanner both the depth check
    here and the model-reply repair (agent/llm/json_repair.py) walk brackets with."""
    in_string = escaped = False
    for index in range(start, len(text)):
        char = text[index]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        else:
            yield index, char


def nesting_depth(text: str, limit: int) -> int:
    """How deep JSON text nests (brackets outside strings), counting no further than
    `limit` + 1. Not a validator: malformed text is left to the parser."""
    depth = deepest = 0
    for _, char in outside_strings(text):
        if char in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    return deepest
        elif char in "]}":
            depth -= 1
    return deepest


def loads_bounded(raw: object, *, max_chars: int, max_depth: int, what: str = "value") -> Any:
    """`json.loads(raw)` for a string of at most `max_chars` nesting at most `max_depth`;
    `JsonRejected` for anything else (never another exception)."""
    if not isinstance(raw, str):
        raise JsonRejected("not_text", what)
    if len(raw) > max_chars:
        raise JsonRejected("too_large", what)
    if nesting_depth(raw, max_depth) > max_depth:
        raise JsonRejected("too_deep", what)
    try:
        return json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise JsonRejected("not_json", what) from exc
