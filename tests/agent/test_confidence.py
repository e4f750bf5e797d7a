"""Acceptance 4: confidence scoring (agent/confidence.py), and the seed-001 regression
proven through the real executor and orchestrator."""

from __future__ import annotations

import pytest

from agent.confidence import (
    CALIBRATIONS,
    OTHER_SUBJECT_CONFIDENCE,
    Calibration,
    ConfidenceAggregator,
    ConfidenceCalculator,
    ConfidenceFactors,
    SourceAgreementCalculator,
    calibrated,
    calibration_for,
    provider_of,
    search_quality,
)
from agent.config import ConfidenceConfig, ConfidenceWeights, Thresholds
from agent.executor import StepExecutor, step_context
from agent.finishing import overall_confidence
from agent.knowledge.lexical import HashingEmbedder
from agent.knowledge.qdrant_kb import QdrantKnowledgeBase
from agent.llm.offline import OfflineModel
from agent.orchestrator import Orchestrator
from agent.schemas import (
    ActionType,
    AnswerFeatures,
    ConfidenceScore,
    ExecutionPlan,
    InterventionAction,
    InterventionKind,
    InterventionLevel,
    PlanStep,
    RunState,
    RunStatus,
    Source,
    StepResult,
    StepStatus,
)
from agent.tools import StepContext, Toolbox

from .helpers import reply

NO_SOURCES = "no sources in the dependency chain ×0.7"
NO_RESULTS = "no search results ×0.5"
SINGLE = "single source ×0.9"


@pytest.fixture
def calc() -> ConfidenceCalculator:
    return ConfidenceCalculator(ConfidenceConfig())


# ----------------------------------------------------------------- calibration per provider

EVIDENCE = AnswerFeatures(
    answer_coverage=0.6,
    passage_coverage=0.7,
    document_margin=1.0,
    value_type_match=True,
    question_terms=5,
    value_asked=True,
)


def test_calibrations_are_kept_per_provider() -> None:
    assert provider_of("gemini-2.5-flash") == provider_of("models/gemini-2.0-pro") == "gemini"
    assert calibration_for("offline") is CALIBRATIONS["offline"]
    # No Gemini fit is shipped: its documented default is the weighted mean of factors.
    assert calibration_for("gemini-2.5-flash") is None
    factors = ConfidenceFactors(
        source_count=2, llm_self_eval=0.9, answer_features=EVIDENCE, model="gemini-2.5-flash"
    )
    score = ConfidenceCalculator(ConfidenceConfig()).calculate(factors)
    assert "calibrated" not in score.breakdown
    assert score.breakdown["llm_self_eval"] == 0.9


def test_a_fitted_provider_map_takes_the_self_evaluation_as_one_feature() -> None:
    gemini = Calibration(
        intercept=-4.0,
        weights={**CALIBRATIONS["offline"].weights, "llm_self_eval": 2.0},
    )
    calc = ConfidenceCalculator(ConfidenceConfig(), {**CALIBRATIONS, "gemini": gemini})

    def score(self_eval: float) -> float:
        factors = ConfidenceFactors(
            source_count=2,
            llm_self_eval=self_eval,
            answer_features=EVIDENCE,
            model="gemini-2.5-flash",
        )
        result = calc.calculate(factors)
        assert "calibrated" in result.breakdown
        return result.score

    assert score(0.9) > score(0.2)
    # the offline model keeps its own map
    offline = calc.calculate(
        ConfidenceFactors(source_count=2, answer_features=EVIDENCE, model="offline")
    )
    assert offline.score == pytest.approx(CALIBRATIONS["offline"].probability(EVIDENCE))


