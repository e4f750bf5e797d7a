"""The fake Slack Web API, driven by the real slack_sdk client and a real Bolt app."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from slack_bolt.async_app import AsyncAck, AsyncApp, AsyncSay
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from slack_sdk.signature import SignatureVerifier
from slack_sdk.web.async_client import AsyncWebClient

from blocks import ids
from blocks.answer import answer_messages
from blocks.ids import ButtonValue, ModalMetadata
from blocks.intervention import modify_modal
from blocks.limits import to_payload
from blocks.plan import fallback_text, plan_message
from bot.simulator.requests import (
    FORM_CONTENT_TYPE,
    JSON_CONTENT_TYPE,
    app_mention_envelope,
    block_actions_payload,
    form_body,
    interactive_body,
    json_body,
    message_envelope,
    sign_request,
    signed_headers,
    slash_command_form,
    view_submission_payload,
)
from bot.simulator.webapi import FakeSlack
from bot.simulator.workspace import DEFAULT_BOT_USER_ID, SlackWorkspace, WorkspaceEvent
from tests import samples

CHANNEL = "C0GENERAL1"
SECRET = "test-signing-secret"


@pytest.fixture
async def fake() -> AsyncIterator[FakeSlack]:
    async with FakeSlack() as server:
        yield server


def client_for(fake: FakeSlack, **kwargs: Any) -> AsyncWebClient:
    return AsyncWebClient(token="xoxb-test", base_url=fake.base_url, **kwargs)


async def test_base_url_has_trailing_slash(fake: FakeSlack) -> None:
    assert fake.base_url.startswith("http://127.0.0.1:")
    assert fake.base_url.endswith("/api/")


async def test_auth_test_and_users_info(fake: FakeSlack) -> None:
    client = client_for(fake)
    auth = await client.auth_test()
    assert auth["user_id"] == DEFAULT_BOT_USER_ID
    assert auth["team_id"] == fake.workspace.team_id
    assert auth["bot_id"] == fake.workspace.bot_id
    user = await client.users_info(user="U0SOMEONE1")
    assert user["user"]["id"] == "U0SOMEONE1"
    call = fake.calls_to("users.info")[0]
    assert call.http_method == "GET"
    assert call.params["user"] == "U0SOMEONE1"
    assert call.headers["Authorization"] == "Bearer xoxb-test"


async def test_post_update_and_thread(fake: FakeSlack) -> None:
    client = client_for(fake)
    parent = fake.workspace.post_user_message(CHANNEL, "U0ASKER001", "<@U0GRACEBOT> hi")
    state = samples.state(n_steps=20, description_chars=500)
    posted = await client.chat_postMessage(
        channel=CHANNEL,
        thread_ts=parent.ts,
        text=fallback_text(state),
        blocks=to_payload(plan_message(state)),
    )
    ts = posted["ts"]
    assert ts > parent.ts
    stored = fake.message(CHANNEL, ts)
    assert stored.user == DEFAULT_BOT_USER_ID and stored.thread_ts == parent.ts
    assert stored.blocks == to_payload(plan_message(state))

    state.pending = samples.plan_approval(state.run_id)
    await client.chat_update(
        channel=CHANNEL, ts=ts, text="edited", blocks=to_payload(plan_message(state))
    )
    assert fake.message(CHANNEL, ts).text == "edited"
    assert fake.message(CHANNEL, ts).edits == 1

    for message in answer_messages(samples.state(answer=samples.words(30_000))):
        await client.chat_postMessage(
            channel=CHANNEL, thread_ts=parent.ts, text="answer", blocks=to_payload(message)
        )
    thread = fake.thread(CHANNEL, parent.ts)
    assert [m.ts for m in thread][:2] == [parent.ts, ts]
    assert [m.ts for m in fake.messages(CHANNEL)] == [parent.ts]

    replies = await client.conversations_replies(channel=CHANNEL, ts=parent.ts)
    assert [m["ts"] for m in replies["messages"]] == [m.ts for m in thread]
    link = await client.chat_getPermalink(channel=CHANNEL, message_ts=ts)
    assert link["permalink"].endswith(f"?thread_ts={parent.ts}&cid={CHANNEL}")
    await client.reactions_add(channel=CHANNEL, timestamp=parent.ts, name="eyes")
    assert fake.message(CHANNEL, parent.ts).reactions == {"eyes": [DEFAULT_BOT_USER_ID]}


async def test_ts_is_unique_and_increasing(fake: FakeSlack) -> None:
    client = client_for(fake)
    stamps = [(await client.chat_postMessage(channel="C2", text=str(i)))["ts"] for i in range(5)]
    assert stamps == sorted(stamps) and len(set(stamps)) == 5
    assert stamps[0] == "1700000000.000100"


async def test_update_unknown_message_fails(fake: FakeSlack) -> None:
    with pytest.raises(SlackApiError) as err:
        await client_for(fake).chat_update(channel=CHANNEL, ts="1.2", text="x")
    assert err.value.response["error"] == "message_not_found"


async def test_invalid_blocks_are_rejected(fake: FakeSlack) -> None:
    too_many = [{"type": "divider"}] * 51
    with pytest.raises(SlackApiError) as err:
        await client_for(fake).chat_postMessage(channel=CHANNEL, text="x", blocks=too_many)
    assert err.value.response["error"] == "invalid_blocks"
    long_text = [{"type": "section", "text": {"type": "mrkdwn", "text": "x" * 3001}}]
    with pytest.raises(SlackApiError):
        await client_for(fake).chat_postMessage(channel=CHANNEL, text="x", blocks=long_text)


async def test_form_encoded_calls_are_parsed(fake: FakeSlack) -> None:
    blocks = '[{"type": "section", "text": {"type": "mrkdwn", "text": "hi"}}]'
    await client_for(fake).api_call(
        "chat.postMessage", data={"channel": CHANNEL, "text": "t", "blocks": blocks}
    )
    call = fake.calls_to("chat.postMessage")[0]
    assert call.params["blocks"][0]["type"] == "section"
    assert "form" in call.headers["Content-Type"]


async def test_ephemeral(fake: FakeSlack) -> None:
    response = await client_for(fake).chat_postEphemeral(
        channel=CHANNEL, user="U0ASKER001", text="only you", blocks=[{"type": "divider"}]
    )
    assert response["message_ts"]
    [eph] = fake.workspace.ephemerals(user="U0ASKER001")
    assert eph.text == "only you" and eph.channel == CHANNEL
    assert fake.messages(CHANNEL) == []


async def test_views_open_and_update(fake: FakeSlack) -> None:
    client = client_for(fake)
    view = modify_modal(samples.confirm_request("r1"), CHANNEL, "1.000100").to_dict()
    opened = await client.views_open(trigger_id="123.trigger", view=view)
    view_id = opened["view"]["id"]
    assert opened["view"]["callback_id"] == ids.MODIFY_MODAL_CALLBACK
    assert fake.workspace.views()[0].view["private_metadata"] == view["private_metadata"]
    with pytest.raises(SlackApiError) as err:
        await client.views_open(trigger_id="123.trigger", view=view)
    assert err.value.response["error"] == "exchanged_trigger_id"
    updated = await client.views_update(
        view_id=view_id, hash=opened["view"]["hash"], view={**view, "private_metadata": "x"}
    )
    assert updated["view"]["private_metadata"] == "x"
    with pytest.raises(SlackApiError) as err:
        await client.views_update(view_id=view_id, hash="stale", view=view)
    assert err.value.response["error"] == "hash_conflict"


async def test_unknown_method_and_auth(fake: FakeSlack) -> None:
    with pytest.raises(SlackApiError) as err:
        await client_for(fake).api_call("nope.nothing")
    assert err.value.response["error"] == "unknown_method"
    with pytest.raises(SlackApiError) as err:
        await AsyncWebClient(base_url=fake.base_url).auth_test()
    assert err.value.response["error"] == "not_authed"


async def test_scripted_429_without_retry_handler(fake: FakeSlack) -> None:
    fake.fail_next("chat.update", status=429, retry_after=7)
    client = client_for(fake, retry_handlers=[])
    await client.chat_postMessage(channel=CHANNEL, text="a")
    ts = fake.messages(CHANNEL)[0].ts
    with pytest.raises(SlackApiError) as err:
        await client.chat_update(channel=CHANNEL, ts=ts, text="b")
    assert err.value.response.status_code == 429
    assert err.value.response.headers["Retry-After"] == "7"
    assert err.value.response["error"] == "ratelimited"
    await client.chat_update(channel=CHANNEL, ts=ts, text="b")  # only the next call failed
    assert [c.status for c in fake.calls_to("chat.update")] == [429, 200]


async def test_scripted_429_with_rate_limit_retry_handler(fake: FakeSlack) -> None:
    fake.fail_next("chat.postMessage", status=429, retry_after=0)
    client = client_for(fake, retry_handlers=[AsyncRateLimitErrorRetryHandler(max_retry_count=1)])
    started = time.monotonic()
    response = await client.chat_postMessage(channel=CHANNEL, text="eventually")
    assert response["ok"]
    assert [c.status for c in fake.calls_to("chat.postMessage")] == [429, 200]
    assert time.monotonic() - started < 3
    assert len(fake.messages(CHANNEL)) == 1


async def test_scripted_error_response(fake: FakeSlack) -> None:
    fake.fail_next("chat.postMessage", error="channel_not_found", times=2)
    client = client_for(fake)
    for _ in range(2):
        with pytest.raises(SlackApiError) as err:
            await client.chat_postMessage(channel=CHANNEL, text="x")
        assert err.value.response["error"] == "channel_not_found"
    assert (await client.chat_postMessage(channel=CHANNEL, text="x"))["ok"]


async def test_workspace_notifies_subscribers() -> None:
    workspace = SlackWorkspace()
    seen: list[WorkspaceEvent] = []
    unsubscribe = workspace.subscribe(seen.append)
    message = workspace.post_message(CHANNEL, text="hi")
    workspace.update_message(CHANNEL, message.ts, text="ho")
    unsubscribe()
    workspace.post_message(CHANNEL, text="unseen")
    assert [e.kind for e in seen] == ["message_posted", "message_updated"]


def test_sign_request_matches_slack_sdk_verifier() -> None:
    body = json_body({"type": "event_callback"})
    headers = sign_request(SECRET, body, timestamp=int(time.time()))
    verifier = SignatureVerifier(SECRET)
    assert verifier.is_valid(
        body=body,
        timestamp=headers["X-Slack-Request-Timestamp"],
        signature=headers["X-Slack-Signature"],
    )
    assert not SignatureVerifier("other").is_valid(
        body=body,
        timestamp=headers["X-Slack-Request-Timestamp"],
        signature=headers["X-Slack-Signature"],
    )


async def test_payload_builders_drive_a_real_bolt_app(fake: FakeSlack) -> None:
    """Every builder produces a request Bolt verifies, parses and routes."""
    app = AsyncApp(client=client_for(fake), signing_secret=SECRET, process_before_response=True)
    got: dict[str, Any] = {}

    @app.event("app_mention")
    async def on_mention(event: dict[str, Any], say: AsyncSay) -> None:
        got["mention"] = event["text"]
        await say(text="on it", thread_ts=event["ts"])

    @app.event("message")
    async def on_message(event: dict[str, Any]) -> None:
        got["reply"] = (event["text"], event.get("thread_ts"))

    @app.action(ids.PLAN_RUN)
    async def on_run(ack: AsyncAck, action: dict[str, Any], body: dict[str, Any]) -> None:
        await ack()
        got["click"] = (ButtonValue.decode(action["value"]), body["user"]["id"])

    @app.action(ids.ESCALATE_OPTION_PATTERN)
    async def on_option(ack: AsyncAck, action: dict[str, Any]) -> None:
        await ack()
        got["option"] = ids.parse_option_action_id(action["action_id"])

    @app.view(ids.MODIFY_MODAL_CALLBACK)
    async def on_modify(ack: AsyncAck, view: dict[str, Any]) -> None:
        await ack()
        text = view["state"]["values"][ids.MODIFY_INPUT_BLOCK][ids.MODIFY_INPUT_ACTION]["value"]
        got["modify"] = (ModalMetadata.decode(view["private_metadata"]), text)

    @app.command("/grace")
    async def on_command(ack: AsyncAck, command: dict[str, Any]) -> None:
        await ack(text="ok")
        got["command"] = command["text"]

    async def send(body: str, content_type: str) -> int:
        headers = signed_headers(SECRET, body, content_type=content_type)
        response = await app.async_dispatch(AsyncBoltRequest(body=body, headers=headers))
        return response.status

    question = fake.workspace.post_user_message(CHANNEL, "U0ASKER001", "how many days?")
    mention = app_mention_envelope(text="how many days?", ts=question.ts)
    assert await send(json_body(mention), JSON_CONTENT_TYPE) == 200
    assert got["mention"] == f"<@{DEFAULT_BOT_USER_ID}> how many days?"
    assert [m.text for m in fake.thread(CHANNEL, question.ts)] == [question.text, "on it"]

    reply = message_envelope(text="the Tokyo one", thread_ts=question.ts)
    assert await send(json_body(reply), JSON_CONTENT_TYPE) == 200
    assert got["reply"] == ("the Tokyo one", question.ts)

    value = ButtonValue(run_id="r1", intervention_id="i1").encode()
    click = block_actions_payload(action_id=ids.PLAN_RUN, value=value, message_ts=question.ts)
    assert await send(interactive_body(click), FORM_CONTENT_TYPE) == 200
    assert got["click"] == (ButtonValue(run_id="r1", intervention_id="i1"), "U0ASKER001")

    option_value = ButtonValue(run_id="r1", intervention_id="i1", option=3).encode()
    option = block_actions_payload(
        action_id=ids.option_action_id(3), value=option_value, message_ts=question.ts
    )
    assert await send(interactive_body(option), FORM_CONTENT_TYPE) == 200
    assert got["option"] == 3

    meta = ModalMetadata(run_id="r1", intervention_id="i1", channel=CHANNEL, thread_ts="1.0")
    submission = view_submission_payload(
        callback_id=ids.MODIFY_MODAL_CALLBACK,
        values={ids.MODIFY_INPUT_BLOCK: {ids.MODIFY_INPUT_ACTION: "use 2024 data"}},
        private_metadata=meta.encode(),
    )
    assert await send(interactive_body(submission), FORM_CONTENT_TYPE) == 200
    assert got["modify"] == (meta, "use 2024 data")

    command = form_body(slash_command_form(text="status abc"))
    assert await send(command, FORM_CONTENT_TYPE) == 200
    assert got["command"] == "status abc"

    forged = json_body(app_mention_envelope(text="forged"))
    headers = signed_headers("wrong-secret", forged, content_type=JSON_CONTENT_TYPE)
    response = await app.async_dispatch(AsyncBoltRequest(body=forged, headers=headers))
    assert response.status == 401
