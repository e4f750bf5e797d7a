"""The planner never trusts a model's plan: `repair_plan` fixes what it can and refuses
what it cannot with a clear `PlanningError` (SPEC §2.2)."""

from __future__ import annotations

import pytest

from agent.config import ExecutionConfig
from agent.errors import PlanningError
from agent.planner import Planner, parse_action, repair_plan
from agent.ports import PlanRequest
from agent.schemas import ActionType, ExecutionPlan, PlanDraft, PlanDraftStep, RunStatus
from tests.agent.conftest import OrchestratorFactory
from tests.agent.doubles import ScriptedModel

COLLECTIONS = ["grace_docs", "engineering"]
QUERY = "How many vacation days do new employees get?"


def step(
    step_id: int,
    action: str,
    *,
    depends_on: list[int] | None = None,
    collection: str | None = None,
    fallback: str | None = None,
    query: str = "",
) -> PlanDraftStep:
    return PlanDraftStep(
        step_id=step_id,
        action=action,
        description=f"{action} {step_id}",
        query=query,
        collection=collection,
        depends_on=depends_on or [],
        fallback=fallback,
    )


def repair(
    *steps: PlanDraftStep, complexity: float = 0.3, config: ExecutionConfig | None = None
) -> tuple[ExecutionPlan, list[str]]:
    return repair_plan(
        PlanDraft(complexity=complexity, steps=list(steps)),
        query=QUERY,
        collections=COLLECTIONS,
        default_collection="grace_docs",
        config=config or ExecutionConfig(),
    )


def assert_valid(plan: ExecutionPlan) -> None:
    ids = [s.step_id for s in plan.steps]
    assert ids == list(range(1, len(ids) + 1))
    for s in plan.steps:
        assert all(d < s.step_id for d in s.depends_on)
    assert plan.steps[-1].action is ActionType.REASONING
    assert plan.estimated_steps == len(plan.steps)


def test_a_good_plan_is_kept_as_it_is() -> None:
    plan, repairs = repair(
        step(1, "rag_search", collection="engineering", fallback="web_search", query="vacation"),
        step(2, "reasoning", depends_on=[1]),
    )
    assert repairs == []
    assert_valid(plan)
    first = plan.steps[0]
    assert (first.action, first.collection, first.fallback, first.query) == (
        ActionType.RAG_SEARCH,
        "engineering",
        ActionType.WEB_SEARCH,
        "vacation",
    )
    assert plan.steps[1].depends_on == [1]
    assert plan.steps[1].collection is None
    assert plan.original_query == QUERY


def test_duplicate_ids_are_renumbered() -> None:
    plan, repairs = repair(
        step(1, "rag_search"),
        step(1, "rag_search"),
        step(2, "reasoning", depends_on=[1]),
    )
    assert "duplicate step id 1 renumbered" in repairs
    assert_valid(plan)
    assert [s.action for s in plan.steps] == [
        ActionType.RAG_SEARCH,
        ActionType.RAG_SEARCH,
        ActionType.REASONING,
    ]


def test_forward_and_dangling_dependencies_are_dropped() -> None:
    plan, repairs = repair(
        step(1, "rag_search", depends_on=[2]),
        step(2, "reasoning", depends_on=[1, 9]),
    )
    assert "step 1: dropped dependency on 2" in repairs
    assert "step 2: dropped dependency on 9" in repairs
    assert plan.steps[0].depends_on == []
    assert plan.steps[1].depends_on == [1]
    assert_valid(plan)


def test_ids_are_remapped_when_a_step_is_dropped() -> None:
    plan, repairs = repair(
        step(10, "rag_search"),
        step(20, "telepathy"),
        step(30, "web", depends_on=[10]),
        step(40, "answer", depends_on=[10, 20, 30]),
    )
    assert "dropped step 20: unknown action 'telepathy'" in repairs
    assert [s.action for s in plan.steps] == [
        ActionType.RAG_SEARCH,
        ActionType.WEB_SEARCH,
        ActionType.REASONING,
    ]
    assert plan.steps[1].depends_on == [1]
    assert plan.steps[2].depends_on == [1, 2]
    assert_valid(plan)


def test_action_aliases_are_understood() -> None:
    assert parse_action(" Knowledge-Search ") is ActionType.RAG_SEARCH
    assert parse_action("clarify") is ActionType.ASK_USER
    assert parse_action("synthesize") is ActionType.REASONING
    assert parse_action("dance") is None
    assert parse_action(None) is None


def test_unknown_collections_fall_back_to_the_default() -> None:
    plan, repairs = repair(
        step(1, "rag_search", collection="hr_secret"),
        step(2, "rag_search"),
        step(3, "reasoning", depends_on=[1, 2], collection="engineering"),
    )
    assert "step 1: unknown collection 'hr_secret' → 'grace_docs'" in repairs
    assert plan.steps[0].collection == "grace_docs"
    assert plan.steps[1].collection == "grace_docs"  # none given: the default, silently
    assert plan.steps[2].collection is None  # only searches have a collection


