"""Acceptance 5: Slack retries and double clicks never start or resume a run twice."""

from __future__ import annotations

import asyncio
import re

from agent.schemas import InterventionStatus, RunStatus
from blocks import ids
from bot.simulator.requests import app_mention_envelope, message_envelope
from bot.simulator.webapi import FakeSlack
from bot.simulator.workspace import DEFAULT_BOT_USER_ID

from .conftest import (
    ASKER,
    LATEST_Q,
    VACATION_Q,
    BotHarness,
    has_feedback_buttons,
    is_plan_message,
)

TS = "1700005000.000100"


async def test_a_retried_event_starts_one_run(harness: BotHarness, fake: FakeSlack) -> None:
    envelope = app_mention_envelope(text=VACATION_Q, ts=TS, event_id="Ev0RETRIED01")

    replies = [await harness.event(envelope, retry_num=n) for n in (None, 1, 2)]

    assert [r.status for r in replies] == [200, 200, 200]
    runs = await harness.runs_in(TS)
    assert len(runs) == 1
    assert runs[0].status is RunStatus.ANSWERED
    thread = harness.thread(TS)
    assert len([m for m in thread if is_plan_message(m)]) == 1
    assert len([m for m in thread if has_feedback_buttons(m)]) == 1


async def test_concurrent_deliveries_of_one_event_start_one_run(harness: BotHarness) -> None:
    envelope = app_mention_envelope(text=VACATION_Q, ts=TS, event_id="Ev0RETRIED02")

    replies = await asyncio.gather(
        *(harness.event(envelope, retry_num=n, settle=False) for n in (None, 1, 2))
    )
    await harness.settle()

    assert [r.status for r in replies] == [200, 200, 200]
    assert len(await harness.runs_in(TS)) == 1
    assert len([m for m in harness.thread(TS) if is_plan_message(m)]) == 1


def _started_step_ids(messages: list[str]) -> list[int]:
    return [int(n) for message in messages for n in re.findall(r"step (\d+)", message)]


async def test_a_double_click_resumes_once_and_tells_the_second_clicker(
    harness: BotHarness,
) -> None:
    paused, plan, value = await harness.plan_to_approve(ts=TS)
    assert paused.pending is not None

    replies = await asyncio.gather(
        harness.click(ids.PLAN_RUN, value, message=plan, settle=False),
        harness.click(ids.PLAN_RUN, value, message=plan, settle=False),
    )
    await harness.settle()

    assert [r.status for r in replies] == [200, 200]
    events = await harness.store.events(paused.run_id)
    answered = [e for e in events if e.event_type == "intervention_answered"]
    assert len(answered) == 1, "one resume"
    started = _started_step_ids([e.message for e in events if e.event_type == "step_started"])
    assert started and len(started) == len(set(started)), f"a step ran twice: {started}"
    stored = await harness.store.get_intervention(paused.pending.intervention_id)
    assert stored is not None and stored.status is InterventionStatus.ANSWERED
    notes = harness.ephemerals(ASKER)
    assert len(notes) == 1
    assert f"already handled by <@{ASKER}>" in notes[0]


async def test_a_mention_delivered_as_message_and_app_mention_answers_once(
    harness: BotHarness,
) -> None:
    paused = await harness.ask(LATEST_Q, ts=TS)
    assert paused.status is RunStatus.PAUSED
    reply_ts = "1700005000.000200"
    text = f"<@{DEFAULT_BOT_USER_ID}> Beacon Server"

    # Slack sends both events (different event ids) for a mention inside a thread.
    await harness.event(message_envelope(text=text, ts=reply_ts, thread_ts=TS))
    await harness.event(app_mention_envelope(text=text, ts=reply_ts, thread_ts=TS))

    state = await harness.run_in(TS)
    assert state.status is RunStatus.ANSWERED, state.error
    assert state.user_inputs == ["Beacon Server"]
    assert len(await harness.runs_in(TS)) == 1


async def test_the_bots_own_messages_do_not_answer_its_questions(harness: BotHarness) -> None:
    before = await harness.ask(LATEST_Q, ts=TS)
    envelope = message_envelope(
        text="Which product or component do you mean?",
        user=DEFAULT_BOT_USER_ID,
        ts="1700005000.000300",
        thread_ts=TS,
    )
    envelope["event"]["bot_id"] = "B0GRACEBOT"

    reply = await harness.event(envelope)

    assert reply.status == 200
    after = await harness.run_in(TS)
    assert after.version == before.version and after.user_inputs == []
