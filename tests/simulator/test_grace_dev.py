"""`grace dev` end to end: the real GRACE bot (an unmodified Bolt `AsyncApp` from
`create_bot`, over `AsyncSocketModeHandler`) against the simulator, driven the way the
page drives it — through the simulator's HTTP API."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import pytest

from agent.errors import InvalidInputError
from agent.schemas import RunStatus, ThreadKey
from blocks import ids
from bot.simulator.workspace import StoredMessage
from bot.slack.conversation import REFUSAL
from bot.slack.dev import DevEnvironment, run_dev
from tests.bot.conftest import message_text

from .conftest import (
    ALICE,
    BOB,
    CHANNEL,
    COMPARE_Q,
    VACATION_Q,
    Page,
    dev_test_settings,
    settle,
)


def buttons(message: StoredMessage) -> dict[str, str]:
    """action_id → value of every button on a message (a `feedback_buttons` pair: its
    👍 value), including accessories and `context_actions`."""
    found: dict[str, str] = {}
    for block in message.blocks:
        elements = (
            list(block.get("elements", []))
            if block.get("type")
            in (
                "actions",
                "context_actions",
            )
            else []
        )
        if isinstance(block.get("accessory"), dict):
            elements.append(block["accessory"])
        for e in elements:
            if e.get("type") == "button":
                found[str(e["action_id"])] = str(e.get("value", ""))
            elif e.get("type") == "feedback_buttons":
                found[str(e["action_id"])] = str(e["positive_button"]["value"])
    return found


def replies(env: DevEnvironment, thread_ts: str) -> list[StoredMessage]:
    """A thread's replies in #general, oldest first."""
    return env.simulator.workspace.thread(CHANNEL, thread_ts)[1:]


async def run_in(env: DevEnvironment, thread_ts: str) -> RunStatus:
    """The status of the latest run of a thread, from the bot's database."""
    key = ThreadKey(
        team_id=env.simulator.workspace.team_id, channel_id=CHANNEL, thread_ts=thread_ts
    )
    state = await env.bot.services.store.latest_run_in_thread(key)
    assert state is not None, f"no run in {thread_ts}"
    return state.status


async def test_a_mention_is_answered_in_its_thread(dev: DevEnvironment, page: Page) -> None:
    posted = await page.say(ALICE, f"@grace {VACATION_Q}")
    question_ts = posted["message"]["ts"]
    assert posted["message"]["text"] == f"<@{dev.simulator.workspace.bot_user_id}> {VACATION_Q}"
    await settle(dev)

    plan, answer = replies(dev, question_ts)
    assert plan.user == answer.user == dev.simulator.workspace.bot_user_id
    assert plan.thread_ts == answer.thread_ts == question_ts
    assert plan.edits >= 1  # posted once, then edited in place as the steps ran
    assert "✅ answered" in message_text(plan)
    said = message_text(answer)
    assert "15 days" in said and "*Sources*" in said and "vacation-policy.md" in said
    assert set(buttons(answer)) == {ids.DETAILS, ids.FEEDBACK}
    assert await run_in(dev, question_ts) is RunStatus.ANSWERED
    # the page sees the same thread
    state = await page.state(ALICE)
    in_thread = [m for m in state["messages"] if m["thread_ts"] == question_ts]
    assert [m["ts"] for m in in_thread] == [plan.ts, answer.ts]
    assert all(d.acked for d in dev.simulator.socket_mode.deliveries)


async def test_a_button_click_from_the_page_resumes_a_paused_run(
    dev: DevEnvironment, page: Page
) -> None:
    question_ts = (await page.say(ALICE, f"@grace {COMPARE_Q}"))["message"]["ts"]
    await settle(dev)
    [plan] = replies(dev, question_ts)
    assert ids.PLAN_RUN in buttons(plan)
    assert await run_in(dev, question_ts) is RunStatus.PAUSED

    refused = await page.click(BOB, plan, ids.PLAN_RUN)  # bob did not ask
    await settle(dev)
    assert refused["acked"]
    assert [e.text for e in dev.simulator.workspace.ephemerals(user=BOB)] == [REFUSAL]
    assert await run_in(dev, question_ts) is RunStatus.PAUSED

    clicked = await page.click(ALICE, plan, ids.PLAN_RUN)
    assert clicked["ok"] and clicked["acked"]
    await settle(dev)
    status = await run_in(dev, question_ts)
    while status is RunStatus.PAUSED:  # a weak step may ask to confirm: proceed
        confirm = next(m for m in reversed(replies(dev, question_ts)) if buttons(m))
        action = next(a for a in buttons(confirm) if a.endswith("proceed"))
        await page.click(ALICE, confirm, action)
        await settle(dev)
        status = await run_in(dev, question_ts)
    assert status is RunStatus.ANSWERED
    plan = dev.simulator.workspace.message(CHANNEL, plan.ts)
    assert ids.PLAN_RUN not in buttons(plan)  # the same message, edited: no more buttons
    assert f"approved by <@{ALICE}>" in message_text(plan)
    answer = replies(dev, question_ts)[-1]
    assert "*Sources*" in message_text(answer)


