"""The simulator's agent sessions: `agents.sessions.*` validated and kept as Slack
documents them, and in `grace dev` a question's thread shows its session, the page's
Stop button sends `agent_session_stopped` (which stops the run) and opening the DM sends
`app_home_opened` with tab "messages"."""

from __future__ import annotations

from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from agent.schemas import RunStatus, ThreadKey
from bot.simulator.server import SlackSimulator, dm_channel
from bot.slack.dev import DevEnvironment

from .conftest import ALICE, BOB, CHANNEL, COMPARE_Q, VACATION_Q, Page, refusals, settle, until

SET_STATUS = "agents.sessions.setStatus"


async def test_session_methods_are_checked_and_kept(simulator: SlackSimulator) -> None:
    client = AsyncWebClient(token="xoxb-test", base_url=simulator.base_url)
    where = {"channel_id": CHANNEL, "thread_ts": "1700000000.000100"}

    first = await client.api_call(
        SET_STATUS,
        json={**where, "status": "processing", "title": "Parking", "initiator_user_id": ALICE},
    )
    again = await client.api_call(SET_STATUS, json={**where, "status": "closed", "title": "x"})
    assert first["title"] == "Parking" and again["title"] == "Parking", "a title only creates"
    await client.api_call("agents.sessions.rename", json={**where, "title": "Bikes"})
    kept = simulator.sessions.session(CHANNEL, "1700000000.000100")
    assert kept is not None
    assert (kept.title, kept.initiator, kept.history) == ("Bikes", ALICE, ["processing", "closed"])
    assert not kept.stoppable

    refused = await refusals(
        client.api_call(method, json=args)
        for method, args in (
            (SET_STATUS, {**where, "status": "thinking"}),
            (SET_STATUS, {"channel_id": CHANNEL, "status": "active"}),
            (SET_STATUS, {**where, "status": "active", "title": "x" * 201}),
            ("agents.sessions.rename", {**where, "title": ""}),
            ("agents.sessions.rename", {**where, "thread_ts": "1.2", "title": "New"}),
        )
    )
    assert refused == [
        "invalid_status",
        "invalid_arguments",
        "invalid_title",
        "invalid_title",
        "session_not_found",
    ]
    simulator.sessions.refuse = "unknown_method"
    try:
        await client.api_call(SET_STATUS, json={**where, "status": "active"})
    except SlackApiError as exc:
        assert exc.response["error"] == "unknown_method"
    else:
        raise AssertionError("a refusing workspace answered setStatus")


async def session_of(page: Page, channel: str, thread_ts: str) -> dict[str, Any] | None:
    status, data = await page.get("/sim/sessions/state")
    assert status == 200
    found = [s for s in data["sessions"] if (s["channel"], s["thread_ts"]) == (channel, thread_ts)]
    return found[0] if found else None


async def test_grace_dev_shows_the_session_and_its_stop_button_stops_the_run(
    dev: DevEnvironment, page: Page
) -> None:
    asked = await page.say(ALICE, f"@grace {VACATION_Q}")
    root = asked["message"]["ts"]
    await settle(dev)
    session = await session_of(page, CHANNEL, root)
    assert session is not None and session["title"] == VACATION_Q
    assert session["history"] == ["processing", "closed"] and not session["stoppable"]
    status, refused = await page.post(
        "/sim/sessions/stop", {"user": ALICE, "channel": CHANNEL, "thread_ts": root}
    )
    assert status == 400 and refused["error"] == "not_processing", "no Stop once closed"

    asked = await page.say(ALICE, f"@grace {COMPARE_Q}")
    root = asked["message"]["ts"]
    await settle(dev)
    session = await session_of(page, CHANNEL, root)
    assert session is not None and session["status"] == "suspended"  # plan approval
    # Slack still shows the Stop button (the app's "suspended" is on its way) when Bob,
    # then Alice, click it
    kept = dev.simulator.sessions.session(CHANNEL, root)
    assert kept is not None
    kept.status = "processing"
    for user in (BOB, ALICE):
        status, sent = await page.post(
            "/sim/sessions/stop", {"user": user, "channel": CHANNEL, "thread_ts": root}
        )
        assert status == 200 and sent["event"]["type"] == "agent_session_stopped"
        await settle(dev)
        if user == BOB:
            run = await dev.bot.services.store.latest_run_in_thread(
                ThreadKey(
                    team_id=dev.simulator.workspace.team_id, channel_id=CHANNEL, thread_ts=root
                )
            )
            assert run is not None and run.status is RunStatus.PAUSED, "Bob may not stop it"
    run = await dev.bot.services.store.latest_run_in_thread(
        ThreadKey(team_id=dev.simulator.workspace.team_id, channel_id=CHANNEL, thread_ts=root)
    )
    assert run is not None and run.status is RunStatus.CANCELLED
    session = await session_of(page, CHANNEL, root)
    assert session is not None and session["status"] == "closed"
    assert any(f"stopped by <@{ALICE}>" in m.text for m in dev.simulator.thread(CHANNEL, root))


async def test_opening_the_dm_sends_app_home_opened_for_the_messages_tab(
    dev: DevEnvironment, page: Page
) -> None:
    status, sent = await page.post("/sim/sessions/messages_opened", {"user": ALICE})
    assert status == 200 and sent["event"]["tab"] == "messages"
    await settle(dev)
    dm = dm_channel(ALICE)
    greeting = await until(
        lambda: [m for m in dev.simulator.messages(dm) if m.bot_id], what="the DM's greeting"
    )
    assert len(greeting) == 1 and f"<@{ALICE}>" in greeting[0].text
    prompts = dev.simulator.assistant.dm_prompts.get(dm)
    assert prompts is not None and 1 <= len(prompts["prompts"]) <= 3
