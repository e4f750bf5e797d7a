"""The plan message: status per step, replans, approval buttons, limits."""

from __future__ import annotations

from agent.schemas import (
    InterventionAction,
    InterventionAnswer,
    InterventionKind,
    InterventionStatus,
    RunStatus,
)
from blocks import ids
from blocks.ids import ButtonValue
from blocks.plan import fallback_text, plan_message
from tests.blocks import samples
from tests.blocks.samples import actions_of, all_text, assert_valid


def test_plan_message_shows_steps_with_status_and_confidence() -> None:
    state = samples.state(n_steps=6)
    payload = assert_valid(plan_message(state))
    text = all_text(payload)
    for emoji in ("✅", "⚠️", "❌", "⏭️", "🔄", "⏳"):
        assert emoji in text
    assert "*0.82* 🟡 notify" in text
    assert "complexity 0.72" in text
    assert "Replanned 1×" in text and "step 3 timed out" in text
    assert "running" in text
    assert "&lt;!channel&gt;" in text  # the failed step's error, escaped
    assert "<!channel>" not in text


def test_plan_message_has_no_buttons_without_pending_approval() -> None:
    payload = assert_valid(plan_message(samples.state()))
    assert actions_of(payload) == []


def test_plan_message_offers_run_edit_cancel_for_pending_approval() -> None:
    state = samples.state(pending=samples.plan_approval("x"), status=RunStatus.PAUSED)
    payload = assert_valid(plan_message(state))
    assert actions_of(payload) == [ids.PLAN_RUN, ids.PLAN_EDIT, ids.PLAN_CANCEL]
    button = next(d for d in samples.walk(payload) if d.get("action_id") == ids.PLAN_RUN)
    value = ButtonValue.decode(button["value"])
    assert value.run_id == state.run_id
    assert state.pending is not None
    assert value.intervention_id == state.pending.intervention_id


def test_plan_message_has_no_buttons_for_other_pauses() -> None:
    pending = samples.confirm_request("x")
    state = samples.state(pending=pending, status=RunStatus.PAUSED)
    payload = assert_valid(plan_message(state))
    assert actions_of(payload) == []
    assert "Waiting for an answer" in all_text(payload)


def test_plan_message_has_no_buttons_once_approval_answered() -> None:
    state = samples.state(pending=samples.plan_approval("x"))
    assert state.pending is not None
    answered = state.pending.model_copy(
        update={
            "status": InterventionStatus.ANSWERED,
            "answered_by": "U0APPROVER",
            "answer": InterventionAnswer(action=InterventionAction.PROCEED, user="U0APPROVER"),
        }
    )
    state.pending = None
    state.interventions = [answered]
    payload = assert_valid(plan_message(state))
    assert actions_of(payload) == []
    assert "Plan approved by <@U0APPROVER>" in all_text(payload)


def test_plan_message_while_planning() -> None:
    state = samples.state(n_steps=0, status=RunStatus.PLANNING)
    payload = assert_valid(plan_message(state))
    assert "Planning" in all_text(payload)


def test_long_plan_stays_within_limits() -> None:
    state = samples.state(n_steps=20, description_chars=500)
    payload = assert_valid(plan_message(state))
    text = all_text(payload)
    assert "*20.*" in text  # 20 steps of 500 chars fit in a handful of sections
    assert len(payload) < 15


def test_huge_plan_summarises_overflow() -> None:
    state = samples.state(n_steps=400, description_chars=500)
    state.pending = samples.plan_approval(state.run_id)
    payload = assert_valid(plan_message(state))
    assert len(payload) == 50
    text = all_text(payload)
    assert "more steps_" in text
    shown = sum(1 for i in range(1, 401) if f"*{i}.*" in text)
    more = int(text.split("_…and ")[1].split(" ")[0])
    assert shown + more == 400
    assert actions_of(payload) == [ids.PLAN_RUN, ids.PLAN_EDIT, ids.PLAN_CANCEL]


def test_huge_question_is_truncated() -> None:
    state = samples.state(query="why " * 10_000)
    payload = assert_valid(plan_message(state))
    assert payload[0]["type"] == "header"
    assert len(fallback_text(state)) < 400


def test_failed_run_shows_error() -> None:
    state = samples.state(status=RunStatus.FAILED)
    state.error = "planning failed: no steps"
    payload = assert_valid(plan_message(state))
    assert "planning failed" in all_text(payload)


def test_fallback_text_mentions_question_progress_and_approval() -> None:
    state = samples.state(n_steps=6, pending=samples.plan_approval("x"))
    assert state.pending is not None and state.pending.kind is InterventionKind.PLAN_APPROVAL
    text = fallback_text(state)
    assert "vacation days" in text
    assert "(4/6 steps done)" in text
    assert "needs approval" in text
