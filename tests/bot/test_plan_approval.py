"""Acceptance 2: a complex question waits for plan approval — Run, Edit… or Cancel."""

from __future__ import annotations

from slack_sdk.models.views import View

from agent.schemas import (
    InterventionAction,
    InterventionKind,
    InterventionStatus,
    ReplanTrigger,
    RunStatus,
)
from blocks import ids
from blocks.limits import validate_view
from bot.simulator.webapi import FakeSlack
from bot.simulator.workspace import StoredMessage

from .conftest import (
    ASKER,
    COMPARE_Q,
    BotHarness,
    button_values,
    has_feedback_buttons,
    is_plan_message,
    message_text,
    proceed_through_confirms,
)

TS = "1700002000.000100"
PLAN_BUTTONS = {ids.PLAN_RUN, ids.PLAN_EDIT, ids.PLAN_CANCEL}


async def ask_complex(harness: BotHarness) -> StoredMessage:
    reply = await harness.mention(COMPARE_Q, ts=TS)
    assert reply.status == 200
    return await harness.plan_message(await harness.run_in(TS))


def assert_no_stale_buttons(message: StoredMessage) -> None:
    stale = set(button_values(message)) - {ids.DETAILS}
    assert not stale, f"message {message.ts} still offers {stale}"


async def test_complex_question_pauses_with_run_edit_cancel_on_the_plan(
    harness: BotHarness,
) -> None:
    plan = await ask_complex(harness)

    state = await harness.run_in(TS)
    assert state.status is RunStatus.PAUSED
    assert state.pending is not None
    assert state.pending.kind is InterventionKind.PLAN_APPROVAL
    assert state.step_results == {}, "nothing runs before the plan is approved"
    buttons = button_values(plan)
    assert PLAN_BUTTONS <= set(buttons)
    value = ids.ButtonValue.decode(buttons[ids.PLAN_RUN])
    assert (value.run_id, value.intervention_id) == (state.run_id, state.pending.intervention_id)
    assert "needs approval" in plan.text
    assert len(harness.thread(TS)) == 1, "the buttons live on the plan message"


async def test_run_executes_the_plan_through_confirm_to_an_answer(harness: BotHarness) -> None:
    plan = await ask_complex(harness)

    reply = await harness.click(ids.PLAN_RUN, button_values(plan)[ids.PLAN_RUN], message=plan)

    assert reply.status == 200
    state = await harness.run_in(TS)
    assert state.interventions[0].status is InterventionStatus.ANSWERED
    assert state.interventions[0].answered_by == ASKER
    assert state.step_results, "the plan ran"
    state = await proceed_through_confirms(harness, TS)
    assert state.status is RunStatus.ANSWERED, state.error

    plan = harness.fake.message(plan.channel, plan.ts)
    assert_no_stale_buttons(plan)
    assert f"Plan approved by <@{ASKER}>" in message_text(plan)
    assert "✅ answered" in message_text(plan)
    for request in state.interventions[1:]:
        decided = await harness.intervention_message(state, request.intervention_id)
        assert_no_stale_buttons(decided)
    answer = await harness.answer_message(state)
    assert has_feedback_buttons(answer)
    assert [m for m in harness.thread(TS) if is_plan_message(m)] == [plan]


async def test_edit_opens_the_modal_and_its_submission_replans(
    harness: BotHarness, fake: FakeSlack
) -> None:
    plan = await ask_complex(harness)
    before = await harness.run_in(TS)

    reply = await harness.click(ids.PLAN_EDIT, button_values(plan)[ids.PLAN_EDIT], message=plan)

    assert reply.status == 200
    opened = fake.calls_to("views.open")
    assert len(opened) == 1 and opened[0].response["ok"] is True
    view = opened[0].params["view"]
    assert view["callback_id"] == ids.MODIFY_MODAL_CALLBACK
    validate_view(View(**view))
    metadata = ids.ModalMetadata.decode(view["private_metadata"])
    assert before.pending is not None
    assert metadata.run_id == before.run_id
    assert metadata.intervention_id == before.pending.intervention_id
    assert metadata.thread_ts == TS
    assert (await harness.run_in(TS)).status is RunStatus.PAUSED, "opening the form decides nothing"

    reply = await harness.submit_modal(view, "Only compare the home office equipment rules")

    assert reply.status == 200
    state = await harness.run_in(TS)
    assert [r.trigger for r in state.replan_history] == [ReplanTrigger.USER_FEEDBACK]
    answer = state.interventions[0].answer
    assert answer is not None and answer.action is InterventionAction.MODIFY
    assert "home office" in (answer.text or "")
    plan = fake.message(plan.channel, plan.ts)
    assert not PLAN_BUTTONS & set(button_values(plan))
    assert f"Plan edited by <@{ASKER}>" in message_text(plan)
    state = await proceed_through_confirms(harness, TS)
    assert state.status is RunStatus.ANSWERED, state.error


