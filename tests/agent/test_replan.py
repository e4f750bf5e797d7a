"""Acceptance 5: adaptive replanning — every trigger, every strategy, the invalidation
rules, the replan limit and the history."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agent.config import AgentConfig, ExecutionConfig, ReplanConfig
from agent.knowledge.ingest import ingest_paths
from agent.knowledge.qdrant_kb import QdrantKnowledgeBase, open_knowledge_base
from agent.llm.offline import OfflineModel
from agent.orchestrator import Orchestrator
from agent.planner import Planner
from agent.ports import RunEventType
from agent.replan import ReplanManager, normalised, plan_invalidated
from agent.schemas import (
    ActionType,
    ExecutionPlan,
    InterventionAction,
    InterventionKind,
    PlanStep,
    ReplanStrategy,
    ReplanTrigger,
    RunState,
    RunStatus,
    Source,
    StepResult,
    StepStatus,
)
from tests.agent.conftest import ASKER, OrchestratorFactory
from tests.agent.doubles import (
    ControlledKB,
    RecordingObserver,
    ScriptedModel,
    StaticWebSearch,
    draft,
    reasoning,
    search,
)
from tests.agent.helpers import proceed_through_confirms, reply

VACATION = "How many vacation days do new employees get?"
WEB_HIT = Source(
    source="https://intranet.example/hr/vacation",
    text="New employees get 15 days of paid vacation per year.",
    chunk_id="web-1",
    similarity=0.9,
)


def described(plan: ExecutionPlan) -> list[str]:
    return [f"{s.step_id}. {s.action.value}: {s.description}" for s in plan.steps]


# ----------------------------------------------------------------- triggers


async def test_step_failed_with_a_fallback_uses_web_search(
    kb: QdrantKnowledgeBase, make_orchestrator: OrchestratorFactory
) -> None:
    flaky = ControlledKB(kb, fail_times=-1)
    web = StaticWebSearch([WEB_HIT])
    orchestrator = make_orchestrator(knowledge_base=flaky, web_search=web)

    state = await orchestrator.start(VACATION, asker=ASKER)

    assert state.status is RunStatus.ANSWERED, state.error
    first = state.replan_history[0]
    assert first.trigger is ReplanTrigger.STEP_FAILED
    assert first.strategy is ReplanStrategy.FALLBACK
    assert first.failed_step_id == 1
    assert "vector_store" in first.reason
    assert first.old_steps[0].startswith("1. rag_search:")
    assert first.new_steps[0].startswith("1. web_search: [fallback]")
    assert len(flaky.calls) == 1 and flaky.calls[0].failed
    assert web.queries == [VACATION]
    assert state.sources == [WEB_HIT]
    assert "15" in state.final_answer
    assert state.replan_count == 1
    assert state.step_results[1].action is ActionType.WEB_SEARCH
    assert state.step_results[1].used_fallback is ActionType.WEB_SEARCH


async def test_low_confidence_triggers_a_replan(orchestrator: Orchestrator) -> None:
    state = await orchestrator.start("What is the capital of Mongolia?", asker=ASKER)

    first = state.replan_history[0]
    assert first.trigger is ReplanTrigger.LOW_CONFIDENCE
    assert "confidence 0.00" in first.reason
    # the retry searched differently: the bare keywords
    assert first.new_steps[0] == "1. rag_search: Search the knowledge base for: capital mongolia"


async def test_user_feedback_via_modify_replans_with_the_users_words(
    spied: Orchestrator, spy: ScriptedModel
) -> None:
    state = await spied.start(
        "Why do multiple teams share an office day and how do I claim the remote work stipend?",
        asker=ASKER,
    )
    state = await reply(spied, state, InterventionAction.PROCEED)  # run the plan
    assert state.pending is not None and state.pending.kind is InterventionKind.CONFIRM
    confirmed_step = state.pending.step_id
    assert confirmed_step is not None

    state = await reply(spied, state, InterventionAction.MODIFY, text="only the remote work policy")

    record = state.replan_history[0]
    assert record.trigger is ReplanTrigger.USER_FEEDBACK
    assert record.strategy is ReplanStrategy.PARTIAL
    assert record.reason == "the user asked: only the remote work policy"
    assert record.failed_step_id == confirmed_step
    assert spy.plan_requests[-1].feedback == "only the remote work policy"
    assert spy.plan_requests[-1].completed_steps  # the planner knew what was done
    assert state.plan is not None
    assert any("only the remote work policy" in s.query for s in state.plan.steps)
    state = await proceed_through_confirms(spied, state)
    assert state.status is RunStatus.ANSWERED, state.error
    assert "remote-work-policy.md" in {s.source for s in state.sources}


async def test_new_information_in_reply_to_an_escalation_replans_with_it(
    spied: Orchestrator, spy: ScriptedModel
) -> None:
    state = await spied.start("Who approves it?", asker=ASKER)
    assert state.pending is not None and state.pending.kind is InterventionKind.ESCALATE
    automatic = state.replan_count
    # One retry with the bare keywords; another would repeat that search, so it escalated.
    assert automatic == 1
    assert "repeat" in state.pending.reason

    state = await reply(spied, state, InterventionAction.INPUT, text="working from abroad")

    record = state.replan_history[automatic]
    assert record.trigger is ReplanTrigger.NEW_INFORMATION
    assert record.strategy in (ReplanStrategy.PARTIAL, ReplanStrategy.FULL)
    assert spy.plan_requests[-1].feedback == "working from abroad"
    assert state.plan is not None
    # the weak step was the answer, so the replan keeps the searches done and adds one
    assert any("working from abroad" in step.query for step in state.plan.steps)
    state = await proceed_through_confirms(spied, state)
    assert state.status is RunStatus.ANSWERED, state.error
    assert "People Operations" in state.final_answer
    assert "remote-work-policy.md" in {s.source for s in state.sources}
    assert spy.reason_requests[-1].user_inputs == ["working from abroad"]


async def test_a_slow_step_times_out_and_triggers_a_replan(
    kb: QdrantKnowledgeBase, make_orchestrator: OrchestratorFactory
) -> None:
    slow = ControlledKB(kb, delay=5.0, delay_times=1)
    config = AgentConfig(execution=ExecutionConfig(default_step_timeout=0.3))
    orchestrator = make_orchestrator(knowledge_base=slow, config=config)

    started = asyncio.get_running_loop().time()
    state = await orchestrator.start(VACATION, asker=ASKER)
    elapsed = asyncio.get_running_loop().time() - started

    assert elapsed < 3.0, "the slow search was not cut off"
    first = state.replan_history[0]
    assert first.trigger is ReplanTrigger.TIMEOUT
    assert first.strategy is ReplanStrategy.FULL
    assert "timeout: rag_search took longer than 0.3 s" in first.reason
    assert state.status is RunStatus.ANSWERED, state.error
    assert "15" in state.final_answer
    assert len(slow.calls) == 2


# ----------------------------------------------------------------- strategies


async def test_full_replan_when_the_first_third_of_the_plan_fails(
    kb: QdrantKnowledgeBase, make_orchestrator: OrchestratorFactory
) -> None:
    broken = ControlledKB(kb, fail_when=lambda q: q == "broken query")
    model = ScriptedModel(
        [
            draft(
                search(1, "broken query"),
                search(2, "vacation days", depends_on=[1]),
                reasoning(3, [1, 2]),
            ),
            None,  # then the offline planner plans afresh
        ]
    )
    orchestrator = make_orchestrator(llm=model, knowledge_base=broken)

    state = await orchestrator.start(VACATION, asker=ASKER)

    record = state.replan_history[0]
    assert record.trigger is ReplanTrigger.STEP_FAILED
    assert record.strategy is ReplanStrategy.FULL
    assert len(record.old_steps) == 3 and "broken query" in record.old_steps[0]
    assert state.status is RunStatus.ANSWERED, state.error
    assert state.plan is not None
    assert all(s.query != "broken query" for s in state.plan.steps)
    assert model.plan_requests[1].failure is not None
    assert "step 1 failed" in model.plan_requests[1].failure
    assert model.plan_requests[1].completed_steps == []
    assert "15" in state.final_answer


async def test_partial_replan_keeps_completed_steps_and_their_results(
    kb: QdrantKnowledgeBase, make_orchestrator: OrchestratorFactory
) -> None:
    counting = ControlledKB(kb)
    observer = RecordingObserver()
    model = ScriptedModel(
        [draft(search(1, "vacation days new employees"), reasoning(2, [1])), None],
        answers=[""],  # the first answer comes back empty: step 2 fails
    )
    orchestrator = make_orchestrator(llm=model, knowledge_base=counting, observers=[observer])

    state = await orchestrator.start(VACATION, asker=ASKER)

    record = state.replan_history[0]
    assert record.trigger is ReplanTrigger.STEP_FAILED
    assert record.strategy is ReplanStrategy.PARTIAL
    assert record.failed_step_id == 2
    assert state.status is RunStatus.ANSWERED, state.error
    assert state.plan is not None
    kept = state.plan.steps[0]
    assert (kept.step_id, kept.action, kept.query) == (
        1,
        ActionType.RAG_SEARCH,
        "vacation days new employees",
    )
    # the kept search was not run again, and its result is the original one
    assert [c.query for c in counting.calls].count("vacation days new employees") == 1
    assert model.plan_requests[1].completed_steps == [
        "1. rag_search: search: vacation days new employees"
    ]
    final = state.plan.steps[-1]
    assert final.action is ActionType.REASONING and 1 in final.depends_on
    assert state.step_results[1].status is StepStatus.SUCCESS
    assert state.step_results[1].sources
    first_finished = next(
        e for e in observer.events if e.type is RunEventType.STEP_FINISHED and e.step_id == 1
    )
    assert first_finished.message.startswith("step 1 success")
    assert "15" in state.final_answer


async def test_skip_a_failed_search_when_another_search_covers_it(
    kb: QdrantKnowledgeBase, make_orchestrator: OrchestratorFactory
) -> None:
    broken = ControlledKB(kb, fail_when=lambda q: q == "broken query")
    model = ScriptedModel(
        [draft(search(1, "broken query"), search(2, VACATION), reasoning(3, [1, 2]))]
    )
    orchestrator = make_orchestrator(llm=model, knowledge_base=broken)

    state = await orchestrator.start(VACATION, asker=ASKER)

    record = state.replan_history[0]
    assert record.trigger is ReplanTrigger.STEP_FAILED
    assert record.strategy is ReplanStrategy.SKIP
    assert "other sources cover it" in record.reason
    assert len(model.plan_requests) == 1  # skipping needs no new plan
    assert state.status is RunStatus.ANSWERED, state.error
    assert state.step_results[1].status is StepStatus.SKIPPED
    assert state.step_results[1].error is not None
    assert "vector_store" in state.step_results[1].error
    assert state.plan is not None and state.plan.steps[2].depends_on == [2]
    assert "15" in state.final_answer


async def test_abort_when_no_replans_are_allowed(
    kb: QdrantKnowledgeBase, make_orchestrator: OrchestratorFactory
) -> None:
    down = ControlledKB(kb, fail_times=-1)
    config = AgentConfig(replan=ReplanConfig(max_replans=0))
    orchestrator = make_orchestrator(knowledge_base=down, config=config)

    state = await orchestrator.start(VACATION, asker=ASKER)

    assert state.status is RunStatus.FAILED
    assert state.error is not None
    assert state.error.startswith("Gave up: step 1 failed: vector_store:")
    assert "the replan limit (0) is reached" in state.error
    assert state.replan_history == []
    assert state.final_answer == ""


async def test_a_model_that_keeps_producing_failing_plans_ends_after_max_replans(
    make_orchestrator: OrchestratorFactory,
) -> None:
    queries = [VACATION, "vacation days", "paid vacation", "new employee leave"]
    model = ScriptedModel(
        [draft(search(1, q), reasoning(2, [1])) for q in queries],  # a new search each time
        answers=[""] * 50,  # every answer step fails
    )
    observer = RecordingObserver()
    orchestrator = make_orchestrator(llm=model, observers=[observer])

    state = await asyncio.wait_for(orchestrator.start(VACATION, asker=ASKER), timeout=20)

    assert state.status is RunStatus.FAILED
    assert state.replan_count == 3
    assert len(model.plan_requests) == 4  # the first plan and three replans, then stop
    assert state.error is not None
    assert "Gave up" in state.error
    assert "the model returned an empty answer" in state.error
    assert "the replan limit (3) is reached" in state.error
    assert observer.events[-1].type is RunEventType.RUN_FAILED
    assert [e.type for e in observer.events].count(RunEventType.REPLANNED) == 3
    # the history: trigger, strategy, reason, old and new steps, chained plan to plan
    for record in state.replan_history:
        assert record.trigger is ReplanTrigger.STEP_FAILED
        assert record.strategy in (ReplanStrategy.PARTIAL, ReplanStrategy.FULL)
        assert "failed" in record.reason
        assert record.old_steps and record.new_steps
    for before, after in zip(state.replan_history, state.replan_history[1:], strict=False):
        assert after.old_steps == before.new_steps
    assert state.plan is not None
    assert state.replan_history[-1].new_steps == described(state.plan)
    assert any("plan invalidated" in r.reason for r in state.replan_history)


# ----------------------------------------------------------------- invalidation rules


def _manager() -> ReplanManager:
    return ReplanManager(Planner(OfflineModel(), ExecutionConfig()), ReplanConfig())


def _state(*results: StepResult, failures: int = 0, consecutive: int = 0) -> RunState:
    steps = [
        PlanStep(
            step_id=i,
            action=ActionType.RAG_SEARCH,
            description=f"search {i}",
            query="q",
            fallback=ActionType.WEB_SEARCH,
        )
        for i in range(1, 5)
    ]
    plan = ExecutionPlan(original_query="q", complexity=0.3, estimated_steps=4, steps=steps)
    return RunState(
        query="q",
        plan=plan,
        step_results={r.step_id: r for r in results},
        failure_count=failures,
        consecutive_failures=consecutive,
    )


def _result(step_id: int, confidence: float, status: StepStatus = StepStatus.SUCCESS) -> StepResult:
    return StepResult(
        step_id=step_id, action=ActionType.RAG_SEARCH, status=status, confidence=confidence
    )


def test_two_consecutive_failures_invalidate_the_plan() -> None:
    failed = [_result(1, 0.0, StepStatus.FAILED), _result(2, 0.0, StepStatus.FAILED)]
    state = _state(*failed, failures=2, consecutive=2)
    assert plan_invalidated(state, 0.4) == "two consecutive step failures"
    decision = _manager().decide(state, ReplanTrigger.STEP_FAILED, 2, "step 2 failed")
    # a fallback exists, but the plan as a whole is no longer trusted
    assert decision.strategy is ReplanStrategy.FULL
    assert "plan invalidated: two consecutive step failures" in decision.reason


def test_three_failures_in_total_invalidate_the_plan() -> None:
    state = _state(_result(1, 0.9), _result(2, 0.0, StepStatus.FAILED), failures=3, consecutive=1)
    assert plan_invalidated(state, 0.4) == "three step failures in this run"
    decision = _manager().decide(state, ReplanTrigger.STEP_FAILED, 2, "step 2 failed")
    assert decision.strategy is ReplanStrategy.FULL


def test_last_two_weak_steps_invalidate_the_plan() -> None:
    state = _state(_result(1, 0.9), _result(2, 0.3), _result(3, 0.39))
    assert plan_invalidated(state, 0.4) == (
        "the last two steps both scored below the low-confidence threshold"
    )
    decision = _manager().decide(state, ReplanTrigger.LOW_CONFIDENCE, 3, "weak")
    assert decision.strategy is ReplanStrategy.FULL


@pytest.mark.parametrize(
    "results",
    [
        (_result(1, 0.3), _result(2, 0.9)),  # only one of the last two is weak
        (_result(1, 0.3), _result(2, 0.4)),  # 0.4 is not below 0.4
        (_result(1, 0.3),),  # one step is not two
        (_result(1, 0.3), _result(2, 0.0, StepStatus.SKIPPED), _result(3, 0.9)),
    ],
)
def test_plans_that_are_still_valid(results: tuple[StepResult, ...]) -> None:
    state = _state(*results, failures=1, consecutive=1)
    assert plan_invalidated(state, 0.4) is None
    decision = _manager().decide(state, ReplanTrigger.STEP_FAILED, 1, "step 1 failed")
    assert decision.strategy is ReplanStrategy.FALLBACK


def test_a_weak_answer_from_passages_found_keeps_them_for_the_next_search() -> None:
    plan = ExecutionPlan(
        original_query="q",
        complexity=0.3,
        estimated_steps=2,
        steps=[
            PlanStep(step_id=1, action=ActionType.RAG_SEARCH, description="search", query="q"),
            PlanStep(step_id=2, action=ActionType.REASONING, description="answer", depends_on=[1]),
        ],
    )
    found = Source(source="a.md", text="Something near the question.", chunk_id="a-1")
    state = RunState(
        query="q",
        plan=plan,
        step_results={
            1: StepResult(
                step_id=1,
                action=ActionType.RAG_SEARCH,
                status=StepStatus.SUCCESS,
                confidence=0.2,
                sources=[found],
            ),
            2: StepResult(
                step_id=2, action=ActionType.REASONING, status=StepStatus.SUCCESS, confidence=0.1
            ),
        },
    )
    manager = _manager()

    decision = manager.decide(state, ReplanTrigger.LOW_CONFIDENCE, 2, "weak answer")

    assert decision.strategy is ReplanStrategy.PARTIAL
    assert "plan invalidated" in decision.reason
    assert "the passages found are kept" in decision.reason
    # with nothing found, the plan is replaced as before
    state.step_results[1] = state.step_results[1].model_copy(update={"sources": []})
    assert manager.decide(state, ReplanTrigger.LOW_CONFIDENCE, 2, "weak").strategy is (
        ReplanStrategy.FULL
    )


async def test_two_failing_searches_in_one_wave_invalidate_the_plan_in_a_run(
    kb: QdrantKnowledgeBase, make_orchestrator: OrchestratorFactory
) -> None:
    broken = ControlledKB(kb, fail_when=lambda q: q.startswith("broken"))
    model = ScriptedModel(
        [
            draft(
                search(1, "broken one", fallback="web_search"),
                search(2, "broken two", fallback="web_search"),
                reasoning(3, [1, 2]),
            ),
            None,
        ]
    )
    orchestrator = make_orchestrator(llm=model, knowledge_base=broken)

    state = await orchestrator.start(VACATION, asker=ASKER)

    record = state.replan_history[0]
    assert record.strategy is ReplanStrategy.FULL
    assert "plan invalidated: two consecutive step failures" in record.reason
    assert state.status is RunStatus.ANSWERED, state.error
    assert "15" in state.final_answer


async def test_a_plans_only_search_is_judged_by_its_answer_not_replanned_first(
    make_orchestrator: OrchestratorFactory, tmp_path: Path
) -> None:
    """A weak search score (the asker's words are not the handbook's) is no reason to
    search again before an answer is drawn: the answer's own confidence decides."""
    (tmp_path / "access.md").write_text(
        "# Access control policy\n\n## Offboarding\n\n"
        "In the case of a separation from the company, access to core communication and "
        "production systems will be removed within 48 hours of the offboarding request.\n",
        encoding="utf-8",
    )
    kb = open_knowledge_base(path=None, url=None)
    try:
        await ingest_paths(kb, [tmp_path])
        orchestrator = make_orchestrator(knowledge_base=kb)
        state = await orchestrator.start(
            "when someone leaves, how fast is their access to core systems cut off?",
            asker=ASKER,
        )
        search_step = state.step_results[1]
        assert search_step.action is ActionType.RAG_SEARCH
        assert search_step.confidence < 0.4  # weak on its own…
        assert state.replan_history == []  # …yet not searched again
        assert state.status is RunStatus.ANSWERED
        assert "48 hours" in state.final_answer
    finally:
        await kb.close()


