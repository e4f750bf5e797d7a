"""Acceptance 3 and the "who may answer" half of 5: Confirm, Escalate and ask_user
pauses answered by buttons or thread replies — by the asker or an approver only."""

from __future__ import annotations

import json
import re

from agent.schemas import (
    InterventionAction,
    InterventionKind,
    InterventionLevel,
    InterventionStatus,
    ReplanTrigger,
    RunStatus,
)
from blocks import ids
from bot.slack.conversation import REFUSAL

from .conftest import (
    APPROVER,
    ASKER,
    CHANNEL,
    COMPARE_Q,
    LATEST_Q,
    MONGOLIA_Q,
    OTHER,
    BotHarness,
    HarnessFactory,
    button_values,
    has_feedback_buttons,
    message_text,
    proceed_through_confirms,
)

TS = "1700003000.000100"


async def test_escalation_is_answered_by_a_thread_reply_from_the_asker(
    harness: BotHarness,
) -> None:
    harness.fake.workspace.add_user(ASKER, name="alice")
    state = await harness.ask(MONGOLIA_Q, ts=TS)
    assert state.status is RunStatus.PAUSED
    assert state.pending is not None and state.pending.kind is InterventionKind.ESCALATE
    assert state.replan_history, "it replans before escalating"
    assert {r.trigger for r in state.replan_history} == {ReplanTrigger.LOW_CONFIDENCE}
    first = state.pending
    question = await harness.intervention_message(state, first.intervention_id)
    assert question.thread_ts == TS
    assert {ids.ESCALATE_PROCEED, ids.ESCALATE_CANCEL} <= set(button_values(question))

    reply = await harness.thread_reply(
        "It is Ulaanbaatar, according to our travel guide.", thread_ts=TS, ts="1700003000.000200"
    )

    assert reply.status == 200
    state = await harness.run_in(TS)
    # the reply is a source, not more search words: no replan spent on it; it is cited by
    # the person's name (users.info), the id kept for permissions
    assert [s.source for s in state.human_sources] == ["@alice (reply in thread)"]
    assert state.user_inputs == []
    stored = await harness.store.get_intervention(first.intervention_id)
    assert stored is not None and stored.status is InterventionStatus.ANSWERED
    assert stored.answered_by == ASKER
    assert stored.answer is not None and stored.answer.action is InterventionAction.INPUT
    assert {r.trigger for r in state.replan_history} == {ReplanTrigger.LOW_CONFIDENCE}
    assert state.pending is None or state.pending.intervention_id != first.intervention_id
    assert not button_values(harness.fake.message(CHANNEL, question.ts)), "decided: no buttons"

    state = await proceed_through_confirms(harness, TS)
    assert state.status is RunStatus.ANSWERED, state.error
    assert state.level is not InterventionLevel.SILENT
    assert "Ulaanbaatar" in state.final_answer
    assert "@alice (reply in thread)" in {s.source for s in state.sources}
    assert "@alice (reply in thread)" in state.final_answer
    assert has_feedback_buttons(await harness.answer_message(state))
    # no surface shows the raw id in words: not the message text (notifications), not the
    # streamed answer, not the blocks (a `<@U…>` mention is Slack's to render as a name)
    raw_id = re.compile(rf"(?<!<)@{ASKER}")
    sent = [c for c in harness.fake.calls if c.method.startswith("chat.")]
    assert sent and not [c.method for c in sent if raw_id.search(json.dumps(c.params))]
    assert len(harness.fake.calls_to("users.info")) == 1


async def test_ask_user_reply_continues_from_the_product_faq(harness: BotHarness) -> None:
    state, question = await harness.paused_question(LATEST_Q, ts=TS, kind=InterventionKind.ASK_USER)
    assert "Which product" in message_text(question)

    await harness.thread_reply("Beacon Server", thread_ts=TS, ts="1700003000.000200")

    state = await harness.run_in(TS)
    assert state.status is RunStatus.ANSWERED, state.error
    assert state.user_inputs == ["Beacon Server"]
    assert {s.source for s in state.sources} == {"product-faq.csv"}
    assert "4.2" in state.final_answer
    answer = await harness.answer_message(state)
    assert "product-faq.csv" in message_text(answer)