async def test_the_modify_modal_validates_and_replans(dev: DevEnvironment, page: Page) -> None:
    question_ts = (await page.say(ALICE, f"@grace {COMPARE_Q}"))["message"]["ts"]
    await settle(dev)
    [plan] = replies(dev, question_ts)

    await page.click(ALICE, plan, ids.PLAN_EDIT)
    state = await page.state(ALICE)
    [view] = state["views"]
    assert view["user"] == ALICE and view["view"]["callback_id"] == ids.MODIFY_MODAL_CALLBACK
    assert (await page.state(BOB))["views"] == []  # only alice sees her modal

    status, empty = await page.post(
        f"/sim/views/{view['id']}/submit",
        {"user": ALICE, "values": {ids.MODIFY_INPUT_BLOCK: {ids.MODIFY_INPUT_ACTION: " "}}},
    )
    assert status == 200 and not empty["view_closed"]
    assert empty["errors"] == {ids.MODIFY_INPUT_BLOCK: "Tell GRACE how the plan should change."}

    status, done = await page.post(
        f"/sim/views/{view['id']}/submit",
        {
            "user": ALICE,
            "values": {ids.MODIFY_INPUT_BLOCK: {ids.MODIFY_INPUT_ACTION: "Only the remote policy"}},
        },
    )
    assert done["ok"] and done["view_closed"]
    await settle(dev)
    assert (await page.state(ALICE))["views"] == []
    said = message_text(dev.simulator.workspace.message(CHANNEL, plan.ts))
    assert "I changed the plan once" in said and f"Plan edited by <@{ALICE}>" in said


async def test_grace_status_comes_back_as_an_ephemeral_message(
    dev: DevEnvironment, page: Page
) -> None:
    await page.say(ALICE, f"@grace {COMPARE_Q}")
    await settle(dev)
    messages_before = len(dev.simulator.workspace.all_messages())

    result = await page.command(ALICE, "/grace status")

    assert result["ok"] and result["acked"]
    assert result["ack_payload"]["response_type"] == "ephemeral"
    [shown] = (await page.state(ALICE))["ephemerals"]
    assert result["posted"] == [shown["ts"]]
    assert shown["text"] == "Your 1 recent runs"
    assert any(b["type"] == "header" for b in shown["blocks"])
    assert (await page.state(BOB))["ephemerals"] == []
    assert len(dev.simulator.workspace.all_messages()) == messages_before

    # typed in the composer, a `/` command is a command, not a message
    typed = await page.say(ALICE, "/grace help")
    assert typed["command"] and typed["acked"]
    assert len(dev.simulator.workspace.all_messages()) == messages_before


async def test_a_thread_reply_answers_a_question_and_a_dm_needs_no_mention(
    dev: DevEnvironment, page: Page
) -> None:
    question_ts = (await page.say(ALICE, "@grace What is the latest version?"))["message"]["ts"]
    await settle(dev)
    assert await run_in(dev, question_ts) is RunStatus.PAUSED
    asked = replies(dev, question_ts)[-1]
    assert "Which product" in message_text(asked)

    await page.say(ALICE, "Beacon Server", thread_ts=question_ts)
    await settle(dev)
    assert await run_in(dev, question_ts) is RunStatus.ANSWERED
    assert "4.2" in message_text(replies(dev, question_ts)[-1])

    dm = "D0ALICE"
    asked_ts = (await page.say(ALICE, VACATION_Q, channel=dm))["message"]["ts"]
    await settle(dev)
    answer = dev.simulator.workspace.thread(dm, asked_ts)[-1]
    assert "15 days" in message_text(answer)


async def test_the_bot_ignores_its_own_messages_and_edits(dev: DevEnvironment, page: Page) -> None:
    """Slack sends the bot its own posts and edits as `message` events; all are acked."""
    await page.say(ALICE, f"@grace {VACATION_Q}")
    await settle(dev)
    events = [
        d.payload["event"] for d in dev.simulator.socket_mode.deliveries if d.type == "events_api"
    ]
    assert any(e.get("bot_id") for e in events)
    assert any(e.get("subtype") == "message_changed" for e in events)
    assert all(d.acked for d in dev.simulator.socket_mode.deliveries)
    assert len(await dev.bot.services.store.runs.list_runs()) == 1


async def test_a_busy_port_is_a_clear_error(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = int(busy.getsockname()[1])
        with pytest.raises(InvalidInputError, match=f"Port {port} is in use"):
            await run_dev(dev_test_settings(tmp_path / "grace"), port=port, stop=asyncio.Event())


async def test_the_channel_config_modal_from_the_page(dev: DevEnvironment, page: Page) -> None:
    """`/grace config` (issue 20): alice, a workspace admin, opens and saves it from the
    page (its selects typed as the page types them); carol, named nowhere, is refused."""
    from blocks import channel_config as cfg

    refused = await page.command("U0CAROL", "/grace config")
    assert refused["ok"]
    await settle(dev)
    assert (await page.state("U0CAROL"))["views"] == []
    assert any(
        "Only workspace admins" in e["text"] for e in (await page.state("U0CAROL"))["ephemerals"]
    )

    await page.command(ALICE, "/grace config")
    await settle(dev)
    [view] = (await page.state(ALICE))["views"]
    assert view["view"]["callback_id"] == cfg.CONFIG_MODAL_CALLBACK
    status, done = await page.post(
        f"/sim/views/{view['id']}/submit",
        {
            "user": ALICE,
            "values": {
                cfg.EXPERTS: {cfg.action_id(cfg.EXPERTS): BOB},
                cfg.ANSWER_MODE: {cfg.action_id(cfg.ANSWER_MODE): "all"},
                cfg.REPLY_MODE: {cfg.action_id(cfg.REPLY_MODE): "default"},
            },
        },
    )
    assert status == 200 and done["view_closed"], done
    channels = dev.bot.deps.channels
    assert channels is not None
    saved = await channels.get(CHANNEL)
    assert (saved.experts, saved.answer_mode, saved.reply_mode) == ([BOB], "all", None)
    assert saved.updated_by == ALICE
