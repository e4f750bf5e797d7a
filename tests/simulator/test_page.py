"""The page's HTTP side: the HTML and static files, and the JSON / Server-Sent Events
endpoints `simulator.js` uses (what a browser test will drive)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp

from bot.simulator.server import SlackSimulator

from .conftest import ALICE, BOB, CHANNEL, Page, SocketClient, until

HOOKS = (
    "app",
    "connection-status",
    "user-switcher",
    "channel-list",
    "dm-list",
    "channel-title",
    "message-list",
    "composer",
    "composer-input",
    "composer-send",
    "thread-pane",
    "thread-messages",
    "thread-composer-input",
    "thread-composer-send",
    "modal",
    "modal-submit",
    "modal-close",
    "confirm-dialog",
    "confirm-ok",
    "confirm-deny",
    "notices",
)


class EventStream:
    """A reader of `/sim/events` (Server-Sent Events), as the page's EventSource."""

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self.response = response

    async def next(self, limit: float = 5.0) -> dict[str, Any]:
        """The next event's JSON (comments and keep-alives skipped)."""

        async def read() -> dict[str, Any]:
            data: list[str] = []
            while True:
                line = (await self.response.content.readline()).decode().rstrip("\n")
                if line.startswith("data: "):
                    data.append(line[6:])
                elif not line and data:
                    return dict(json.loads("\n".join(data)))

        return await asyncio.wait_for(read(), limit)

    async def until_kind(self, kind: str) -> dict[str, Any]:
        """Skip events until one of `kind`."""
        while True:
            event = await self.next()
            if event["kind"] == kind:
                return event


async def test_the_page_and_its_static_files(
    simulator: SlackSimulator, http: aiohttp.ClientSession
) -> None:
    page = Page(simulator.origin, http)
    status, html = await page.get("/")
    assert status == 200
    for hook in HOOKS:
        assert f'data-testid="{hook}"' in html, hook
    assert '<script src="/static/simulator.js">' in html
    async with http.get(simulator.origin + "/static/simulator.js") as response:
        assert response.status == 200
        assert response.content_type == "application/javascript"
        script = await response.text()
    assert "EventSource" in script and "/sim/actions" in script
    async with http.get(simulator.origin + "/static/simulator.css") as response:
        assert response.status == 200 and response.content_type == "text/css"
    async with http.get(simulator.origin + "/static/../settings.py") as response:
        assert response.status == 404
    async with http.get(simulator.origin + "/static/nothing.js") as response:
        assert response.status == 404


async def test_state_describes_the_workspace(
    simulator: SlackSimulator, http: aiohttp.ClientSession
) -> None:
    page = Page(simulator.origin, http)
    simulator.workspace.post_user_message(CHANNEL, ALICE, "hello")
    simulator.workspace.post_ephemeral(CHANNEL, ALICE, text="for alice")
    simulator.workspace.post_ephemeral(CHANNEL, BOB, text="for bob")

    state = await page.state(ALICE)

    assert state["team"]["name"] == "GRACE Simulator"
    assert state["bot"]["user_id"] == simulator.workspace.bot_user_id
    people = {u["id"]: u["name"] for u in state["users"] if not u["is_bot"]}
    assert people == {"U0ALICE": "alice", "U0BOB": "bob", "U0CAROL": "carol"}
    channels = {c["id"]: (c["name"], c["is_im"]) for c in state["channels"]}
    assert channels[CHANNEL] == ("general", False)
    assert channels["D0ALICE"] == ("grace", True)
    [message] = state["messages"]
    assert message["text"] == "hello" and message["user"] == ALICE and not message["is_reply"]
    assert [e["text"] for e in state["ephemerals"]] == ["for alice"]
    assert state["connections"] == 0 and state["views"] == []


async def test_composer_text_is_sent_the_way_a_slack_client_sends_it(
    simulator: SlackSimulator, http: aiohttp.ClientSession
) -> None:
    page = Page(simulator.origin, http)
    posted = await page.say(ALICE, "@grace is A & B <b>? cc @bob in #random, not @nobody")
    assert posted["message"]["text"] == (
        "<@U0GRACEBOT> is A &amp; B &lt;b&gt;? cc <@U0BOB> in <#C0RANDOM01|random>, not @nobody"
    )
    raw = await page.post(
        "/sim/messages", {"user": ALICE, "channel": CHANNEL, "text": "<@U0BOB> as is", "raw": True}
    )
    assert raw[1]["message"]["text"] == "<@U0BOB> as is"
    reply = await page.say(BOB, "in the thread", thread_ts=posted["message"]["ts"])
    assert reply["message"]["thread_ts"] == posted["message"]["ts"]
    assert reply["message"]["is_reply"]