async def test_chatter_in_a_thread_without_a_pause_changes_nothing(harness: BotHarness) -> None:
    before = await harness.ask("How many vacation days do new employees get?", ts=TS)

    reply = await harness.thread_reply("thanks!", thread_ts=TS, ts="1700003000.000200")

    assert reply.status == 200
    after = await harness.run_in(TS)
    assert (after.run_id, after.version) == (before.run_id, before.version)
    assert len(await harness.runs_in(TS)) == 1


async def test_option_button_answers_an_ask_user_pause(harness: BotHarness) -> None:
    paused, question = await harness.paused_question(
        LATEST_Q, ts=TS, kind=InterventionKind.ASK_USER
    )
    assert paused.pending is not None
    buttons = button_values(question)
    labels = paused.pending.options
    server = labels.index("What is the latest version of Beacon Server?")
    assert {ids.option_action_id(i) for i in range(len(labels))} <= set(buttons)

    reply = await harness.click(
        ids.option_action_id(server), buttons[ids.option_action_id(server)], message=question
    )

    assert reply.status == 200
    after = await harness.run_in(TS)
    assert after.run_id == paused.run_id
    assert after.user_inputs == [labels[server]]
    stored = await harness.store.get_intervention(paused.pending.intervention_id)
    assert stored is not None and stored.status is InterventionStatus.ANSWERED
    assert stored.answer is not None and stored.answer.option == server
    assert after.status is RunStatus.ANSWERED, after.error
    assert "4.2" in after.final_answer
    assert has_feedback_buttons(await harness.answer_message(after))
    decided = harness.fake.message(question.channel, question.ts)
    assert not any(a.startswith(ids.ESCALATE_OPTION) for a in button_values(decided))


async def test_a_click_from_someone_else_is_refused_and_changes_nothing(
    harness: BotHarness,
) -> None:
    before = await harness.ask(COMPARE_Q, ts=TS)
    plan = await harness.plan_message(before)

    reply = await harness.click(
        ids.PLAN_RUN, button_values(plan)[ids.PLAN_RUN], message=plan, user=OTHER
    )

    assert reply.status == 200
    assert harness.ephemerals(OTHER) == [REFUSAL]
    after = await harness.run_in(TS)
    assert after.status is RunStatus.PAUSED
    assert after.version == before.version
    assert after.pending is not None and after.pending.status is InterventionStatus.PENDING
    assert set(button_values(harness.fake.message(plan.channel, plan.ts))) >= {ids.PLAN_RUN}


async def test_a_thread_reply_from_someone_else_is_refused(harness: BotHarness) -> None:
    before = await harness.ask(LATEST_Q, ts=TS)

    await harness.thread_reply("Beacon CLI", thread_ts=TS, ts="1700003000.000200", user=OTHER)

    assert harness.ephemerals(OTHER) == [REFUSAL]
    after = await harness.run_in(TS)
    assert after.status is RunStatus.PAUSED and after.version == before.version
    assert after.user_inputs == []


async def test_a_configured_approver_may_answer(make_harness: HarnessFactory) -> None:
    harness = await make_harness(approvers=[APPROVER])
    await harness.mention(COMPARE_Q, ts=TS)
    plan = await harness.plan_message(await harness.run_in(TS))

    await harness.click(
        ids.PLAN_RUN, button_values(plan)[ids.PLAN_RUN], message=plan, user=APPROVER
    )

    state = await harness.run_in(TS)
    assert state.interventions[0].answered_by == APPROVER
    assert state.step_results
    assert harness.ephemerals(APPROVER) == []
    assert f"Plan approved by <@{APPROVER}>" in message_text(
        harness.fake.message(plan.channel, plan.ts)
    )


async def test_escalate_cancel_stops_the_run(harness: BotHarness) -> None:
    state, question = await harness.paused_question(MONGOLIA_Q, ts=TS)

    await harness.click(
        ids.ESCALATE_CANCEL, button_values(question)[ids.ESCALATE_CANCEL], message=question
    )

    state = await harness.run_in(TS)
    assert state.status is RunStatus.CANCELLED
    assert not button_values(harness.fake.message(CHANNEL, question.ts))
    assert any("Stopped" in m.text for m in harness.thread(TS))