async def test_empty_modal_submission_is_refused_in_the_form(harness: BotHarness) -> None:
    plan = await ask_complex(harness)
    await harness.click(ids.PLAN_EDIT, button_values(plan)[ids.PLAN_EDIT], message=plan)
    view = harness.fake.calls_to("views.open")[0].params["view"]

    reply = await harness.submit_modal(view, "   ")

    assert reply.status == 200
    assert reply.json()["response_action"] == "errors"
    assert ids.MODIFY_INPUT_BLOCK in reply.json()["errors"]
    state = await harness.run_in(TS)
    assert state.status is RunStatus.PAUSED and state.replan_history == []


async def test_cancel_stops_the_run_and_the_thread_says_so(harness: BotHarness) -> None:
    plan = await ask_complex(harness)
    value = button_values(plan)[ids.PLAN_CANCEL]

    reply = await harness.click(ids.PLAN_CANCEL, value, message=plan)

    assert reply.status == 200
    state = await harness.run_in(TS)
    assert state.status is RunStatus.CANCELLED
    assert state.step_results == {}
    plan = harness.fake.message(plan.channel, plan.ts)
    assert_no_stale_buttons(plan)
    assert "cancelled" in message_text(plan)
    stopped = [m for m in harness.thread(TS) if "Stopped" in m.text]
    assert len(stopped) == 1
    assert await harness.store.get_message_ref(run_id=state.run_id, kind="answer") is None

    # The old button, clicked again, changes nothing and says why.
    reply = await harness.click(ids.PLAN_RUN, value, message=plan)
    assert reply.status == 200
    assert (await harness.run_in(TS)).status is RunStatus.CANCELLED
    assert any(f"already handled by <@{ASKER}>" in t for t in harness.ephemerals(ASKER))


# --------------------------------------------------------------------------- Confirm pauses


async def approve(harness: BotHarness) -> None:
    plan = await ask_complex(harness)
    await harness.click(ids.PLAN_RUN, button_values(plan)[ids.PLAN_RUN], message=plan)


async def confirm_message(harness: BotHarness) -> StoredMessage:
    state = await harness.run_in(TS)
    assert state.status is RunStatus.PAUSED
    assert state.pending is not None and state.pending.kind is InterventionKind.CONFIRM
    message = await harness.intervention_message(state, state.pending.intervention_id)
    assert message.thread_ts == TS
    assert {ids.CONFIRM_PROCEED, ids.CONFIRM_MODIFY, ids.CONFIRM_CANCEL} <= set(
        button_values(message)
    )
    return message


async def test_confirm_proceed_resumes_the_run(harness: BotHarness) -> None:
    await approve(harness)
    message = await confirm_message(harness)
    paused = await harness.run_in(TS)
    assert paused.pending is not None

    await harness.click(
        ids.CONFIRM_PROCEED, button_values(message)[ids.CONFIRM_PROCEED], message=message
    )

    stored = await harness.store.get_intervention(paused.pending.intervention_id)
    assert stored is not None and stored.answer is not None
    assert stored.answer.action is InterventionAction.PROCEED
    state = await harness.run_in(TS)
    assert state.pending is None or state.pending.intervention_id != stored.intervention_id
    decided = harness.fake.message(message.channel, message.ts)
    assert_no_stale_buttons(decided)
    assert f"<@{ASKER}>" in message_text(decided)
    state = await proceed_through_confirms(harness, TS)
    assert state.status is RunStatus.ANSWERED, state.error


async def test_confirm_modify_replans_with_the_users_words(
    harness: BotHarness, fake: FakeSlack
) -> None:
    await approve(harness)
    message = await confirm_message(harness)

    await harness.click(
        ids.CONFIRM_MODIFY, button_values(message)[ids.CONFIRM_MODIFY], message=message
    )
    view = fake.calls_to("views.open")[-1].params["view"]
    await harness.submit_modal(view, "Look at the remote work stipend instead")

    state = await harness.run_in(TS)
    assert state.replan_history[-1].trigger is ReplanTrigger.USER_FEEDBACK
    assert_no_stale_buttons(fake.message(message.channel, message.ts))
    state = await proceed_through_confirms(harness, TS)
    assert state.status is RunStatus.ANSWERED, state.error


async def test_confirm_cancel_stops_the_run(harness: BotHarness) -> None:
    await approve(harness)
    message = await confirm_message(harness)

    await harness.click(
        ids.CONFIRM_CANCEL, button_values(message)[ids.CONFIRM_CANCEL], message=message
    )

    state = await harness.run_in(TS)
    assert state.status is RunStatus.CANCELLED
    assert_no_stale_buttons(harness.fake.message(message.channel, message.ts))
    assert_no_stale_buttons(await harness.plan_message(state))
    assert any("Stopped" in m.text for m in harness.thread(TS))
