"""The plan message: status per step, replans, approval buttons, limits."""

from __future__ import annotations

from agent.schemas import (
    ActionType,
    InterventionAction,
    InterventionAnswer,
    InterventionKind,
    InterventionLevel,
    InterventionStatus,
    RunStatus,
    StepResult,
    StepStatus,
)
from blocks import ids
from blocks.ids import ButtonValue
from blocks.plan import fallback_text, outcome_text, plan_message
from blocks.status import run_detail_blocks
from tests import samples
from tests.blocks.payloads import actions_of, all_text, assert_valid, walk


def test_plan_message_shows_steps_with_status_and_confidence() -> None:
    state = samples.state(n_steps=6)
    state.step_results[1].sources = samples.sources(2)
    payload = assert_valid(plan_message(state))
    text = all_text(payload)
    for emoji in ("✅", "⚠️", "❌", "⏭️", "🔄", "⏳"):
        assert emoji in text
    # Plain words: no scores, levels or action names on the plan message.
    for technical in ("0.82", "notify", "complexity", "`rag_search`"):
        assert technical not in text, technical
    assert "I changed the plan once" in text and "/grace status run123" in text
    assert "run `run123`" in text  # the short run id
    assert "running" in text and "4 of 6 steps done" in text
    assert "found 2 passages in *doc-0.md*" in text
    assert "did not work" in text and "skipped" in text
    assert "<!channel>" not in text  # the failed step's error is in Details, escaped
    detail = all_text(assert_valid(run_detail_blocks(state)))
    assert "&lt;!channel&gt;" in detail and "<!channel>" not in detail


def test_plan_message_has_no_buttons_without_pending_approval() -> None:
    payload = assert_valid(plan_message(samples.state()))
    assert actions_of(payload) == []


def test_plan_message_offers_run_edit_cancel_for_pending_approval() -> None:
    state = samples.state(pending=samples.plan_approval("x"), status=RunStatus.PAUSED)
    payload = assert_valid(plan_message(state))
    assert actions_of(payload) == [ids.PLAN_RUN, ids.PLAN_EDIT, ids.PLAN_CANCEL]
    button = next(d for d in walk(payload) if d.get("action_id") == ids.PLAN_RUN)
    value = ButtonValue.decode(button["value"])
    assert value.run_id == state.run_id
    assert state.pending is not None
    assert value.intervention_id == state.pending.intervention_id


def test_plan_message_has_no_buttons_for_other_pauses() -> None:
    pending = samples.confirm_request("x")
    state = samples.state(pending=pending, status=RunStatus.PAUSED)
    payload = assert_valid(plan_message(state))
    assert actions_of(payload) == []
    assert "Waiting for you to check step 2 (below)" in all_text(payload)
    assert "weak evidence" not in all_text(payload)


def test_a_search_that_found_nothing_is_not_a_success() -> None:
    state = samples.state(n_steps=1)
    result = state.step_results[1]
    result.sources = []
    result.confidence = 0.0
    result.level = InterventionLevel.ESCALATE
    text = all_text(assert_valid(plan_message(state)))
    assert "⚠️ *1.*" in text and "found nothing" in text
    assert "✅" not in text and "escalate" not in text and "0.00" not in text


def test_a_cancelled_run_mentions_who_cancelled_it() -> None:
    state = samples.state(status=RunStatus.CANCELLED)
    state.error = "cancelled by U0CAROL1"
    text = all_text(assert_valid(plan_message(state)))
    assert "🛑 cancelled by <@U0CAROL1>" in text
    state.error = "cancelled by <@U0CAROL1>"  # /grace cancel words it as a mention already
    assert "🛑 cancelled by <@U0CAROL1>" in all_text(assert_valid(plan_message(state)))


def test_after_a_clarification_the_plan_shows_the_clarified_search() -> None:
    state = samples.state(n_steps=2, query="What is the latest version?")
    assert state.plan is not None
    ask, search = state.plan.steps
    state.plan.steps[0] = ask.model_copy(
        update={"action": ActionType.ASK_USER, "description": "Ask which product"}
    )
    state.plan.steps[1] = search.model_copy(
        update={
            "action": ActionType.RAG_SEARCH,
            "description": "Search the knowledge base for: What is the latest version?",
        }
    )
    state.step_results = {
        1: StepResult(
            step_id=1, action=ActionType.ASK_USER, status=StepStatus.SUCCESS, output="GRACE Cloud"
        )
    }
    state.user_inputs = ["GRACE Cloud"]
    text = all_text(assert_valid(plan_message(state)))
    assert "you answered “GRACE Cloud”" in text
    assert "What is the latest version? (with your answer “GRACE Cloud”)" in text


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


def test_a_stopped_run_says_who_stopped_it_and_its_short_id() -> None:
    state = samples.state(status=RunStatus.CANCELLED)
    state.error = "cancelled by U0CAROL1"
    text = outcome_text(state)
    assert text.startswith("🛑 Stopped: cancelled by <@U0CAROL1>")
    assert "run `run123` · `/grace retry run123` asks again" in text
    state.status = RunStatus.FAILED
    state.error = "LLM quota <exceeded>"
    assert outcome_text(state).startswith("❌ I could not answer this: LLM quota &lt;exceeded&gt;")