def test_an_answer_whose_document_never_mentions_what_was_named_is_never_posted_unchecked(
    calc: ConfidenceCalculator,
) -> None:
    """`missing_name` caps the probability, whatever a map weighs: the shipped one, a
    team's fit that gives the feature no weight, or a Gemini fit. Without the flag the
    map decides alone."""
    other_subject = EVIDENCE.model_copy(update={"missing_name": True})
    blind = Calibration(
        intercept=CALIBRATIONS["offline"].intercept,
        weights={**CALIBRATIONS["offline"].weights, "missing_name": 0.0},
    )
    maps = {"offline": blind, "gemini": blind}
    for model in ("offline", "gemini-2.5-flash"):
        assert blind.probability(other_subject) >= 0.7  # the map alone would post it
        assert calibrated(other_subject, model, maps) == OTHER_SUBJECT_CONFIDENCE
        assert calibrated(EVIDENCE, model, maps) == blind.probability(EVIDENCE)
    score = ConfidenceCalculator(ConfidenceConfig(), maps).calculate(
        ConfidenceFactors(source_count=2, answer_features=other_subject, model="offline")
    )
    assert score.score == OTHER_SUBJECT_CONFIDENCE
    assert calc.decide_action(score).level is InterventionLevel.ESCALATE
    # a map already surer it is wrong keeps its lower figure
    doubtful = other_subject.model_copy(update={"answer_coverage": 0.0, "question_terms": 1})
    assert calibrated(doubtful, "offline") < OTHER_SUBJECT_CONFIDENCE


# ----------------------------------------------------------------- search vs non-search


def test_search_step_base_is_search_quality_times_tool_success(
    calc: ConfidenceCalculator,
) -> None:
    scores = [0.9, 0.7, 0.5]
    expected_quality = search_quality(scores, 0.5)
    # 0.6·max + 0.4·mean − 0.5·variance
    assert expected_quality == pytest.approx(0.6 * 0.9 + 0.4 * 0.7 - 0.5 * (0.08 / 3))

    result = calc.calculate(
        ConfidenceFactors(
            is_search_step=True,
            result_count=3,
            search_scores=scores,
            source_count=2,
            llm_self_eval=0.0,  # ignored for a search step
            query_coverage=0.0,
        )
    )

    assert result.is_search_step
    assert result.score == pytest.approx(expected_quality, abs=1e-9)
    assert result.breakdown["search_quality"] == pytest.approx(expected_quality, abs=1e-4)
    assert result.breakdown["tool_success"] == 1.0
    assert result.penalties == []
    assert "llm_self_eval" not in result.breakdown


def test_non_search_step_is_weighted_mean_of_the_factors_it_has(
    calc: ConfidenceCalculator,
) -> None:
    w = ConfidenceWeights()
    result = calc.calculate(
        ConfidenceFactors(
            is_search_step=False,
            source_count=2,
            llm_self_eval=0.5,
            query_coverage=1.0,
        )
    )
    expected = (1.0 * w.tool_success + 0.5 * w.llm_self_eval + 1.0 * w.query_coverage) / (
        w.tool_success + w.llm_self_eval + w.query_coverage
    )
    assert not result.is_search_step
    assert result.score == pytest.approx(expected)
    assert set(result.breakdown) == {"tool_success", "llm_self_eval", "query_coverage", "base"}
    assert result.penalties == []


def test_non_search_step_counts_inherited_search_quality_and_agreement(
    calc: ConfidenceCalculator,
) -> None:
    w = ConfidenceWeights()
    result = calc.calculate(
        ConfidenceFactors(
            source_count=3,
            inherited_search_quality=0.8,
            source_agreement=0.4,
            llm_self_eval=0.9,
            query_coverage=0.7,
        )
    )
    parts = [
        (1.0, w.tool_success),
        (0.8, w.search_quality),
        (0.4, w.source_agreement),
        (0.9, w.llm_self_eval),
        (0.7, w.query_coverage),
    ]
    expected = sum(v * k for v, k in parts) / sum(k for _, k in parts)
    assert result.score == pytest.approx(expected)
    assert result.breakdown["search_quality"] == 0.8
    assert result.breakdown["source_agreement"] == 0.4


# ----------------------------------------------------------------- penalties


def test_no_results_halves_a_search_score_and_is_not_also_a_no_source_penalty(
    calc: ConfidenceCalculator,
) -> None:
    # scores without a result count would be inconsistent data, which isolates the ×0.5
    result = calc.calculate(
        ConfidenceFactors(is_search_step=True, result_count=0, search_scores=[0.8], source_count=0)
    )
    assert result.score == pytest.approx(0.8 * 0.5)
    assert result.penalties == [NO_RESULTS]

    empty = calc.calculate(ConfidenceFactors(is_search_step=True, result_count=0))
    assert empty.score == 0.0
    assert empty.penalties == [NO_RESULTS]


