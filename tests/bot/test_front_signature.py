"""`grace serve`'s front checks Slack's signature exactly once per request: its guard
(bot/slack/http_guard.py, through `runners.checked_request`) refuses a forged request
before anything parses or stores it, and its Bolt apps, which only ever get requests
that passed the guard, do not compute the signature a second time (the ack path's
own cost against a bare Bolt app, issue 23 point 7)."""

from __future__ import annotations

import aiohttp
from aiohttp import web
from multidict import CIMultiDict
from slack_bolt.request.async_request import AsyncBoltRequest

from bot.simulator.requests import (
    JSON_CONTENT_TYPE,
    app_mention_envelope,
    json_body,
    signed_headers,
)
from bot.slack.front import Front, front_http_app
from tests.bot.conftest import FRONT_SECRET as SECRET


async def _post(base: str, body: str, headers: dict[str, str]) -> int:
    async with (
        aiohttp.ClientSession() as http,
        http.post(f"{base}/slack/events", data=body.encode(), headers=headers) as response,
    ):
        return response.status


async def test_a_forged_mention_is_refused_and_a_signed_one_stored(front: Front) -> None:
    runner = web.AppRunner(front_http_app(front), access_log=None)
    await runner.setup()
    try:
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        base = f"http://127.0.0.1:{runner.addresses[0][1]}"
        forged_body = json_body(app_mention_envelope(text="hi", ts="1700000001.000100"))
        headers = signed_headers(SECRET, forged_body, content_type=JSON_CONTENT_TYPE)
        forged = dict(headers, **{"X-Slack-Signature": "v0=" + "0" * 64})
        assert await _post(base, forged_body, forged) == 401
        other_secret = signed_headers("x" * 36, forged_body, content_type=JSON_CONTENT_TYPE)
        assert await _post(base, forged_body, other_secret) == 401
        assert await front.inbox.pending() == [], "a forged request is never stored"

        assert await _post(base, forged_body, headers) == 200
        assert [e.payload["thread_ts"] for e in await front.inbox.pending()] == [
            "1700000001.000100"
        ]
    finally:
        await runner.cleanup()


async def test_the_fronts_bolt_app_does_not_verify_the_signature_again(front: Front) -> None:
    """Handed a request directly — which only the front does, after the guard — Bolt
    does not look at the signature (a second HMAC per ack). (Mentions do not reach a
    Bolt app at all in this mode: tests/bot/test_front_mentions.py.)"""
    body = json_body(app_mention_envelope(text="hi", ts="1700000003.000100"))
    headers = signed_headers(SECRET, body, content_type=JSON_CONTENT_TYPE)
    headers["X-Slack-Signature"] = "v0=" + "0" * 64
    request = AsyncBoltRequest(body=body, query="", headers=CIMultiDict(headers))
    response = await front.app.async_dispatch(request)
    assert response.status == 200, response.body
    stored = {e.payload["thread_ts"] for e in await front.inbox.pending()}
    assert stored == {"1700000003.000100"}
