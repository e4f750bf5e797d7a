"""JSON from strings someone else wrote (button values, a modal's `private_metadata`,
stored rows), decoded within bounds and without surprises.

`loads_bounded` refuses text longer than `max_chars` and nesting deeper than
`max_depth` before the parser sees it — depth is found by one scan over the brackets
outside strings, without recursion, so `[[[…10,000…]]]` costs a loop, not a
`RecursionError` — and raises only `JsonRejected` (a `ValueError`), whatever the input.
"""

from __future__ import annotations

import json
import re
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
    string (the quotes themselves are skipped too): the scanner the model-reply repair
    (agent/llm/json_repair.py) walks brackets with, and the rule `nesting_depth` keeps."""
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


_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?', re.DOTALL)
"""A JSON string with its quotes, or an unterminated one up to the end of the text: what
`outside_strings` skips (an escaped character, a quote included, stays in the string)."""
_NOT_BRACKETS = re.compile(r"[^\[\]{}]+")


def nesting_depth(text: str, limit: int) -> int:
    """How deep JSON text nests (brackets outside strings), counting no further than
    `limit` + 1. Not a validator: malformed text is left to the parser.

    The same brackets `outside_strings` finds, found by two regular expressions (strings
    out, then everything but brackets) so that only the brackets are walked in Python:
    a Slack request's body is checked on every ack, and a walk over each of its
    characters cost several times Bolt's whole dispatch (tests/security/
    test_nested_payloads.py compares the two on random text)."""
    depth = deepest = 0
    for char in _NOT_BRACKETS.sub("", _STRING.sub("", text)):
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
