"""JSON out of a model's reply, whichever model wrote it.

Structured output is never trusted blindly: a reply may wrap its JSON in markdown fences
or prose, or cut it short. `decode_reply` takes out what can be used and says what was
wrong otherwise, in words fit to send back to the model ("invalid JSON (… at char 12)");
`coerce_reply` validates the data against the expected shape the same way.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import ValidationError

from agent.bounded_json import outside_strings
from agent.llm.transport import short

M = TypeVar("M")

_FENCE = re.compile(r"```[ \t]*[A-Za-z0-9_-]*[ \t]*\n?(.*?)```", re.DOTALL)


def _balanced_end(text: str, start: int) -> int | None:
    """Index just past the bracket matching `text[start]`, skipping JSON strings."""
    opening = text[start]
    closing = "}" if opening == "{" else "]"
    depth = 0
    for index, char in outside_strings(text, start):
        if char == opening:
            depth += 1
        elif char == closing:
            depth -= 1
            if depth == 0:
                return index + 1
    return None


def extract_json(text: str) -> str | None:
    """Best-effort JSON text out of a model reply: drop markdown fences and prose around
    the outermost object (or array). None when there is no bracket at all."""
    fenced = _FENCE.search(text)
    candidate = fenced.group(1) if fenced else text
    candidate = candidate.strip()
    starts = [i for i in (candidate.find("{"), candidate.find("[")) if i >= 0]
    if not starts:
        return None
    start = min(starts)
    end = _balanced_end(candidate, start)
    if end is None:  # unbalanced: take everything up to the last closing bracket
        closing = "}" if candidate[start] == "{" else "]"
        last = candidate.rfind(closing)
        return candidate[start : last + 1] if last > start else candidate[start:]
    return candidate[start:end]


class UnusableReply(ValueError):
    """The reply holds no JSON that could be decoded; the message says why."""


def decode_reply(text: str) -> Any:
    """The JSON data in a reply's text, or `UnusableReply` saying what was wrong."""
    raw = extract_json(text)
    if raw is None:
        raise UnusableReply(f"no JSON object in the reply (it began {short(text)!r})")
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise UnusableReply(
            f"invalid JSON ({exc.msg} at char {exc.pos}; reply began {short(text)!r})"
        ) from exc


def _validation_summary(exc: ValidationError) -> str:
    problems = []
    for error in exc.errors()[:3]:
        where = ".".join(str(p) for p in error["loc"]) or "(root)"
        problems.append(f"{where}: {error['msg']}")
    more = f" (+{exc.error_count() - 3} more)" if exc.error_count() > 3 else ""
    return "; ".join(problems) + more


def coerce_reply(data: Any, coerce: Callable[[Any], M]) -> tuple[M | None, str]:
    """(value, "") or (None, what was wrong) — the caller decides to retry or fail."""
    try:
        return coerce(data), ""
    except ValidationError as exc:
        return None, f"JSON did not match the schema ({_validation_summary(exc)})"
    except (ValueError, TypeError) as exc:
        return None, str(exc)
