"""Acceptance 4: a paused run survives the bot process; the next process answers the
click, resumes the run and edits the same plan message."""

from __future__ import annotations

from agent.schemas import RunStatus
from blocks import ids
from bot.simulator.webapi import FakeSlack

from .conftest import (
    LATEST_Q,
    BotHarness,
    button_values,
    has_feedback_buttons,
    is_plan_message,
    message_text,
    proceed_through_confirms,
)

TS = "1700004000.000100"


async def test_plan_approval_survives_a_restart_and_the_same_plan_message_is_edited(
    harness: BotHarness, fake: FakeSlack
) -> None:
    before, plan, value = await harness.plan_to_approve(ts=TS)
    assert before.status is RunStatus.PAUSED
    first_bot = harness.bot

    await harness.restart()
    assert harness.bot is not first_bot
    calls_before_click = len(fake.calls)

    reply = await harness.click(ids.PLAN_RUN, value, message=plan)

    assert reply.status == 200
    state = await proceed_through_confirms(harness, TS)
    assert state.run_id == before.run_id
    assert state.status is RunStatus.ANSWERED, state.error
    after_restart = fake.calls[calls_before_click:]
    plan_edits = [
        c for c in after_restart if c.method == "chat.update" and c.params["ts"] == plan.ts
    ]
    assert plan_edits, "the new process edits the plan message it did not post"
    assert [m.ts for m in harness.thread(TS) if is_plan_message(m)] == [plan.ts]
    assert (await harness.plan_message(state)).ts == plan.ts
    final = fake.message(plan.channel, plan.ts)
    assert "✅ answered" in message_text(final)
    assert not {ids.PLAN_RUN, ids.PLAN_EDIT, ids.PLAN_CANCEL} & set(button_values(final))
    assert has_feedback_buttons(await harness.answer_message(state))


async def test_a_thread_reply_after_a_restart_answers_the_question(harness: BotHarness) -> None:
    paused, question = await harness.paused_question(LATEST_Q, ts=TS)
    assert paused.status is RunStatus.PAUSED

    await harness.restart()
    await harness.thread_reply("Beacon Server", thread_ts=TS, ts="1700004000.000200")

    state = await harness.run_in(TS)
    assert state.status is RunStatus.ANSWERED, state.error
    assert "4.2" in state.final_answer
    assert not button_values(harness.fake.message(question.channel, question.ts))
    assert len([m for m in harness.thread(TS) if is_plan_message(m)]) == 1
