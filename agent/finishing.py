"""Turning a run's finished steps into its answer: which step's output is the answer,
how sure the run is overall, and which sources it cites."""

from __future__ import annotations

from agent.confidence import ConfidenceAggregator
from agent.config import ConfidenceConfig
from agent.executor import DONE
from agent.schemas import ActionType, ConfidenceScore, RunState, Source, StepResult


def final_result(state: RunState) -> StepResult | None:
    """The last finished reasoning step: its output is the answer."""
    assert state.plan is not None
    for step in reversed(state.plan.steps):
        result = state.step_results.get(step.step_id)
        if step.action is ActionType.REASONING and result and result.status in DONE:
            return result
    return None


def no_answer_reason(state: RunState) -> str:
    errors = [r.error for r in state.step_results.values() if r.error]
    return "No answer could be produced: " + ("; ".join(errors) or "every step was skipped")


def overall_confidence(
    state: RunState, final: StepResult, config: ConfidenceConfig
) -> ConfidenceScore:
    """The run's confidence: the steps' scores aggregated, with the answer's own
    evaluation (self-evaluation and coverage), keeping every factor visible."""
    scores = [
        r.confidence
        for _, r in sorted(state.step_results.items())
        if r.status in DONE and r.action is not ActionType.ASK_USER
    ]
    aggregate = ConfidenceAggregator.aggregate(scores, config.aggregation)
    detail = final.confidence_detail
    breakdown = detail.breakdown if detail else {}
    self_eval = breakdown.get("llm_self_eval", 0.5)
    coverage = breakdown.get("query_coverage", 0.5)
    w = config.overall_step_weight
    overall = w * aggregate + (1 - w) / 2 * (self_eval + coverage)
    return ConfidenceScore(
        score=min(1.0, max(0.0, overall)),
        breakdown={
            "steps_aggregate": round(aggregate, 4),
            "llm_self_eval": self_eval,
            "query_coverage": coverage,
            **{k: v for k, v in breakdown.items() if k not in ("base",)},
        },
        penalties=detail.penalties if detail else [],
    )


def cited(answer: str, sources: list[Source]) -> list[Source]:
    """The sources the answer cites, or all it was given when it cites none."""
    found = [s for s in sources if f"[Source: {s.source}]" in answer]
    return found or sources
