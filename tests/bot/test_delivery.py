"""The outbox seen from Slack: an answer Slack refuses is kept and retried, `/grace
status` says which runs' messages are not delivered yet, and once Slack takes them the
thread gets the answer exactly once."""

from __future__ import annotations

import asyncio

from agent.schemas import RunStatus
from blocks.common import short_id
from bot.simulator.requests import FORM_CONTENT_TYPE, form_body, slash_command_form
from bot.simulator.webapi import FakeSlack

from .conftest import CHANNEL, VACATION_Q, BotHarness, has_feedback_buttons

TS = "1700060000.000100"


async def _status(harness: BotHarness) -> str:
    form = slash_command_form(text="status", channel=CHANNEL)
    reply = await harness.signed(form_body(form), FORM_CONTENT_TYPE, settle=False)
    assert reply.status == 200
    return reply.text


async def test_an_answer_slack_refuses_is_listed_then_delivered_once(
    harness: BotHarness, fake: FakeSlack
) -> None:
    fake.fail_for("chat.postMessage", 600, 503)
    await harness.mention(VACATION_Q, ts=TS, settle=False)
    for _ in range(600):
        await harness.bot.deps.tasks.idle()
        state = await harness.store.latest_run_in_thread(harness.key(TS))
        if state is not None and state.status is RunStatus.ANSWERED:
            break
        await asyncio.sleep(0.05)
    assert state is not None and state.status is RunStatus.ANSWERED
    assert harness.thread(TS) == [], "Slack took nothing yet"

    listed = await _status(harness)
    assert "not delivered yet" in listed and short_id(state.run_id) in listed

    fake.clear_faults()
    for _ in range(1200):  # the retry timer's backoff (at most 30 s) runs out
        if any(has_feedback_buttons(m) for m in harness.thread(TS)):
            break
        await asyncio.sleep(0.05)
    await harness.settle()
    answers = [m for m in harness.thread(TS) if has_feedback_buttons(m)]
    assert len(answers) == 1
    assert "not delivered yet" not in await _status(harness)
