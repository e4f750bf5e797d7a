"""`grace serve`'s front takes a mention without Bolt (bot/slack/mentions.py) and parses a
request's body once (the guard's value is handed on): the ack path's own cost against a
bare Bolt app, issue 23 point 7. What it stores, what it answers and what it refuses are
Bolt's: compared here with the front's Bolt app handling the same kind of request."""

from __future__ import annotations

import json
from typing import Any

import aiohttp
from aiohttp import web
from multidict import CIMultiDict
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.request.async_request import AsyncBoltRequest

from bot.service.tasks import TaskRunner
from bot.simulator.requests import (
    FORM_CONTENT_TYPE,
    JSON_CONTENT_TYPE,
    app_mention_envelope,
    form_body,
    json_body,
    signed_headers,
)
from bot.simulator.workspace import DEFAULT_BOT_ID, DEFAULT_BOT_USER_ID
from bot.slack import http_guard, inbound
from bot.slack.front import Front, front_http_app
from bot.slack.intake import Intake
from bot.slack.mentions import MentionTaker
from tests.bot.conftest import FRONT_SECRET as SECRET


async def _served(app: web.Application) -> tuple[web.AppRunner, str]:
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    return runner, f"http://127.0.0.1:{runner.addresses[0][1]}/slack/events"


async def _post(url: str, envelope: dict[str, Any]) -> tuple[int, bytes, str]:
    body = json_body(envelope)
    headers = signed_headers(SECRET, body, content_type=JSON_CONTENT_TYPE)
    async with aiohttp.ClientSession() as http, http.post(url, data=body, headers=headers) as r:
        return r.status, await r.read(), r.headers.get("Content-Type", "")


def _bolt_endpoint(front: Front) -> web.Application:
    """The front's Bolt app (which has the same mention listener) behind Bolt's adapter."""

    async def slack_events(request: web.Request) -> web.Response:
        return await to_aiohttp_response(
            await front.app.async_dispatch(await to_bolt_request(request))
        )

    app = web.Application()
    app.router.add_post("/slack/events", slack_events)
    return app


async def test_a_mention_is_stored_and_acked_as_bolt_does_without_bolt(front: Front) -> None:
    assert isinstance(front.mentions, MentionTaker), "one workspace: no Bolt app for mentions"
    ours, ours_url = await _served(front_http_app(front))
    bolts, bolts_url = await _served(_bolt_endpoint(front))
    try:
        answered = await _post(ours_url, app_mention_envelope(text="hi", ts="1700000001.000100"))
        by_bolt = await _post(bolts_url, app_mention_envelope(text="hi", ts="1700000002.000100"))
    finally:
        await ours.cleanup()
        await bolts.cleanup()
    assert answered == by_bolt
    assert answered[0] == 200
    stored = sorted(await front.inbox.pending(), key=lambda e: e.payload["thread_ts"])
    assert [e.payload["thread_ts"] for e in stored] == ["1700000001.000100", "1700000002.000100"]
    first, second = ({k: v for k, v in e.payload.items() if k != "thread_ts"} for e in stored)
    assert first == second and stored[0].kind == stored[1].kind == "question"


async def test_mentions_by_this_bot_or_another_bot_are_acked_and_not_stored(
    front: Front,
) -> None:
    runner, url = await _served(front_http_app(front))
    try:
        by_itself = app_mention_envelope(text="hi", user=DEFAULT_BOT_USER_ID, ts="1.1")
        by_its_bot_id = app_mention_envelope(text="hi", user="U0SOMEONE", ts="1.2")
        by_its_bot_id["event"]["bot_id"] = DEFAULT_BOT_ID
        by_a_bot = app_mention_envelope(text="hi", user="U0OTHERBOT", ts="1.3")
        by_a_bot["event"]["bot_id"] = "B0OTHERBOT"
        for envelope in (by_itself, by_its_bot_id, by_a_bot):
            assert (await _post(url, envelope))[0] == 200
    finally:
        await runner.cleanup()
    assert await front.inbox.pending() == []


