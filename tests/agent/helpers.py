"""Small helpers for driving runs in tests."""

from __future__ import annotations

from agent.orchestrator import Orchestrator
from agent.schemas import (
    InterventionAction,
    InterventionAnswer,
    InterventionKind,
    RunState,
    RunStatus,
)


async def reply(
    orchestrator: Orchestrator,
    state: RunState,
    action: InterventionAction,
    *,
    text: str | None = None,
    option: int | None = None,
    user: str = "U_ASKER",
) -> RunState:
    """Answer the run's pending intervention; fails the test if it was not claimed."""
    assert state.pending is not None, f"run is {state.status.value}, nothing to answer"
    claim = await orchestrator.answer(
        state.run_id,
        state.pending.intervention_id,
        InterventionAnswer(action=action, text=text, option=option, user=user),
    )
    assert claim.claimed, claim.reason
    assert claim.state is not None
    return claim.state


async def proceed_through_confirms(
    orchestrator: Orchestrator, state: RunState, *, limit: int = 5
) -> RunState:
    """Click Proceed on plan approvals and confirmations until the run stops pausing."""
    for _ in range(limit):
        if state.status is not RunStatus.PAUSED:
            return state
        assert state.pending is not None
        assert state.pending.kind in (InterventionKind.PLAN_APPROVAL, InterventionKind.CONFIRM), (
            f"unexpected {state.pending.kind.value} pause: {state.pending.question}"
        )
        state = await reply(orchestrator, state, InterventionAction.PROCEED)
    raise AssertionError(f"still paused after {limit} answers")
