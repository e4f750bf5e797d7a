"""Acceptance 6: independent steps run at the same time; dependent steps wait."""

from __future__ import annotations

from agent.executor import ready_steps, skip_blocked
from agent.knowledge.qdrant_kb import QdrantKnowledgeBase
from agent.ports import RunEventType
from agent.schemas import (
    ActionType,
    ExecutionPlan,
    PlanStep,
    RunState,
    RunStatus,
    StepResult,
    StepStatus,
)
from tests.agent.conftest import ASKER, OrchestratorFactory
from tests.agent.doubles import (
    ControlledKB,
    RecordingObserver,
    ScriptedModel,
    draft,
    reasoning,
    search,
)


async def test_independent_steps_overlap_and_dependent_steps_wait(
    kb: QdrantKnowledgeBase, make_orchestrator: OrchestratorFactory
) -> None:
    # Searches 1 and 2 each wait until two searches have started: run one after the
    # other, the first would wait for the barrier's 2 s timeout and break it.
    gate = ControlledKB(kb, barrier=2, barrier_timeout=2.0, delay=0.05, delay_times=3)
    observer = RecordingObserver()
    model = ScriptedModel(
        [
            draft(
                search(1, "vacation days new employees"),
                search(2, "sick days"),
                search(3, "carried over vacation days", depends_on=[1]),
                reasoning(4, [1, 2, 3]),
            )
        ]
    )
    orchestrator = make_orchestrator(llm=model, knowledge_base=gate, observers=[observer])

    state = await orchestrator.start("How many vacation days do new employees get?", asker=ASKER)

    assert state.status is RunStatus.ANSWERED, state.error
    assert not gate.barrier_broken, "steps 1 and 2 did not run at the same time"
    first, second, third = gate.calls
    assert {first.query, second.query} == {"vacation days new employees", "sick days"}
    # both started before either finished
    assert first.started < second.ended and second.started < first.ended
    assert max(first.started, second.started) < min(first.ended, second.ended)
    # step 3 depends on step 1: it started only after step 1 finished
    assert third.query == "carried over vacation days"
    step_1 = first if first.query == "vacation days new employees" else second
    assert third.started >= step_1.ended
    waves = [e.data["step_ids"] for e in observer.events if e.type is RunEventType.STEP_STARTED]
    assert waves == [[1, 2], [3], [4]]
    # the answer step saw the passages of all three searches
    passages = {p.chunk_id for p in model.reason_requests[-1].passages}
    for step_id in (1, 2, 3):
        assert {s.chunk_id for s in state.step_results[step_id].sources} <= passages


def _plan() -> ExecutionPlan:
    steps = [
        PlanStep(step_id=1, action=ActionType.RAG_SEARCH, description="a", query="a"),
        PlanStep(step_id=2, action=ActionType.RAG_SEARCH, description="b", query="b"),
        PlanStep(step_id=3, action=ActionType.REASONING, description="c", depends_on=[1]),
        PlanStep(step_id=4, action=ActionType.REASONING, description="d", depends_on=[2, 3]),
    ]
    return ExecutionPlan(original_query="q", complexity=0.3, estimated_steps=4, steps=steps)


def _done(step_id: int, status: StepStatus) -> StepResult:
    return StepResult(step_id=step_id, action=ActionType.RAG_SEARCH, status=status)


def test_ready_steps_are_those_whose_dependencies_all_succeeded() -> None:
    state = RunState(query="q", plan=_plan())
    assert [s.step_id for s in ready_steps(state)] == [1, 2]
    state.step_results[1] = _done(1, StepStatus.SUCCESS)
    state.step_results[2] = _done(2, StepStatus.RUNNING)
    assert [s.step_id for s in ready_steps(state)] == [3]
    state.step_results[3] = _done(3, StepStatus.SUCCESS)
    assert ready_steps(state) == []  # step 4 waits for the running step 2
    state.step_results[2] = _done(2, StepStatus.PARTIAL)
    assert [s.step_id for s in ready_steps(state)] == [4]


def test_a_step_whose_dependency_failed_is_skipped_transitively() -> None:
    state = RunState(query="q", plan=_plan())
    state.step_results[1] = _done(1, StepStatus.FAILED)
    state.step_results[2] = _done(2, StepStatus.SUCCESS)

    skipped = skip_blocked(state)

    assert [r.step_id for r in skipped] == [3, 4]
    assert state.step_results[3].status is StepStatus.SKIPPED
    assert state.step_results[3].error == "skipped: step 1 did not succeed"
    assert state.step_results[4].error == "skipped: step 3 did not succeed"
    assert ready_steps(state) == []