@pytest.mark.parametrize(("attempts", "successes"), [(2, 1), (4, 3), (1, 0)])
def test_tool_failures_multiply_by_point_eight_plus_point_two_rate(
    calc: ConfidenceCalculator, attempts: int, successes: int
) -> None:
    rate = successes / attempts
    factors = ConfidenceFactors(
        is_search_step=True,
        result_count=2,
        search_scores=[0.9, 0.9],
        tool_attempts=attempts,
        tool_successes=successes,
        source_count=2,
    )
    result = calc.calculate(factors)
    assert result.score == pytest.approx(0.9 * rate * (0.8 + 0.2 * rate))
    assert result.penalties == [f"tool failures ×{0.8 + 0.2 * rate:.2f}"]
    assert result.breakdown["tool_success"] == pytest.approx(rate)


def test_single_source_multiplies_by_point_nine(calc: ConfidenceCalculator) -> None:
    two = calc.calculate(ConfidenceFactors(llm_self_eval=0.8, query_coverage=0.8, source_count=2))
    one = calc.calculate(ConfidenceFactors(llm_self_eval=0.8, query_coverage=0.8, source_count=1))
    assert one.score == pytest.approx(two.score * 0.9)
    assert one.penalties == [SINGLE]
    assert two.penalties == []


def test_no_sources_in_the_chain_multiplies_by_point_seven(calc: ConfidenceCalculator) -> None:
    two = calc.calculate(ConfidenceFactors(llm_self_eval=0.8, query_coverage=0.8, source_count=2))
    none = calc.calculate(ConfidenceFactors(llm_self_eval=0.8, query_coverage=0.8, source_count=0))
    assert none.score == pytest.approx(two.score * 0.7)
    assert none.penalties == [NO_SOURCES]


def test_penalties_compound(calc: ConfidenceCalculator) -> None:
    result = calc.calculate(
        ConfidenceFactors(
            is_search_step=True,
            result_count=1,
            search_scores=[1.0],
            tool_attempts=2,
            tool_successes=1,
            source_count=1,
        )
    )
    assert result.score == pytest.approx(1.0 * 0.5 * 0.9 * 0.9)
    assert result.penalties == ["tool failures ×0.90", SINGLE]


def test_scores_are_clamped_to_zero_one(calc: ConfidenceCalculator) -> None:
    high = calc.calculate(
        ConfidenceFactors(
            is_search_step=True, result_count=2, search_scores=[1.7, 1.2], source_count=2
        )
    )
    assert high.score == 1.0
    overconfident = calc.calculate(
        ConfidenceFactors(llm_self_eval=3.0, query_coverage=3.0, source_count=2)
    )
    assert overconfident.score == 1.0
    scattered = ConfidenceCalculator(ConfidenceConfig(variance_penalty=100.0)).calculate(
        ConfidenceFactors(
            is_search_step=True, result_count=2, search_scores=[1.0, 0.0], source_count=2
        )
    )
    assert scattered.score == 0.0
    assert search_quality([], 0.5) == 0.0


def test_a_low_self_evaluation_lowers_the_score(calc: ConfidenceCalculator) -> None:
    def score(self_eval: float | None) -> float:
        return calc.calculate(
            ConfidenceFactors(
                source_count=2,
                inherited_search_quality=0.8,
                llm_self_eval=self_eval,
                query_coverage=0.8,
            )
        ).score

    assert score(0.1) < score(0.5) < score(0.9)
    # the seed counted self-evaluation only when > 0.6: a low one must not be ignored
    assert score(0.1) < score(None)


# ----------------------------------------------------------------- aggregation / actions


def test_aggregation_mean_min_weighted() -> None:
    scores = [0.2, 0.8]
    assert ConfidenceAggregator.aggregate(scores, "mean") == pytest.approx(0.5)
    assert ConfidenceAggregator.aggregate(scores, "min") == pytest.approx(0.2)
    # later steps weigh more: (0.2·1 + 0.8·2) / 3
    assert ConfidenceAggregator.aggregate(scores, "weighted") == pytest.approx(0.6)
    assert ConfidenceAggregator.aggregate([0.8, 0.2], "weighted") == pytest.approx(0.4)
    assert ConfidenceAggregator.aggregate([], "mean") == 0.0