# ----------------------------------------------------------------- no repeated searches


async def test_weak_searches_are_not_repeated_the_run_escalates_instead(
    kb: QdrantKnowledgeBase, make_orchestrator: OrchestratorFactory
) -> None:
    counting = ControlledKB(kb)
    observer = RecordingObserver()
    orchestrator = make_orchestrator(knowledge_base=counting, observers=[observer])

    state = await orchestrator.start("Who looks after the zebra enclosure?", asker=ASKER)

    assert state.status is RunStatus.PAUSED
    assert state.pending is not None and state.pending.kind is InterventionKind.ESCALATE
    assert "would only repeat searches already run" in state.pending.reason
    searched = [normalised(c.query) for c in counting.calls]
    # the question, then what it is about, then its bare keywords: each search new
    assert searched == [
        "who looks after the zebra enclosure",
        "zebra enclosure",
        "look zebra enclosure",
    ]
    assert state.replan_count == 2  # the counter counts replans that ran something new
    assert [e.type for e in observer.events].count(RunEventType.REPLANNED) == 2
    assert state.replan_history[0].searched  # the searches run so far are remembered


async def test_a_planner_repeating_a_search_in_other_words_has_no_new_plan(
    kb: QdrantKnowledgeBase, make_orchestrator: OrchestratorFactory
) -> None:
    counting = ControlledKB(kb)
    model = ScriptedModel(
        [
            draft(search(1, "zebra enclosure keeper"), reasoning(2, [1])),
            draft(search(1, "  Zebra, enclosure KEEPER? "), reasoning(2, [1])),
        ]
    )
    orchestrator = make_orchestrator(llm=model, knowledge_base=counting)

    state = await orchestrator.start("Who looks after the zebra enclosure?", asker=ASKER)

    assert len(model.plan_requests) == 2  # the planner was asked, but offered nothing new
    assert [c.query for c in counting.calls] == ["zebra enclosure keeper"]
    assert state.replan_count == 0
    assert state.pending is not None and state.pending.kind is InterventionKind.ESCALATE
    assert "would only repeat searches already run" in state.pending.reason


async def test_a_replan_drops_its_repeated_search_and_runs_the_new_one(
    kb: QdrantKnowledgeBase, make_orchestrator: OrchestratorFactory
) -> None:
    counting = ControlledKB(kb)
    model = ScriptedModel(
        [
            draft(search(1, "zebra enclosure keeper"), reasoning(2, [1])),
            draft(
                search(1, "Zebra enclosure keeper."),
                search(2, "vacation days new employees"),
                reasoning(3, [1, 2]),
            ),
        ]
    )
    orchestrator = make_orchestrator(llm=model, knowledge_base=counting)

    state = await orchestrator.start(VACATION, asker=ASKER)

    assert [c.query for c in counting.calls] == [
        "zebra enclosure keeper",
        "vacation days new employees",
    ]
    assert state.replan_count == 1
    assert state.plan is not None
    assert [(s.step_id, s.action, s.depends_on) for s in state.plan.steps] == [
        (1, ActionType.RAG_SEARCH, []),
        (2, ActionType.REASONING, [1]),
    ]
    assert (
        state.replan_history[0].new_steps[0] == "1. rag_search: search: vacation days new employees"
    )