def test_bad_fallbacks_are_dropped() -> None:
    plan, repairs = repair(
        step(1, "rag_search", fallback="carrier_pigeon"),
        step(2, "web_search", fallback="web_search"),
        step(3, "rag_search", fallback="ask_user"),
        step(4, "reasoning", depends_on=[1, 2, 3]),
    )
    assert "step 1: dropped unknown fallback 'carrier_pigeon'" in repairs
    assert [s.fallback for s in plan.steps] == [None, None, None, None]


def test_ask_user_options_are_kept_distinct_and_bounded_and_only_on_ask_user() -> None:
    ask = step(1, "ask_user", query="Which product?")
    ask.options = [" Beacon Server ", "Beacon Server", "", *(f"Product {i}" for i in range(20))]
    search = step(2, "rag_search", depends_on=[1])
    search.options = ["not a question"]
    plan, _ = repair(ask, search, step(3, "reasoning", depends_on=[2]))

    assert plan.steps[0].options == ["Beacon Server", *(f"Product {i}" for i in range(9))]
    assert plan.steps[1].options == []


def test_a_plan_without_usable_steps_is_a_planning_error() -> None:
    with pytest.raises(PlanningError) as caught:
        repair(step(1, "telepathy"), step(2, "dance"))
    assert "no usable steps" in str(caught.value)
    assert "2 proposed" in str(caught.value)

    with pytest.raises(PlanningError):
        repair()


def test_a_final_reasoning_step_is_appended() -> None:
    plan, repairs = repair(step(1, "rag_search"), step(2, "web_search"))
    assert "appended a final reasoning step to produce the answer" in repairs
    final = plan.steps[-1]
    assert final.action is ActionType.REASONING
    assert final.depends_on == [1, 2]
    assert_valid(plan)


def test_a_search_is_inserted_when_nothing_gathers_information() -> None:
    plan, repairs = repair(step(1, "reasoning"))
    assert "inserted a knowledge-base search as the first step" in repairs
    assert [s.action for s in plan.steps] == [ActionType.RAG_SEARCH, ActionType.REASONING]
    assert plan.steps[0].query == QUERY
    assert plan.steps[0].collection == "grace_docs"
    assert plan.steps[1].depends_on == [1]
    assert_valid(plan)


def test_reasoning_without_dependencies_depends_on_the_searches() -> None:
    plan, repairs = repair(step(1, "rag_search"), step(2, "rag_search"), step(3, "reasoning"))
    assert "step 3: reasoning now depends on the earlier steps" in repairs
    assert plan.steps[2].depends_on == [1, 2]


def test_too_many_steps_are_trimmed_and_still_end_in_an_answer() -> None:
    config = ExecutionConfig(max_steps=4)
    plan, repairs = repair(*(step(i, "rag_search") for i in range(1, 9)), config=config)
    assert "trimmed the plan from 8 to 4 steps" in repairs
    assert len(plan.steps) == 4
    assert_valid(plan)


def test_search_steps_get_the_question_when_they_have_no_query() -> None:
    plan, _ = repair(step(1, "rag_search"), step(2, "reasoning", depends_on=[1]))
    assert plan.steps[0].query == QUERY
    assert plan.steps[1].query == ""


def test_timeouts_come_from_the_configuration() -> None:
    plan, _ = repair(step(1, "rag_search"), config=ExecutionConfig(default_step_timeout=7.5))
    assert {s.timeout_seconds for s in plan.steps} == {7.5}


@pytest.mark.parametrize(
    ("complexity", "confirm", "stored"),
    [(0.6, False, 0.6), (0.61, True, 0.61), (1.7, True, 1.0), (-0.2, False, 0.0)],
)
def test_confirmation_is_required_above_complexity_point_six(
    complexity: float, confirm: bool, stored: float
) -> None:
    plan, _ = repair(step(1, "rag_search"), complexity=complexity)
    assert plan.requires_confirmation is confirm
    assert plan.complexity == stored


async def test_planner_repairs_what_the_model_returns() -> None:
    model = ScriptedModel(
        [PlanDraft(complexity=0.2, steps=[step(3, "search", depends_on=[3]), step(3, "answer")])]
    )
    planner = Planner(model, ExecutionConfig())
    request = PlanRequest(query=QUERY, collections=COLLECTIONS, default_collection="grace_docs")

    outcome = await planner.create_plan(request)

    assert model.plan_requests == [request]
    assert outcome.repairs  # the duplicate id and self-dependency were noticed
    assert_valid(outcome.plan)
    assert outcome.reply.usage.calls == 1


async def test_a_run_with_an_unusable_plan_fails_with_a_clear_message(
    make_orchestrator: OrchestratorFactory,
) -> None:
    model = ScriptedModel([PlanDraft(complexity=0.2, steps=[step(1, "telepathy")])])

    state = await make_orchestrator(llm=model).start(QUERY)

    assert state.status is RunStatus.FAILED
    assert state.error is not None
    assert state.error.startswith("Planning failed: The model returned a plan with no usable")
