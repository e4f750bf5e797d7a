"""Refuse hostile requests to `/slack/events` before anything parses them.

Everything here works on the raw bytes, cheapest check first, so an unsigned body —
whatever its size, encoding or nesting — costs one bounded read and one HMAC:

1. size: more than `max_body_bytes` → 413 (read stops at the limit);
2. timestamp: `X-Slack-Request-Timestamp` not a number, or more than five minutes
   off → 401;
3. signature: `X-Slack-Signature` is not Slack's HMAC of these very bytes → 401;
4. decoding (only for signed bodies): not UTF-8 → 400; JSON (or a form's `payload`)
   nested deeper than `max_depth` or not parseable → 400.

Only then does Bolt see the request (as text it can parse safely). A JSON body is parsed
here once, and the value is handed on (`Accepted.json`), so nothing after the guard
parses it again.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

from aiohttp import web

from agent.bounded_json import JsonRejected, loads_bounded

MAX_BODY_BYTES = 1024 * 1024
"""Slack's largest payloads (a modal's state, a long message) are far below 1 MiB."""
MAX_DEPTH = 64
"""Slack payloads nest about a dozen levels (blocks in a view's state)."""
MAX_SKEW_SECONDS = 300
"""Slack's own rule: a request older (or newer) than five minutes may be a replay."""
_READ_CHUNK = 64 * 1024


@dataclass(frozen=True)
class Refusal:
    status: int
    reason: str

    def response(self) -> web.Response:
        return web.json_response({"error": self.reason}, status=self.status)


@dataclass(frozen=True)
class Accepted:
    raw: bytes
    """The body as it came (what a request forwarded elsewhere carries)."""
    text: str
    """The body, decoded: safe to hand to Bolt."""
    json: Any = None
    """A JSON body's value, parsed once here (see `parsed`)."""
    parsed: bool = False
    """True for a JSON body (`json` is its value); False for a form or an empty body."""


async def read_limited(request: web.Request, limit: int) -> bytes | None:
    """The body, or None when it is longer than `limit` (the rest is never read)."""
    declared = request.content_length
    if declared is not None and declared > limit:
        return None
    body = bytearray()
    while chunk := await request.content.read(_READ_CHUNK):
        body += chunk
        if len(body) > limit:
            return None
    return bytes(body)


def signature_problem(
    secret: bytes, raw: bytes, headers: Any, *, now: float | None = None
) -> str | None:
    """Why the request is not signed by Slack just now, or None when it is."""
    stamp = str(headers.get("X-Slack-Request-Timestamp", ""))
    if not stamp.isascii() or not stamp.isdigit() or len(stamp) > 12:
        return "missing or malformed request timestamp"
    if abs((time.time() if now is None else now) - int(stamp)) > MAX_SKEW_SECONDS:
        return "request timestamp too far from now"
    given = str(headers.get("X-Slack-Signature", ""))
    digest = hmac.new(secret, b"v0:" + stamp.encode() + b":" + raw, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(given.encode("ascii", "replace"), ("v0=" + digest).encode()):
        return "invalid signature"
    return None


def parse_json(text: str, max_depth: int) -> Any | Refusal:
    """`text`'s JSON value, or why Bolt may not parse it. The depth is found before
    parsing, on the brackets outside strings (agent.bounded_json): deep input is cheap,
    and a text that parses nests exactly as deep as its brackets, so the value needs no
    second walk."""
    try:
        return loads_bounded(text, max_chars=len(text), max_depth=max_depth, what="body")
    except JsonRejected as exc:
        reason = "JSON nested too deeply" if exc.reason == "too_deep" else "body is not valid JSON"
        return Refusal(400, reason)


def is_json(text: str, content_type: str) -> bool:
    """Bolt's own rule for "this body is JSON" (anything else is a form)."""
    return content_type.startswith("application/json") or text.startswith("{")


def form_problem(text: str, max_depth: int) -> str | None:
    """Why a signed, decoded form body (slash commands, interactivity: flat pairs, an
    interaction's `payload` is JSON) is not one Bolt should parse, or None."""
    try:
        form = parse_qs(text, keep_blank_values=True, errors="strict", max_num_fields=1000)
    except ValueError:
        return "malformed form body"
    payload = form.get("payload")
    if payload:
        parsed = parse_json(payload[-1], max_depth)
        if isinstance(parsed, Refusal):
            return parsed.reason
    return None


async def admit(
    request: web.Request,
    secret: str,
    *,
    max_body_bytes: int = MAX_BODY_BYTES,
    max_depth: int = MAX_DEPTH,
    check_forms: bool = True,
) -> Accepted | Refusal:
    """Read and check the request; what to hand to Bolt, or how to refuse it.

    `check_forms=False`: a form body is accepted once signed and decoded, unparsed — for
    `grace serve`'s front, which forwards forms as they came to the worker, whose own
    guard checks them (parsing them in both processes was work on the ack path)."""
    raw = await read_limited(request, max_body_bytes)
    if raw is None:
        return Refusal(413, "request body too large")
    problem = signature_problem(secret.encode(), raw, request.headers)
    if problem is not None:
        return Refusal(401, problem)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return Refusal(400, "body is not UTF-8")
    if not text:
        return Accepted(raw, text)
    if is_json(text, request.headers.get("Content-Type", "")):
        parsed = parse_json(text, max_depth)
        return parsed if isinstance(parsed, Refusal) else Accepted(raw, text, parsed, parsed=True)
    problem = form_problem(text, max_depth) if check_forms else None
    if problem is not None:
        return Refusal(400, problem)
    return Accepted(raw, text)


async def drop_server_header(request: web.Request, response: web.StreamResponse) -> None:
    """`on_response_prepare` hook: no `Server: Python/… aiohttp/…` on any response."""
    response.headers.popall("Server", None)
