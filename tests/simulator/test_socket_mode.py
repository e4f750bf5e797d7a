"""The simulator's Socket Mode, against slack_sdk's own aiohttp Socket Mode client.

If slack_sdk's client can connect, get `hello`, receive envelopes, ack them and
reconnect when the server drops it, an unmodified Bolt app can too (Bolt's
`AsyncSocketModeHandler` is that client plus a dispatcher).
"""

from __future__ import annotations

import aiohttp
import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.simulator.server import SlackSimulator
from bot.simulator.socket_mode import LINK_PATH, Delivery
from bot.simulator.workspace import SLACKBOT_USER_ID, WorkspaceEvent

from .conftest import ALICE, CHANNEL, SocketClient, until


async def test_connect_receive_hello_and_ack_an_event(
    simulator: SlackSimulator, socket_client: SocketClient
) -> None:
    [hello] = socket_client.of_type("hello")
    assert hello["num_connections"] == 1
    assert hello["connection_info"]["app_id"] == simulator.workspace.app_id
    [call] = simulator.calls_to("apps.connections.open")
    assert call.headers["Authorization"] == "Bearer xapp-test"
    assert call.response["url"].startswith(f"ws://127.0.0.1:{simulator.port}{LINK_PATH}?ticket=")

    message = simulator.relay.post(ALICE, CHANNEL, f"<@{simulator.workspace.bot_user_id}> hi")
    await simulator.socket_mode.idle()

    [mention] = socket_client.events("app_mention")
    [plain] = socket_client.events("message")
    assert mention.payload["event"]["ts"] == plain.payload["event"]["ts"] == message.ts
    assert mention.payload["event"]["user"] == ALICE
    assert plain.payload["event"]["channel_type"] == "channel"
    assert mention.payload["type"] == "event_callback"
    assert mention.payload["event_id"] != plain.payload["event_id"]
    assert mention.retry_attempt == 0 and not mention.accepts_response_payload
    deliveries = list(simulator.socket_mode.deliveries)
    assert [d.acked for d in deliveries] == [True, True]
    acked = {m["envelope_id"] for m in simulator.socket_mode.received}
    assert {mention.envelope_id, plain.envelope_id} <= acked


async def test_an_event_that_is_not_acked_is_redelivered_as_a_retry(
    simulator: SlackSimulator, socket_client: SocketClient
) -> None:
    socket_client.should_ack = lambda req: bool(req.retry_attempt)
    simulator.workspace.post_user_message(CHANNEL, ALICE, "no mention, just talk")
    await simulator.socket_mode.idle()

    first, retry = socket_client.events("message")
    assert (first.retry_attempt, first.retry_reason) == (0, "")
    assert (retry.retry_attempt, retry.retry_reason) == (1, "timeout")
    assert first.envelope_id != retry.envelope_id
    assert first.payload == retry.payload  # the same event, event_id included
    [delivery] = simulator.socket_mode.deliveries
    assert delivery.acked and delivery.attempts == 2 and delivery.error is None


async def test_an_event_never_acked_is_reported_after_the_last_retry(
    simulator: SlackSimulator, socket_client: SocketClient
) -> None:
    failures: list[Delivery] = []

    def watch(event: WorkspaceEvent) -> None:
        if event.kind == "delivery_failed":
            failures.append(event.data["delivery"])

    simulator.socket_mode.subscribe(watch)
    socket_client.should_ack = lambda req: False
    simulator.workspace.post_user_message(CHANNEL, ALICE, "anyone?")
    await simulator.socket_mode.idle()

    assert [r.retry_attempt for r in socket_client.events("message")] == [0, 1, 2, 3]
    [delivery] = failures
    assert not delivery.acked and delivery.error == "not_acked" and delivery.attempts == 4
    assert simulator.socket_mode.failed() == [delivery]
    assert "not_acked after 4 attempt(s)" in delivery.summary()


async def test_an_interaction_that_is_not_acked_is_not_retried_but_told_to_the_user(
    simulator: SlackSimulator, socket_client: SocketClient
) -> None:
    socket_client.should_ack = lambda req: req.type != "slash_commands"
    result = await simulator.relay.command(ALICE, CHANNEL, "/grace status")

    assert not result.ok and result.error == "not_acked"
    assert len([r for r in socket_client.requests if r.type == "slash_commands"]) == 1
    [told] = simulator.workspace.ephemerals(user=ALICE)
    assert told.sender == SLACKBOT_USER_ID
    assert told.text == "/grace failed with the error “operation_timeout”"


async def test_slash_command_ack_payload_becomes_an_ephemeral_message(
    simulator: SlackSimulator, socket_client: SocketClient
) -> None:
    socket_client.ack_payload = lambda req: {
        "text": f"you said {req.payload['text']}",
        "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": "*status*"}}],
        "response_type": "ephemeral",
    }
    result = await simulator.relay.command(ALICE, CHANNEL, "/grace status  abc")

    [request] = [r for r in socket_client.requests if r.type == "slash_commands"]
    assert request.accepts_response_payload
    assert request.payload["command"] == "/grace"
    assert request.payload["text"] == "status  abc"
    assert request.payload["user_id"] == ALICE and request.payload["user_name"] == "alice"
    assert request.payload["channel_name"] == "general"
    [shown] = simulator.workspace.ephemerals(user=ALICE)
    assert result.ok and result.posted == [shown.ts]
    assert shown.text == "you said status  abc" and shown.blocks[0]["type"] == "section"
    assert simulator.workspace.messages(CHANNEL) == []  # nobody else sees it


