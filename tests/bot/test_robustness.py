"""Acceptance 6: unsigned, stale and malformed requests, unknown buttons and commands,
and oversized questions — refused clearly, never a 500, and the server keeps serving."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import aiohttp
import pytest
from aiohttp import web
from pydantic import SecretStr

from blocks import ids
from blocks.limits import MAX_SECTION_TEXT
from bot.simulator.requests import (
    FORM_CONTENT_TYPE,
    JSON_CONTENT_TYPE,
    app_mention_envelope,
    block_actions_payload,
    event_envelope,
    form_body,
    interactive_body,
    json_body,
    signed_headers,
    slash_command_form,
    view_submission_payload,
)
from bot.simulator.webapi import FakeSlack
from bot.slack.compose import create_bot
from bot.slack.runners import http_app

from .conftest import (
    ASKER,
    CHANNEL,
    SECRET,
    VACATION_Q,
    BotHarness,
    check_block_kit,
    make_settings,
)

TS = "1700006000.000100"


async def assert_still_serving(harness: BotHarness) -> None:
    health = await harness.get("/healthz")
    assert health.status == 200
    reply = await harness.command("help")
    assert reply.status == 200 and reply.json()["response_type"] == "ephemeral"


async def test_bad_signature_and_stale_timestamp_are_401(
    harness: BotHarness, fake: FakeSlack
) -> None:
    body = json_body(app_mention_envelope(text=VACATION_Q, ts=TS))
    good = signed_headers(SECRET, body, content_type=JSON_CONTENT_TYPE)
    forged = signed_headers("not-the-secret", body, content_type=JSON_CONTENT_TYPE)
    stale = signed_headers(
        SECRET, body, content_type=JSON_CONTENT_TYPE, timestamp=int(time.time()) - 6 * 60
    )
    unsigned = {"Content-Type": JSON_CONTENT_TYPE}
    tampered = {**good}

    for name, headers, sent in (
        ("forged", forged, body),
        ("stale", stale, body),
        ("unsigned", unsigned, body),
        ("tampered body", tampered, body.replace("vacation", "salary")),
        ("forged garbage", forged, "{not json"),
    ):
        reply = await harness.post(sent, headers)
        assert reply.status == 401, f"{name}: {reply.status} {reply.text}"

    assert await harness.store.runs.list_runs() == []
    assert not [c for c in fake.calls if c.method.startswith("chat.")]
    await assert_still_serving(harness)


def _signed_cases() -> list[tuple[str, str, str]]:
    """(name, content type, body): malformed bodies correctly signed."""
    form = FORM_CONTENT_TYPE
    actions = block_actions_payload(action_id=ids.PLAN_RUN, value="x", message_ts=TS)
    no_view_type = view_submission_payload(callback_id=ids.MODIFY_MODAL_CALLBACK, values={})
    del no_view_type["view"]["type"]
    no_channel = event_envelope({"type": "app_mention", "text": "hi", "user": ASKER, "ts": TS})
    return [
        ("invalid JSON", JSON_CONTENT_TYPE, "{not json"),
        ("JSON array", JSON_CONTENT_TYPE, "[1, 2, 3]"),
        ("JSON string", JSON_CONTENT_TYPE, '"hello"'),
        ("empty body", JSON_CONTENT_TYPE, ""),
        ("event is a string", JSON_CONTENT_TYPE, json.dumps({**no_channel, "event": "boom"})),
        ("event without channel", JSON_CONTENT_TYPE, json_body(no_channel)),
        ("payload garbage", form, urlencode({"payload": "garbage{"})),
        ("payload is a list", form, urlencode({"payload": "[1]"})),
        ("actions is a string", form, interactive_body({**actions, "actions": "nope"})),
        ("action is a string", form, interactive_body({**actions, "actions": ["nope"]})),
        ("no actions", form, interactive_body({**actions, "actions": []})),
        ("user is a string", form, interactive_body({**actions, "user": "U1"})),
        ("channel is a list", form, interactive_body({**actions, "channel": [1]})),
        ("view without type", form, interactive_body(no_view_type)),
        ("unknown type", form, interactive_body({"type": "no_such_thing"})),
        ("form without payload", form, "a=b&c=d"),
    ]


async def test_malformed_requests_get_4xx_or_200_never_500(harness: BotHarness) -> None:
    results: dict[str, int] = {}
    for name, content_type, body in _signed_cases():
        reply = await harness.signed(body, content_type)
        results[name] = reply.status

    bad = {name: status for name, status in results.items() if not (200 <= status < 500)}
    assert not bad, f"these malformed requests were not refused cleanly: {bad}"
    assert results["invalid JSON"] == 400
    assert results["payload garbage"] == 400
    assert await harness.store.runs.list_runs() == []
    await assert_still_serving(harness)


async def test_a_button_value_that_is_not_ours_gets_an_ephemeral_error(
    harness: BotHarness,
) -> None:
    for value in ("hello", '{"r": ""}', '{"unexpected": true}', "[]"):
        payload = block_actions_payload(action_id=ids.PLAN_RUN, value=value, message_ts=TS)
        reply = await harness.interactive(payload)
        assert reply.status == 200

    notes = harness.ephemerals(ASKER)
    assert len(notes) == 4
    assert all("not one of mine" in n for n in notes)
    await assert_still_serving(harness)


async def test_an_unknown_action_id_gets_a_helpful_ephemeral(harness: BotHarness) -> None:
    state = await harness.ask(VACATION_Q, ts=TS)
    value = ids.ButtonValue(run_id=state.run_id).encode()

    reply = await harness.click("grace_self_destruct", value, thread_ts=TS)

    assert reply.status == 200
    assert harness.ephemerals(ASKER) == [
        "I don't know that button (it may be from an older version of GRACE); nothing was changed."
    ]
    assert (await harness.run_in(TS)).version == state.version


async def test_a_button_for_an_unknown_run_says_so(harness: BotHarness) -> None:
    value = ids.ButtonValue(run_id="nosuchrun", intervention_id="nope").encode()

    reply = await harness.click(ids.PLAN_RUN, value, thread_ts=TS)

    assert reply.status == 200
    assert harness.ephemerals(ASKER) == [
        "I don't know run nosuchrun any more; nothing was changed."
    ]


async def test_a_damaged_modal_is_refused_in_the_form(harness: BotHarness) -> None:
    payload = view_submission_payload(
        callback_id=ids.MODIFY_MODAL_CALLBACK,
        values={ids.MODIFY_INPUT_BLOCK: {ids.MODIFY_INPUT_ACTION: "change it"}},
        private_metadata="{damaged",
    )

    reply = await harness.interactive(payload)

    assert reply.status == 200
    assert reply.json()["response_action"] == "errors"
    assert "damaged" in reply.json()["errors"][ids.MODIFY_INPUT_BLOCK]


async def test_an_unknown_subcommand_gets_the_help(harness: BotHarness) -> None:
    reply = await harness.command("foo")

    assert reply.status == 200
    body: dict[str, Any] = reply.json()
    assert body["response_type"] == "ephemeral"
    assert "`/grace foo` is not a command I know" in body["text"]
    check_block_kit(body["blocks"], "help")
    help_text = json.dumps(body["blocks"])
    assert "is not a command I know" in help_text
    for sub in ("status", "cancel", "retry", "stats", "thresholds"):
        assert sub in help_text


async def test_a_40000_character_question_gets_a_clear_reply_and_no_run(
    harness: BotHarness, fake: FakeSlack
) -> None:
    question = ("How many vacation days do new employees get? " * 1000)[:39_999] + "?"
    assert len(question) == 40_000

    reply = await harness.mention(question, ts=TS)

    assert reply.status == 200
    assert await harness.store.runs.list_runs() == []
    thread = harness.thread(TS)
    assert len(thread) == 1
    message = thread[0]
    assert message.thread_ts == TS
    assert "40,000 characters" in message.text and "limit" in message.text
    assert len(message.text) <= MAX_SECTION_TEXT
    await assert_still_serving(harness)


async def test_unsigned_slash_command_is_401(harness: BotHarness) -> None:
    body = form_body(slash_command_form(text="stats", channel=CHANNEL))

    reply = await harness.post(body, {"Content-Type": FORM_CONTENT_TYPE})

    assert reply.status == 401


async def test_socket_mode_exposes_no_unverifiable_http_endpoint(
    fake: FakeSlack, data_dir: Path
) -> None:
    settings = make_settings(data_dir, fake).model_copy(
        update={"slack_signing_secret": None, "slack_app_token": SecretStr("xapp-test")}
    )
    bot = await create_bot(settings)
    runner = web.AppRunner(http_app(bot), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    base = f"http://127.0.0.1:{runner.addresses[0][1]}"
    body = json_body(app_mention_envelope(text=VACATION_Q, ts=TS))
    try:
        async with aiohttp.ClientSession() as http:
            async with http.post(f"{base}/slack/events", data=body) as response:
                assert response.status in (404, 405)
            async with http.get(f"{base}/healthz") as response:
                assert response.status == 200
    finally:
        await runner.cleanup()
        await bot.close()
    assert [c.method for c in fake.calls] == ["auth.test"], "only who-am-I, at start-up"


async def test_the_bot_token_in_the_environment_raises_no_false_alarm(
    fake: FakeSlack,
    data_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Operators export SLACK_BOT_TOKEN; Bolt would warn it is unused (we hand it a client
    built from it). Other Bolt warnings still get through."""
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-from-the-environment")
    caplog.set_level(logging.WARNING, logger="slack_bolt")
    bot = await create_bot(make_settings(data_dir, fake))
    try:
        logging.getLogger("slack_bolt").warning("a real Bolt warning")
    finally:
        await bot.close()
    messages = [r.getMessage() for r in caplog.records if r.name.startswith("slack_bolt")]
    assert messages == ["a real Bolt warning"]
