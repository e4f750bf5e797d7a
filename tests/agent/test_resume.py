"""Acceptance 7: pausing and resuming in process — confirmations, clarifications, plan
approval, who may answer, and answering exactly once."""

from __future__ import annotations

import asyncio

import pytest

from agent.orchestrator import Orchestrator
from agent.ports import RunEventType
from agent.schemas import (
    InterventionAction,
    InterventionAnswer,
    InterventionKind,
    InterventionStatus,
    ReplanTrigger,
    RunState,
    RunStatus,
)
from tests.agent.conftest import ASKER, OrchestratorFactory
from tests.agent.doubles import RecordingObserver, ScriptedModel
from tests.agent.helpers import reply

COMPLEX = "Why do multiple teams share an office day and how do I claim the remote work stipend?"
"""Complex (plan approval), and one part's search is weak (a confirmation)."""


async def paused_at_confirm(orchestrator: Orchestrator) -> RunState:
    """The complex question, its plan approved, paused on a step's confirmation."""
    state = await orchestrator.start(COMPLEX, asker=ASKER)
    state = await reply(orchestrator, state, InterventionAction.PROCEED)
    assert state.status is RunStatus.PAUSED
    assert state.pending is not None and state.pending.kind is InterventionKind.CONFIRM
    assert state.pending.options == ["Proceed", "Modify", "Cancel"]
    return state


# ----------------------------------------------------------------- plan approval


async def test_complex_question_waits_for_plan_approval_before_running(
    orchestrator: Orchestrator,
) -> None:
    state = await orchestrator.start(COMPLEX, asker=ASKER)

    assert state.plan is not None and state.plan.requires_confirmation
    assert state.plan.complexity > 0.6
    assert state.status is RunStatus.PAUSED
    assert state.pending is not None
    assert state.pending.kind is InterventionKind.PLAN_APPROVAL
    assert state.pending.expires_at is not None
    assert state.step_results == {}  # nothing ran before approval
    stored = await orchestrator.store.load(state.run_id)
    assert stored is not None and stored.status is RunStatus.PAUSED


async def test_approving_the_plan_runs_it(orchestrator: Orchestrator) -> None:
    state = await orchestrator.start(COMPLEX, asker=ASKER)

    state = await reply(orchestrator, state, InterventionAction.PROCEED)

    assert state.step_results, "the plan did not run"
    approval = state.interventions[0]
    assert approval.kind is InterventionKind.PLAN_APPROVAL
    assert approval.status is InterventionStatus.ANSWERED
    assert approval.answered_by == ASKER
    assert state.status in (RunStatus.PAUSED, RunStatus.ANSWERED)


async def test_cancelling_the_plan_cancels_the_run(make_orchestrator: OrchestratorFactory) -> None:
    observer = RecordingObserver()
    orchestrator = make_orchestrator(observers=[observer])
    state = await orchestrator.start(COMPLEX, asker=ASKER)

    state = await reply(orchestrator, state, InterventionAction.CANCEL)

    assert state.status is RunStatus.CANCELLED
    assert state.error == f"cancelled by {ASKER}"
    assert state.step_results == {}
    assert state.final_answer == ""
    assert observer.events[-1].type is RunEventType.RUN_CANCELLED
    stored = await orchestrator.store.load(state.run_id)
    assert stored is not None and stored.status is RunStatus.CANCELLED


# ----------------------------------------------------------------- confirm


async def test_confirm_then_proceed_continues_to_an_answer(orchestrator: Orchestrator) -> None:
    state = await paused_at_confirm(orchestrator)
    done_before = len(state.step_results)

    state = await reply(orchestrator, state, InterventionAction.PROCEED)

    assert state.status is RunStatus.ANSWERED, state.error
    assert len(state.step_results) > done_before
    assert state.final_answer
    assert "remote-work-policy.md" in {s.source for s in state.sources}


async def test_confirm_then_modify_replans_with_the_users_words(
    spied: Orchestrator, spy: ScriptedModel
) -> None:
    state = await paused_at_confirm(spied)

    state = await reply(
        spied, state, InterventionAction.MODIFY, text="only the 2024 remote work policy"
    )

    assert [r.trigger for r in state.replan_history] == [ReplanTrigger.USER_FEEDBACK]
    assert spy.plan_requests[-1].feedback == "only the 2024 remote work policy"
    answered = state.interventions[1]
    assert answered.answer is not None and answered.answer.action is InterventionAction.MODIFY
    assert answered.status is InterventionStatus.ANSWERED
    assert state.status in (RunStatus.PAUSED, RunStatus.ANSWERED)
    if state.status is RunStatus.PAUSED:  # a new request, not the one just answered
        assert state.pending is not None
        assert state.pending.intervention_id != answered.intervention_id


async def test_confirm_then_cancel_stops_the_run(orchestrator: Orchestrator) -> None:
    state = await paused_at_confirm(orchestrator)
    steps_before = dict(state.step_results)

    state = await reply(orchestrator, state, InterventionAction.CANCEL)

    assert state.status is RunStatus.CANCELLED
    assert state.final_answer == ""
    assert state.step_results.keys() == steps_before.keys()


