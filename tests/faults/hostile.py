"""Hostile requests to `/slack/events`, shared by the fault tests and
`bench/hostile_input.py`: each is raw bytes and headers, with the status it must get."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from dataclasses import dataclass, field

import aiohttp

SECRET = "hostile-signing-secret-0123456789"
JSON_TYPE = "application/json"
FORM_TYPE = "application/x-www-form-urlencoded"


@dataclass(frozen=True)
class Hostile:
    name: str
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)
    expected: int = 401


def signed(body: bytes, content_type: str, *, timestamp: int | None = None) -> dict[str, str]:
    """Correct Slack signature headers over the raw bytes (whatever they decode to)."""
    stamp = str(int(time.time()) if timestamp is None else timestamp)
    digest = hmac.new(SECRET.encode(), b"v0:" + stamp.encode() + b":" + body, hashlib.sha256)
    return {
        "Content-Type": content_type,
        "X-Slack-Request-Timestamp": stamp,
        "X-Slack-Signature": "v0=" + digest.hexdigest(),
    }


def unsigned(content_type: str, **extra: str) -> dict[str, str]:
    return {"Content-Type": content_type, **extra}


def catalogue() -> list[Hostile]:
    """Every kind of hostile body the issue found reaching the parsers (fresh timestamps)."""
    deep_json = b"[" * 100_000 + b"]" * 100_000
    nested_form = b"payload=" + b"%5B" * 200_000  # 600 KB of url-encoded "["
    invalid_utf8 = b'{"type": "event_callback", "event": {"type": "\xff\xfe\xfd"}}'
    huge = b'{"type": "event_callback", "pad": "' + b"x" * (2 * 1024 * 1024) + b'"}'
    old = int(time.time()) - 3600
    return [
        Hostile("unsigned invalid UTF-8", invalid_utf8, unsigned(JSON_TYPE)),
        Hostile("signed invalid UTF-8", invalid_utf8, signed(invalid_utf8, JSON_TYPE), 400),
        Hostile("unsigned 100k-deep JSON", deep_json, unsigned(JSON_TYPE)),
        Hostile("signed 100k-deep JSON", deep_json, signed(deep_json, JSON_TYPE), 400),
        Hostile("unsigned 600 KB nested form", nested_form, unsigned(FORM_TYPE)),
        Hostile("signed 600 KB nested form", nested_form, signed(nested_form, FORM_TYPE), 400),
        Hostile("unsigned 2 MiB body", huge, unsigned(JSON_TYPE), 413),
        Hostile("signed 2 MiB body", huge, signed(huge, JSON_TYPE), 413),
        Hostile(
            "non-numeric timestamp",
            b'{"type": "event_callback"}',
            unsigned(
                JSON_TYPE, **{"X-Slack-Request-Timestamp": "1e9", "X-Slack-Signature": "v0=0"}
            ),
        ),
        Hostile(
            "timestamp an hour old",
            b'{"type": "event_callback"}',
            signed(b'{"type": "event_callback"}', JSON_TYPE, timestamp=old),
        ),
        Hostile(
            "wrong signature",
            b'{"type": "event_callback"}',
            {**signed(b"{}", JSON_TYPE)},
        ),
    ]


def unhandled_event(n: int) -> bytes:
    """A well-formed, signed-able event of a type GRACE does not handle."""
    return json.dumps(
        {
            "type": "event_callback",
            "team_id": "T0FAKE0001",
            "api_app_id": "A0GRACEAPP",
            "event_id": f"Ev0UNHANDLED{n:05d}",
            "event_time": int(time.time()),
            "event": {
                "type": "reaction_added",
                "user": "U0ASKER0001",
                "reaction": "thumbsup",
                "item": {"type": "message", "channel": "C0GENERAL01", "ts": "1700000000.000100"},
                "event_ts": "1700000000.000200",
            },
        }
    ).encode()


async def send(
    http: aiohttp.ClientSession, url: str, case: Hostile
) -> tuple[int, float, dict[str, str]]:
    """(status, seconds until the response, response headers)."""
    started = time.perf_counter()
    async with http.post(url, data=case.body, headers=case.headers) as response:
        await response.read()
        return response.status, time.perf_counter() - started, dict(response.headers)