@pytest.mark.parametrize(
    ("score", "level"),
    [
        (1.0, InterventionLevel.SILENT),
        (0.9, InterventionLevel.SILENT),
        (0.8999, InterventionLevel.NOTIFY),
        (0.7, InterventionLevel.NOTIFY),
        (0.6999, InterventionLevel.CONFIRM),
        (0.4, InterventionLevel.CONFIRM),
        (0.3999, InterventionLevel.ESCALATE),
        (0.0, InterventionLevel.ESCALATE),
    ],
)
def test_decide_action_at_each_threshold_boundary(
    calc: ConfidenceCalculator, score: float, level: InterventionLevel
) -> None:
    decision = calc.decide_action(score)
    assert decision.level is level
    assert decision.thresholds == Thresholds()


def test_decide_action_uses_given_thresholds(calc: ConfidenceCalculator) -> None:
    bolder = Thresholds(silent=0.8, notify=0.6, confirm=0.3)
    assert calc.decide_action(0.85).level is InterventionLevel.NOTIFY
    assert calc.decide_action(0.85, bolder).level is InterventionLevel.SILENT
    assert calc.decide_action(0.35, bolder).level is InterventionLevel.CONFIRM
    assert "below 0.3" in calc.decide_action(0.2, bolder).reason


# ----------------------------------------------------------------- source agreement


async def test_source_agreement_is_one_for_a_single_source_and_lower_for_conflicts() -> None:
    agreement = SourceAgreementCalculator(HashingEmbedder())
    same_doc = [
        Source(source="a.md", text="Employees may work remotely up to 3 days per week."),
        Source(source="a.md", text="Remote days are normal working days."),
    ]
    assert await agreement.calculate(same_doc) == 1.0
    assert await agreement.calculate(same_doc[:1]) == 1.0
    conflict = [
        Source(source="new.md", text="Employees may work remotely up to 3 days per week."),
        Source(source="old.md", text="Remote work is limited to one day per week."),
    ]
    assert await agreement.calculate(conflict) < 1.0


# ----------------------------------------------------------------- seed-001 regression


def _executor(kb: QdrantKnowledgeBase) -> StepExecutor:
    calculator = ConfidenceCalculator(ConfidenceConfig())
    return StepExecutor(
        toolbox=Toolbox(llm=OfflineModel(), knowledge_base=kb),
        calculator=calculator,
        agreement=SourceAgreementCalculator(HashingEmbedder()),
    )


async def test_reasoning_after_a_successful_search_inherits_its_sources_in_the_executor(
    kb: QdrantKnowledgeBase,
) -> None:
    query = "How many vacation days do new employees get?"
    plan = ExecutionPlan(
        original_query=query,
        complexity=0.3,
        estimated_steps=3,
        steps=[
            PlanStep(step_id=1, action=ActionType.RAG_SEARCH, description="search", query=query),
            PlanStep(step_id=2, action=ActionType.REASONING, description="draft", depends_on=[1]),
            PlanStep(step_id=3, action=ActionType.REASONING, description="final", depends_on=[2]),
        ],
    )
    state = RunState(query=query, plan=plan, collection=kb.default_collection)
    executor = _executor(kb)
    thresholds = Thresholds()

    search_result = await executor.execute(
        plan.steps[0], step_context(state, plan.steps[0]), thresholds, None
    )
    assert search_result.status is StepStatus.SUCCESS and search_result.sources
    state.step_results[1] = search_result
    assert search_result.confidence_detail is not None
    quality = search_result.confidence_detail.breakdown["search_quality"]

    draft_ctx = step_context(state, plan.steps[1])
    assert draft_ctx.dependency_sources == search_result.sources
    draft = await executor.execute(plan.steps[1], draft_ctx, thresholds, quality)
    state.step_results[2] = draft

    # step 3 depends on step 1 only through step 2: the sources still reach it
    final_ctx = step_context(state, plan.steps[2])
    assert {s.chunk_id for s in final_ctx.dependency_sources} >= {
        s.chunk_id for s in search_result.sources
    }
    final = await executor.execute(plan.steps[2], final_ctx, thresholds, quality)

    for result in (draft, final):
        assert result.status is StepStatus.SUCCESS
        assert result.confidence_detail is not None
        assert NO_SOURCES not in result.confidence_detail.penalties
        assert result.confidence_detail.breakdown["search_quality"] == quality
        assert "15" in result.output

    # the same reasoning step with nothing gathered is penalised: the rule is live
    orphan = await executor.execute(plan.steps[1], StepContext(query=query), thresholds, None)
    assert orphan.confidence_detail is not None
    assert NO_SOURCES in orphan.confidence_detail.penalties
    assert orphan.confidence < draft.confidence