# ----------------------------------------------------------------- escalate / ask_user


async def test_escalation_answered_with_input_continues_with_the_text(
    spied: Orchestrator, spy: ScriptedModel
) -> None:
    state = await spied.start("Who approves it?", asker=ASKER)
    assert state.pending is not None and state.pending.kind is InterventionKind.ESCALATE
    reasoning_calls = len(spy.reason_requests)

    state = await reply(
        spied, state, InterventionAction.INPUT, text="approval for working from abroad"
    )
    for _ in range(3):  # the new search may still ask for a confirmation
        if state.status is not RunStatus.PAUSED:
            break
        state = await reply(spied, state, InterventionAction.PROCEED)

    assert state.status is RunStatus.ANSWERED, state.error
    assert state.user_inputs == ["approval for working from abroad"]
    assert len(spy.reason_requests) > reasoning_calls
    assert spy.reason_requests[-1].user_inputs == ["approval for working from abroad"]
    assert "People Operations" in state.final_answer


async def test_ask_user_reply_is_a_step_result_and_reaches_the_answer(
    spied: Orchestrator, spy: ScriptedModel
) -> None:
    state = await spied.start("What is the latest version?", asker=ASKER)
    assert state.pending is not None and state.pending.kind is InterventionKind.ASK_USER
    ask_step = state.pending.step_id
    assert ask_step is not None

    state = await reply(spied, state, InterventionAction.INPUT, text="Beacon Mobile")

    assert state.status is RunStatus.ANSWERED, state.error
    assert state.step_results[ask_step].output == "Beacon Mobile"
    assert spy.reason_requests[-1].user_inputs == ["Beacon Mobile"]
    assert "2.7" in state.final_answer


# ----------------------------------------------------------------- who may answer


@pytest.fixture
async def awaiting_approval(
    make_orchestrator: OrchestratorFactory,
) -> tuple[Orchestrator, RunState]:
    """An agent where U_LEAD approves too, and the complex question paused on its plan."""
    orchestrator = make_orchestrator(approvers=["U_LEAD"])
    state = await orchestrator.start(COMPLEX, asker=ASKER)
    assert state.pending is not None
    return orchestrator, state


async def test_an_unauthorised_user_cannot_answer(
    awaiting_approval: tuple[Orchestrator, RunState],
) -> None:
    orchestrator, state = awaiting_approval
    assert state.pending.allowed_responders == [ASKER, "U_LEAD"]
    request_id = state.pending.intervention_id

    for intruder in ("U_STRANGER", None):
        claim = await orchestrator.answer(
            state.run_id,
            request_id,
            InterventionAnswer(action=InterventionAction.CANCEL, user=intruder),
        )
        assert not claim.claimed
        assert claim.reason == (
            "only the person who asked, a configured approver, or an expert the "
            "escalation called may answer"
        )

    stored = await orchestrator.store.load(state.run_id)
    assert stored is not None and stored.status is RunStatus.PAUSED
    assert stored.pending is not None and stored.pending.intervention_id == request_id

    # a configured approver may answer for the asker
    claim = await orchestrator.answer(
        state.run_id,
        request_id,
        InterventionAnswer(action=InterventionAction.PROCEED, user="U_LEAD"),
    )
    assert claim.claimed and claim.answered_by == "U_LEAD"


async def test_a_second_answer_is_refused_and_says_who_answered(
    awaiting_approval: tuple[Orchestrator, RunState],
) -> None:
    orchestrator, state = awaiting_approval
    request_id = state.pending.intervention_id
    state = await reply(orchestrator, state, InterventionAction.PROCEED)

    late = await orchestrator.answer(
        state.run_id,
        request_id,
        InterventionAnswer(action=InterventionAction.CANCEL, user="U_LEAD"),
    )

    assert not late.claimed
    assert late.answered_by == ASKER
    assert late.reason == f"already answered by {ASKER}"
    stored = await orchestrator.store.load(state.run_id)
    assert stored is not None and stored.status is not RunStatus.CANCELLED


async def test_simultaneous_answers_are_claimed_exactly_once(
    awaiting_approval: tuple[Orchestrator, RunState],
) -> None:
    orchestrator, state = awaiting_approval
    request_id = state.pending.intervention_id

    claims = await asyncio.gather(
        orchestrator.answer(
            state.run_id,
            request_id,
            InterventionAnswer(action=InterventionAction.PROCEED, user=ASKER),
        ),
        orchestrator.answer(
            state.run_id,
            request_id,
            InterventionAnswer(action=InterventionAction.CANCEL, user="U_LEAD"),
        ),
    )

    winners = [c for c in claims if c.claimed]
    losers = [c for c in claims if not c.claimed]
    assert len(winners) == 1 and len(losers) == 1
    assert losers[0].answered_by == winners[0].answered_by
    stored = await orchestrator.store.load(state.run_id)
    assert stored is not None
    approval = next(i for i in stored.interventions if i.intervention_id == request_id)
    assert approval.answered_by == winners[0].answered_by