async def test_interactions_fail_fast_without_a_connection(simulator: SlackSimulator) -> None:
    result = await simulator.relay.command(ALICE, CHANNEL, "/grace help")
    assert result.error == "not_connected"
    [told] = simulator.workspace.ephemerals(user=ALICE)
    assert "dispatch_failed" in told.text


async def test_events_wait_for_a_connection_and_are_delivered_on_connect(
    simulator: SlackSimulator,
) -> None:
    simulator.workspace.post_user_message(CHANNEL, ALICE, "posted while the app was down")
    assert len(simulator.socket_mode.pending()) == 1

    client = SocketClient(simulator)
    try:
        await client.client.connect()
        await simulator.socket_mode.idle()
        [event] = client.events("message")
        assert event.payload["event"]["text"] == "posted while the app was down"
        assert event.retry_attempt == 0
    finally:
        await client.close()


async def test_the_client_reconnects_after_the_server_closes_the_connection(
    simulator: SlackSimulator, socket_client: SocketClient
) -> None:
    assert await simulator.socket_mode.drop_connections() == 1

    await until(lambda: simulator.socket_mode.opened == 2, what="a second connection")
    await until(lambda: simulator.socket_mode.connected, what="connected again")
    assert len(simulator.calls_to("apps.connections.open")) == 2  # a fresh URL
    assert len(socket_client.of_type("hello")) == 2

    simulator.workspace.post_user_message(CHANNEL, ALICE, "still there?")
    await simulator.socket_mode.idle()
    [event] = socket_client.events("message")
    assert event.payload["event"]["text"] == "still there?"
    assert simulator.socket_mode.deliveries[-1].acked


async def test_a_disconnect_message_makes_the_client_move_to_a_new_connection(
    simulator: SlackSimulator, socket_client: SocketClient
) -> None:
    assert await simulator.socket_mode.request_refresh() == 1

    await until(lambda: simulator.socket_mode.opened == 2, what="a new connection")
    await until(lambda: len(simulator.socket_mode.connections) == 1, what="old one closed")
    assert len(socket_client.of_type("hello")) == 2  # (the client consumes `disconnect` itself)
    simulator.workspace.post_user_message(CHANNEL, ALICE, "after the refresh")
    await simulator.socket_mode.idle()
    assert [e.payload["event"]["text"] for e in socket_client.events()] == ["after the refresh"]


async def test_apps_connections_open_wants_an_app_token(simulator: SlackSimulator) -> None:
    with pytest.raises(SlackApiError) as err:
        await AsyncWebClient(token="xoxb-bot", base_url=simulator.base_url).apps_connections_open(
            app_token="xoxb-bot"
        )
    assert err.value.response["error"] == "not_allowed_token_type"
    with pytest.raises(SlackApiError) as err:
        await AsyncWebClient(token="xapp-app", base_url=simulator.base_url).chat_postMessage(
            channel=CHANNEL, text="x"
        )
    assert err.value.response["error"] == "not_allowed_token_type"


async def test_the_websocket_needs_a_ticket_from_apps_connections_open(
    simulator: SlackSimulator, http: aiohttp.ClientSession
) -> None:
    with pytest.raises(aiohttp.WSServerHandshakeError) as err:
        await http.ws_connect(f"ws://127.0.0.1:{simulator.port}{LINK_PATH}?ticket=forged")
    assert err.value.status == 401


async def test_block_actions_payload_and_response_url(
    simulator: SlackSimulator, socket_client: SocketClient, http: aiohttp.ClientSession
) -> None:
    """A click carries the message as Slack sends it; `respond()` via response_url works."""
    ws = simulator.workspace
    blocks = [
        {
            "type": "actions",
            "block_id": "b1",
            "elements": [
                {
                    "type": "button",
                    "action_id": "go",
                    "value": "v1",
                    "style": "primary",
                    "text": {"type": "plain_text", "text": "Go"},
                }
            ],
        }
    ]
    parent = ws.post_user_message(CHANNEL, ALICE, "question")
    bot_message = ws.post_message(CHANNEL, text="pick", blocks=blocks, thread_ts=parent.ts)
    await simulator.socket_mode.idle()

    result = await simulator.relay.click(ALICE, CHANNEL, bot_message.ts, "go")

    assert result.ok
    [request] = [r for r in socket_client.requests if r.type == "interactive"]
    payload = request.payload
    assert payload["type"] == "block_actions"
    assert payload["user"]["id"] == ALICE
    assert payload["actions"][0] | {"action_ts": "x"} == {
        "type": "button",
        "action_id": "go",
        "block_id": "b1",
        "text": {"type": "plain_text", "text": "Go", "emoji": True},
        "value": "v1",
        "style": "primary",
        "action_ts": "x",
    }
    assert payload["message"]["ts"] == bot_message.ts
    assert payload["message"]["thread_ts"] == parent.ts
    assert payload["container"]["thread_ts"] == parent.ts
    assert payload["trigger_id"]

    body = {"text": "done", "replace_original": True}
    async with http.post(payload["response_url"], json=body) as response:
        assert response.status == 200
    assert ws.message(CHANNEL, bot_message.ts).text == "done"
    async with http.post(payload["response_url"], json={"text": "psst"}) as response:
        assert response.status == 200
    assert [e.text for e in ws.ephemerals(user=ALICE)] == ["psst"]


async def test_clicking_a_button_that_is_not_there_is_refused(
    simulator: SlackSimulator, socket_client: SocketClient
) -> None:
    message = simulator.workspace.post_message(CHANNEL, text="no buttons")
    result = await simulator.relay.click(ALICE, CHANNEL, message.ts, "nope")
    assert result.error == "action_not_found"
    assert not [r for r in socket_client.requests if r.type == "interactive"]
