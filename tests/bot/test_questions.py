"""Acceptance 1 and 7, plus DMs, follow-ups and health: a question asked in Slack ends as
a plan message edited in place and an answer message in the question's thread."""

from __future__ import annotations

import asyncio
import json

from agent.llm.offline import OfflineModel
from agent.schemas import RunStatus
from blocks import ids
from bot.simulator.requests import message_envelope
from bot.simulator.webapi import FakeSlack
from tests.agent.doubles import GatedModel

from .conftest import (
    ASKER,
    CHANNEL,
    LATEST_Q,
    VACATION_Q,
    BotHarness,
    HarnessFactory,
    button_values,
    has_feedback_buttons,
    is_plan_message,
    message_text,
)

TS = "1700001000.000100"


async def test_mention_is_acked_then_planned_edited_and_answered_in_its_thread(
    make_harness: HarnessFactory, fake: FakeSlack
) -> None:
    model = GatedModel(OfflineModel())
    harness = await make_harness(llm=model)
    # The ack does not wait for the run: it comes while the run is held at the gate.
    reply = await asyncio.wait_for(harness.mention(VACATION_Q, ts=TS, settle=False), 30)

    assert reply.status == 200
    assert not fake.calls_to("chat.postMessage"), "nothing is posted before the plan"
    await asyncio.wait_for(model.reached.wait(), 30)  # the run was started, and waits
    model.gate.set()
    await harness.settle()

    state = await harness.run_in(TS)
    assert state.status is RunStatus.ANSWERED, state.error
    assert state.asker == ASKER
    assert (state.thread.channel_id, state.thread.thread_ts) == (CHANNEL, TS)

    thread = harness.thread(TS)
    assert [m.thread_ts for m in thread] == [TS, TS], "plan + answer, both in the thread"
    plan, answer = thread
    assert is_plan_message(plan)
    assert plan.ts == (await harness.plan_message(state)).ts

    # The plan message was posted once, then edited in place as the steps ran.
    posts = [c for c in fake.calls_to("chat.postMessage") if c.response.get("ts") == plan.ts]
    edits = [c for c in fake.calls_to("chat.update") if c.params.get("ts") == plan.ts]
    assert len(posts) == 1
    assert edits, "the plan message is edited (chat.update) as steps progress"
    assert "answered" not in posts[0].params["text"]
    assert state.plan is not None
    assert f"0/{len(state.plan.steps)} steps done" in posts[0].params["text"]
    final_plan = message_text(plan)
    assert "✅ answered" in final_plan
    assert f"{len(state.plan.steps)}/{len(state.plan.steps)} steps done" in final_plan
    # Each step says in words what it came to; the scores are behind Details.
    assert "found 5 passages in vacation-policy.md" in final_plan  # a task_card's output
    for result in state.step_results.values():
        assert f"{result.confidence:.2f}" not in final_plan, "no scores on the plan"
    assert f"run `{state.run_id[:6]}`" in final_plan
    assert not {ids.PLAN_RUN, ids.PLAN_EDIT, ids.PLAN_CANCEL} & set(button_values(plan))

    # The answer: text, sources, confidence badge and 👍 / 👎.
    assert answer.ts == (await harness.answer_message(state)).ts
    answer_text = message_text(answer)
    assert "15" in answer_text
    assert "vacation-policy.md" in answer_text
    assert "How sure I am" in answer_text
    assert "llm_self_eval" not in answer_text and "query_coverage" not in answer_text
    assert f"run `{state.run_id[:6]}`" in answer_text
    assert has_feedback_buttons(answer)
    assert {s.source for s in state.sources} == {"vacation-policy.md"}


async def test_feedback_buttons_record_the_vote_and_thank_the_user(harness: BotHarness) -> None:
    state = await harness.ask(VACATION_Q, ts=TS)
    answer = await harness.answer_message(state)
    reply = await harness.vote(answer, up=True)

    assert reply.status == 200
    assert await harness.store.recent_feedback() == [(state.overall_confidence, True)]
    assert any("feedback recorded" in t for t in harness.ephemerals(ASKER))


async def test_direct_message_starts_a_run_answered_in_the_dm(harness: BotHarness) -> None:
    dm, ts = "D0DIRECT001", "1700001000.000200"
    envelope = message_envelope(text=VACATION_Q, channel=dm, ts=ts, channel_type="im")

    reply = await harness.event(envelope)

    assert reply.status == 200
    state = await harness.run_in(ts, channel=dm)
    assert state.status is RunStatus.ANSWERED, state.error
    thread = harness.thread(ts, channel=dm)
    assert len(thread) == 2 and all(m.thread_ts == ts for m in thread)
    assert has_feedback_buttons(thread[-1])


async def test_a_plain_channel_message_without_mention_is_ignored(harness: BotHarness) -> None:
    envelope = message_envelope(text=VACATION_Q, ts="1700001000.000300")

    reply = await harness.event(envelope)

    assert reply.status == 200
    assert await harness.store.runs.list_runs() == []


async def test_follow_up_mention_in_a_finished_thread_starts_a_run_with_its_context(
    harness: BotHarness,
) -> None:
    first = await harness.ask(VACATION_Q, ts=TS)
    assert first.status is RunStatus.ANSWERED

    await harness.mention(
        "How many days per week can I work remotely?", ts="1700001000.000900", thread_ts=TS
    )

    runs = await harness.runs_in(TS)
    assert len(runs) == 2
    second = await harness.run_in(TS)
    assert second.run_id != first.run_id
    assert second.status is RunStatus.ANSWERED, second.error
    assert first.final_answer in second.context
    assert VACATION_Q in second.context
    plans = [m for m in harness.thread(TS) if is_plan_message(m)]
    assert len(plans) == 2, "each run of the thread has its own plan message"


async def test_mention_in_a_paused_thread_is_the_answer_to_the_pause(harness: BotHarness) -> None:
    paused = await harness.ask(LATEST_Q, ts=TS)
    assert paused.status is RunStatus.PAUSED

    await harness.mention("Beacon Server", ts="1700001000.000500", thread_ts=TS)

    assert len(await harness.runs_in(TS)) == 1, "no second run"
    state = await harness.run_in(TS)
    assert state.status is RunStatus.ANSWERED, state.error
    assert state.user_inputs == ["Beacon Server"]


async def test_rate_limited_edit_waits_retry_after_and_ends_in_the_right_state(
    harness: BotHarness, fake: FakeSlack
) -> None:
    fake.fail_next("chat.update", status=429, retry_after=1)

    await harness.mention(VACATION_Q, ts=TS)

    state = await harness.run_in(TS)
    assert state.status is RunStatus.ANSWERED
    plan = await harness.plan_message(state)
    updates = [c for c in fake.calls_to("chat.update") if c.params.get("ts") == plan.ts]
    limited = [c for c in updates if c.status == 429]
    assert len(limited) == 1
    retried = updates[updates.index(limited[0]) + 1]
    assert retried.status == 200
    assert retried.time - limited[0].time >= 1.0, "Retry-After: 1 was honoured"
    assert "✅ answered" in message_text(plan)
    assert fake.message(CHANNEL, plan.ts).text == updates[-1].params["text"]
    assert has_feedback_buttons(await harness.answer_message(state))


async def test_healthz_reports_ok(harness: BotHarness) -> None:
    reply = await harness.get("/healthz")

    assert reply.status == 200
    assert json.loads(reply.text)["ok"] is True