async def test_reasoning_step_is_not_penalised_for_no_sources_in_a_real_run(
    orchestrator: Orchestrator,
) -> None:
    state = await orchestrator.start("How many vacation days do new employees get?")
    assert state.status is RunStatus.ANSWERED
    assert state.plan is not None
    search, answer = state.plan.steps[0], state.plan.steps[-1]
    assert search.action is ActionType.RAG_SEARCH and answer.action is ActionType.REASONING
    search_detail = state.step_results[search.step_id].confidence_detail
    answer_detail = state.step_results[answer.step_id].confidence_detail
    assert search_detail is not None and answer_detail is not None
    assert not any("no sources" in p for p in answer_detail.penalties)
    assert answer_detail.breakdown["search_quality"] == search_detail.breakdown["search_quality"]
    assert state.step_results[answer.step_id].sources


# ----------------------------------------------------------------- calibrated answers


async def test_the_runs_confidence_is_the_answers_calibrated_probability(
    orchestrator: Orchestrator,
) -> None:
    state = await orchestrator.start("How many vacation days do new employees get?")

    assert state.status is RunStatus.ANSWERED, state.error
    answer_step = state.step_results[max(state.step_results)]
    assert answer_step.confidence_detail is not None
    breakdown = answer_step.confidence_detail.breakdown
    assert state.overall_confidence == pytest.approx(breakdown["calibrated"], abs=1e-4)
    # the overall score no longer comes out above the evidence it rests on
    assert state.overall_confidence is not None
    assert state.overall_confidence <= max(
        r.confidence for r in state.step_results.values() if r.status is StepStatus.SUCCESS
    )
    assert state.overall_detail is not None
    for factor in ("answer_coverage", "document_margin", "value_type_match", "steps_aggregate"):
        assert factor in state.overall_detail.breakdown  # the factors stay visible


def test_a_conflict_caps_the_overall_score_below_silent() -> None:
    final = StepResult(
        step_id=2,
        action=ActionType.REASONING,
        status=StepStatus.SUCCESS,
        confidence=0.97,
        confidence_detail=ConfidenceScore(
            score=0.97, breakdown={"calibrated": 0.97, "sources_conflict": 1.0}
        ),
    )
    state = RunState(query="q", step_results={2: final})
    score = overall_confidence(state, final, ConfidenceConfig(), Thresholds(silent=0.9))
    assert score.score < 0.9
    assert "sources disagree: never silent" in score.penalties


async def test_a_persons_reply_to_an_escalation_is_a_cited_source(
    orchestrator: Orchestrator,
) -> None:
    state = await orchestrator.start("What is the capital of Mongolia?", asker="U_ASKER")
    assert state.pending is not None and state.pending.kind is InterventionKind.ESCALATE
    replans = state.replan_count

    state = await reply(
        orchestrator,
        state,
        InterventionAction.INPUT,
        text="It is Ulaanbaatar, according to our travel guide.",
    )

    assert state.status is RunStatus.ANSWERED, state.error
    assert "Ulaanbaatar" in state.final_answer
    assert [s.source for s in state.sources] == ["@U_ASKER (reply in thread)"]
    assert state.replan_count == replans  # the reply is an answer, not a replan
    assert state.user_inputs == []
    assert state.level is InterventionLevel.NOTIFY  # a person said it; shown, not silent


async def test_a_vague_question_asks_which_document_with_their_titles(
    orchestrator: Orchestrator,
) -> None:
    state = await orchestrator.start("How many days do I get?", asker="U_ASKER")

    assert state.status is RunStatus.PAUSED
    assert state.pending is not None and state.pending.kind is InterventionKind.ASK_USER
    assert "Vacation Policy" in state.pending.options
    assert len(state.pending.options) >= 2
    assert state.final_answer == ""

    state = await reply(
        orchestrator,
        state,
        InterventionAction.INPUT,
        option=state.pending.options.index("Vacation Policy"),
    )
    assert state.status is RunStatus.ANSWERED, state.error
    assert state.user_inputs == ["Vacation Policy"]
    assert "vacation-policy.md" in {s.source for s in state.sources}
