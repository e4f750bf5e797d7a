"""Refuse hostile requests to `/slack/events` before anything parses them.

Everything here works on the raw bytes, cheapest check first, so an unsigned body —
whatever its size, encoding or nesting — costs one bounded read and one HMAC:

1. size: more than `max_body_bytes` → 413 (read stops at the limit);
2. timestamp: `X-Slack-Request-Timestamp` not a number, or more than five minutes
   off → 401;
3. signature: `X-Slack-Signature` is not Slack's HMAC of these very bytes → 401;
4. decoding (only for signed bodies): not UTF-8 → 400; JSON (or a form's `payload`)
   nested deeper than `max_depth` or not parseable → 400.

Only then does Bolt see the request (as text it can parse safely).
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
    text: str
    """The body, decoded: safe to hand to Bolt."""


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


def nesting_depth(value: Any, limit: int) -> int:
    """How deep `value` nests (a scalar is 0), counting no further than `limit` + 1."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        depth += 1
        deepest = max(deepest, depth)
        if deepest > limit:
            return deepest
        stack.extend((child, depth) for child in children)
    return deepest


def json_problem(text: str, max_depth: int) -> str | None:
    """Why `text` is not JSON Bolt may parse, or None."""
    try:
        # Depth is scanned before parsing (agent.bounded_json): deep input is cheap.
        parsed = loads_bounded(text, max_chars=len(text), max_depth=max_depth, what="body")
    except JsonRejected as exc:
        return "JSON nested too deeply" if exc.reason == "too_deep" else "body is not valid JSON"
    if nesting_depth(parsed, max_depth) > max_depth:
        return "JSON nested too deeply"
    return None


def body_problem(text: str, content_type: str, max_depth: int) -> str | None:
    """Why a signed, decoded body is not one Bolt should parse, or None."""
    if not text:
        return None
    if content_type.startswith("application/json") or text.startswith("{"):
        return json_problem(text, max_depth)  # Bolt's own rule for "this is JSON"
    # Forms (slash commands, interactivity): flat pairs; an interaction's `payload` is JSON.
    try:
        form = parse_qs(text, keep_blank_values=True, errors="strict", max_num_fields=1000)
    except ValueError:
        return "malformed form body"
    payload = form.get("payload")
    if payload:
        return json_problem(payload[-1], max_depth)
    return None


async def admit(
    request: web.Request,
    secret: str,
    *,
    max_body_bytes: int = MAX_BODY_BYTES,
    max_depth: int = MAX_DEPTH,
) -> Accepted | Refusal:
    """Read and check the request; what to hand to Bolt, or how to refuse it."""
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
    problem = body_problem(text, request.headers.get("Content-Type", ""), max_depth)
    if problem is not None:
        return Refusal(400, problem)
    return Accepted(text)


async def drop_server_header(request: web.Request, response: web.StreamResponse) -> None:
    """`on_response_prepare` hook: no `Server: Python/… aiohttp/…` on any response."""
    response.headers.popall("Server", None)