async def test_bad_requests_get_slack_style_errors(
    simulator: SlackSimulator, http: aiohttp.ClientSession
) -> None:
    page = Page(simulator.origin, http)
    cases = [
        ({"user": "U0NOBODY", "channel": CHANNEL, "text": "x"}, "user_not_found"),
        (
            {"user": simulator.workspace.bot_user_id, "channel": CHANNEL, "text": "x"},
            "user_not_found",
        ),
        ({"user": ALICE, "channel": CHANNEL, "text": "  "}, "no_text"),
        ({"user": ALICE, "channel": "nope", "text": "x"}, "channel_not_found"),
        ({"user": ALICE, "channel": CHANNEL, "text": "x", "thread_ts": "1.2"}, "thread_not_found"),
    ]
    for body, error in cases:
        status, data = await page.post("/sim/messages", body)
        assert (status, data["ok"], data["error"]) == (400, False, error), body
    async with http.post(simulator.origin + "/sim/messages", data=b"{not json") as response:
        assert response.status == 400
        assert (await response.json())["error"] == "invalid_json"
    status, data = await page.post(
        "/sim/actions",
        {"user": ALICE, "channel": CHANNEL, "message_ts": "1.2", "action_id": "x"},
    )
    assert status == 200 and data["error"] == "message_not_found"
    status, data = await page.post("/sim/views/V404/submit", {"user": ALICE, "values": {}})
    assert data["error"] == "view_not_found"
    unknown = await page.command(ALICE, "/weather today")
    assert unknown["error"] == "unknown_command"
    [told] = simulator.workspace.ephemerals(user=ALICE)
    assert told.text == "/weather is not a valid command. Try /grace."


async def test_changes_are_pushed_as_server_sent_events(
    simulator: SlackSimulator, http: aiohttp.ClientSession
) -> None:
    page = Page(simulator.origin, http)
    async with http.get(simulator.origin + "/sim/events") as response:
        assert response.content_type == "text/event-stream"
        stream = EventStream(response)
        hello = await stream.next()
        assert hello["kind"] == "hello" and hello["connections"] == 0

        posted = (await page.say(ALICE, "live?"))["message"]
        event = await stream.next()
        assert event["kind"] == "message_posted" and event["message"] == posted
        assert event["seq"] == hello["seq"] + 1

        bot = simulator.workspace.post_message(CHANNEL, text="plan v1", thread_ts=posted["ts"])
        await stream.until_kind("message_posted")
        simulator.workspace.update_message(CHANNEL, bot.ts, text="plan v2")
        updated = await stream.until_kind("message_updated")
        assert updated["message"]["text"] == "plan v2" and updated["message"]["edits"] == 1

        simulator.workspace.post_ephemeral(CHANNEL, BOB, text="only bob")
        ephemeral = await stream.until_kind("ephemeral_posted")
        assert ephemeral["message"]["ephemeral"] and ephemeral["message"]["user"] == BOB

        client = SocketClient(simulator)
        try:
            await client.client.connect()
            connection = await stream.until_kind("connection")
            assert connection["connections"] == 1
        finally:
            await client.close()
        assert (await stream.until_kind("connection"))["connections"] == 0

        status, _ = await page.post("/sim/reset", {})
        assert status == 200
        await stream.until_kind("reset")
    assert (await page.state(ALICE))["messages"] == []


async def test_modal_close_and_delivery_log(
    simulator: SlackSimulator, socket_client: SocketClient, http: aiohttp.ClientSession
) -> None:
    page = Page(simulator.origin, http)
    ws = simulator.workspace
    trigger = ws.issue_trigger(ALICE)
    view = ws.open_view(
        trigger,
        {
            "type": "modal",
            "callback_id": "cb",
            "notify_on_close": True,
            "title": {"type": "plain_text", "text": "T"},
            "blocks": [],
        },
    )
    assert view.user == ALICE  # learnt from the trigger id
    assert [v["id"] for v in (await page.state(ALICE))["views"]] == [view.id]

    status, closed = await page.post(f"/sim/views/{view.id}/close", {"user": ALICE})
    assert status == 200 and closed["view_closed"] and closed["acked"]
    assert (await page.state(ALICE))["views"] == []
    [request] = [r for r in socket_client.requests if r.type == "interactive"]
    assert request.payload["type"] == "view_closed"

    status, log = await page.get("/sim/deliveries")
    assert log["connections"] == 1 and log["opened"] == 1
    assert log["deliveries"][-1]["summary"] == "view_closed: acked after 1 attempt(s)"
    await until(lambda: simulator.socket_mode.connected)