async def test_a_mention_not_stored_in_time_is_not_acknowledged(front: Front) -> None:
    """No time to store it (`ack_wait` 0): 500, so Slack delivers it again; the write
    goes on, and the retry is dropped as a duplicate."""
    assert isinstance(front.mentions, MentionTaker)
    intake = Intake(
        inbox=front.inbox, tasks=TaskRunner(1), processors={}, ack_wait=0, handed_to=lambda _: None
    )
    taker = MentionTaker(intake, front.mentions.identity)
    envelope = app_mention_envelope(text="hi", ts="1700000005.000100", event_id="Ev0LATE")
    try:
        response = await taker.take(envelope)
        assert response.status == 500
        await intake.flush()
        assert [e.event_id for e in await front.inbox.pending()] == ["Ev0LATE"]
        retried = await MentionTaker(front.intake, taker.identity).take(envelope)
        assert retried.status == 200
        assert len(await front.inbox.pending()) == 1
    finally:
        await intake.close()


def test_the_guards_json_is_handed_to_bolt_not_parsed_again() -> None:
    text = json_body(app_mention_envelope(text="hi", ts="1700000006.000100"))
    headers = CIMultiDict(signed_headers(SECRET, text, content_type=JSON_CONTENT_TYPE))
    value = json.loads(text)
    accepted = http_guard.Accepted(text.encode(), text, value, parsed=True)
    request, problem = inbound.parse(accepted, query="a=1", headers=headers)
    assert request is not None, problem
    assert request.body is value, "the guard's value, not a second parse"
    bolts = AsyncBoltRequest(body=text, query="a=1", headers=headers)
    assert (request.raw_body, request.body, request.query, request.headers) == (
        bolts.raw_body,
        bolts.body,
        bolts.query,
        bolts.headers,
    )
    assert dict(request.context) == dict(bolts.context)
    array = http_guard.Accepted(b"[1]", "[1]", [1], parsed=True)
    assert inbound.parse(array, query="", headers=headers)[0] is None


async def test_a_signed_form_passes_the_fronts_guard_unparsed() -> None:
    """The front forwards forms to the worker, whose guard checks their bodies: its own
    guard checks only the signature (and refuses what is not signed)."""
    seen: list[http_guard.Accepted | http_guard.Refusal] = []

    async def endpoint(request: web.Request) -> web.Response:
        check = request.query.get("check") == "1"
        seen.append(await http_guard.admit(request, SECRET, check_forms=check))
        return web.Response()

    app = web.Application()
    app.router.add_post("/slack/events", endpoint)
    runner, url = await _served(app)
    bad = form_body({"payload": "{not json"})
    try:
        async with aiohttp.ClientSession() as http:
            for check, secret in (("1", SECRET), ("0", SECRET), ("0", "x" * 36)):
                headers = signed_headers(secret, bad, content_type=FORM_CONTENT_TYPE)
                async with http.post(f"{url}?check={check}", data=bad, headers=headers):
                    pass
    finally:
        await runner.cleanup()
    checked, unchecked, forged = seen
    assert isinstance(checked, http_guard.Refusal) and checked.status == 400
    assert isinstance(unchecked, http_guard.Accepted)
    assert (unchecked.raw, unchecked.parsed) == (bad.encode(), False)
    assert isinstance(forged, http_guard.Refusal) and forged.status == 401


async def test_a_malformed_mention_is_a_400_as_through_bolt_and_not_stored(front: Front) -> None:
    """A signed `app_mention` whose ids have the wrong type: Bolt's request refuses it
    (400, `bolt_request_of`), and so does the front without Bolt — not a 500 from the
    handler."""
    runner, url = await _served(front_http_app(front))
    try:
        user_not_a_string = app_mention_envelope(text="hi", ts="1700000007.000100")
        user_not_a_string["event"]["user"] = 5
        channel_not_a_string = app_mention_envelope(text="hi", ts="1700000008.000100")
        channel_not_a_string["event"]["channel"] = 5
        for envelope in (user_not_a_string, channel_not_a_string):
            status, body, _ = await _post(url, envelope)
            assert status == 400, body
            assert json.loads(body)["error"].startswith("malformed request:")
    finally:
        await runner.cleanup()
    assert await front.inbox.pending() == []
