"""Who may answer a pause, on the real agent: an escalation lets the members of the
expert groups the run's policy names answer (the caller vouches for membership with
`member_of`); a group vouches for nothing on a pause that does not call it."""

from __future__ import annotations

from agent.orchestrator import Orchestrator
from agent.policy import RunPolicy
from agent.schemas import (
    InterventionAction,
    InterventionAnswer,
    InterventionKind,
    InterventionRequest,
    RunStatus,
)
from tests.agent.conftest import ASKER

GROUP = "S0DEVOPS001"
MEMBER = "U0GROUPMEM1"


def _answer(member_of: list[str]) -> InterventionAnswer:
    return InterventionAnswer(
        action=InterventionAction.INPUT,
        text="It is Ulaanbaatar, according to our travel guide.",
        user=MEMBER,
        member_of=member_of,
    )


async def _paused(
    orchestrator: Orchestrator, question: str, kind: InterventionKind
) -> InterventionRequest:
    """A run asked where `GROUP` are the experts, paused on a `kind` question."""
    state = await orchestrator.start(question, asker=ASKER, policy=RunPolicy(experts=[GROUP]))
    assert state.pending is not None and state.pending.kind is kind
    return state.pending


async def test_a_member_of_the_called_group_may_answer_an_escalation(
    orchestrator: Orchestrator,
) -> None:
    request = await _paused(
        orchestrator, "What is the capital of Mongolia?", InterventionKind.ESCALATE
    )
    assert request.allowed_groups == [GROUP]
    run_id, pending = request.run_id, request.intervention_id

    for vouched in ([], ["S0OTHER0001"]):
        refused = await orchestrator.answer(run_id, pending, _answer(vouched))
        assert not refused.claimed and "expert" in refused.reason

    claim = await orchestrator.answer(run_id, pending, _answer([GROUP]))
    assert claim.claimed
    final = await orchestrator.store.load(run_id)
    assert final is not None and final.status is RunStatus.ANSWERED, final and final.error


async def test_a_group_vouches_for_nothing_on_a_pause_that_does_not_call_it(
    orchestrator: Orchestrator,
) -> None:
    request = await _paused(orchestrator, "What is the latest version?", InterventionKind.ASK_USER)
    assert request.allowed_groups == []
    claim = await orchestrator.answer(request.run_id, request.intervention_id, _answer([GROUP]))
    assert not claim.claimed
