"""Executes plan steps (SPEC §2.3): per-step timeout and a confidence score per step.

Retries: a model or embedding call already retries what can be retried (rate limits,
an unavailable service, a hung request) within its own deadline, and the step's calls
share one request budget (`agent.budget`: 4 requests once the service fails), so a step
is run once here; running it again would only multiply requests. What the call layer cannot fix is
left to the replan manager: a failed step's `fallback` (FALLBACK strategy) or another
plan, each recorded in the replan history.

An answer whose evaluation failed is kept: the step is PARTIAL, says why, and its score
is lowered, so the run asks a human rather than posting it silently.

Ordering and concurrency live here too: `ready_steps` says which steps can run now, and
the orchestrator runs that whole wave at once.
"""

from __future__ import annotations

import asyncio
import time

from agent.budget import step_budget
from agent.confidence import ConfidenceCalculator, ConfidenceFactors, SourceAgreementCalculator
from agent.config import Thresholds
from agent.errors import GraceError
from agent.schemas import (
    ActionType,
    ConfidenceScore,
    ExecutionPlan,
    PlanStep,
    RunState,
    Source,
    StepResult,
    StepStatus,
    ToolResult,
)
from agent.tools import EVALUATION_FAILED, StepContext, Toolbox

DONE = {StepStatus.SUCCESS, StepStatus.PARTIAL}
BLOCKED = {StepStatus.FAILED, StepStatus.SKIPPED}
AGREEMENT_SOURCES = 3
UNCHECKED_PENALTY = 0.8
"""Score factor of an answer that could not be evaluated."""


def ancestors(plan: ExecutionPlan, step_id: int) -> list[int]:
    """Every step this one depends on, directly or not, in plan order."""
    seen: set[int] = set()
    stack = list(plan.step(step_id).depends_on)
    while stack:
        dep = stack.pop()
        if dep in seen:
            continue
        seen.add(dep)
        stack.extend(plan.step(dep).depends_on)
    return sorted(seen)


def skip_blocked(state: RunState) -> list[StepResult]:
    """Mark steps whose dependencies failed or were skipped as SKIPPED."""
    assert state.plan is not None
    skipped: list[StepResult] = []
    changed = True
    while changed:
        changed = False
        for step in state.plan.steps:
            if step.step_id in state.step_results:
                continue
            blocking = [
                d
                for d in step.depends_on
                if d in state.step_results and state.step_results[d].status in BLOCKED
            ]
            if blocking:
                result = StepResult(
                    step_id=step.step_id,
                    action=step.action,
                    status=StepStatus.SKIPPED,
                    error=f"skipped: step {blocking[0]} did not succeed",
                )
                state.step_results[step.step_id] = result
                skipped.append(result)
                changed = True
    return skipped


def ready_steps(state: RunState) -> list[PlanStep]:
    assert state.plan is not None
    ready = []
    for step in state.plan.steps:
        if step.step_id in state.step_results:
            continue
        if all(
            d in state.step_results and state.step_results[d].status in DONE
            for d in step.depends_on
        ):
            ready.append(step)
    return ready


def step_context(state: RunState, step: PlanStep) -> StepContext:
    assert state.plan is not None
    outputs: list[str] = []
    sources: list[Source] = []
    for dep in ancestors(state.plan, step.step_id):
        result = state.step_results.get(dep)
        if result is None or result.status not in DONE:
            continue
        if result.output:
            outputs.append(result.output)
        sources.extend(result.sources)
    if step.action is ActionType.REASONING:
        sources.extend(state.human_sources)
    return StepContext(
        query=state.query,
        thread_context=state.context,
        user_inputs=state.user_inputs,
        dependency_outputs=outputs,
        dependency_sources=sources,
        collection=state.collection,
        team_id=state.thread.team_id,
    )


class StepExecutor:
    def __init__(
        self,
        *,
        toolbox: Toolbox,
        calculator: ConfidenceCalculator,
        agreement: SourceAgreementCalculator,
    ) -> None:
        self._toolbox = toolbox
        self._calculator = calculator
        self._agreement = agreement

    async def execute(
        self,
        step: PlanStep,
        ctx: StepContext,
        thresholds: Thresholds,
        inherited_quality: float | None,
        *,
        time_limit: float | None = None,
    ) -> StepResult:
        """Run one step within its timeout (or `time_limit`, what is left of the run's
        deadline, when that is shorter) and score it."""
        started = time.perf_counter()
        attempts = 1
        timeout = step.timeout_seconds
        if time_limit is not None:
            timeout = max(0.0, min(timeout, time_limit))
        ctx = ctx.model_copy(update={"deadline": time.monotonic() + timeout})
        with step_budget():
            result = await self._attempt(step.action, step, ctx, timeout)
        score = await self._score(step, ctx, result, attempts, inherited_quality)
        if result.success and result.confidence_factors.get(EVALUATION_FAILED):
            score = score.model_copy(
                update={
                    "score": score.score * UNCHECKED_PENALTY,
                    "penalties": [
                        *score.penalties,
                        f"answer not checked by the model ×{UNCHECKED_PENALTY}",
                    ],
                }
            )
        decision = self._calculator.decide_action(score, thresholds)
        if not result.success:
            status = StepStatus.FAILED
        elif result.error:
            status = StepStatus.PARTIAL
        else:
            status = StepStatus.SUCCESS
        return StepResult(
            step_id=step.step_id,
            action=step.action,
            status=status,
            output=result.output,
            confidence=round(score.score, 4),
            confidence_detail=score,
            level=decision.level,
            sources=result.sources,
            answer_features=result.answer_features,
            error=result.error,
            execution_time_ms=(time.perf_counter() - started) * 1000,
            token_usage=result.token_usage,
            attempts=attempts,
            used_fallback=step.action if step.fallback_of is not None else None,
        )

    async def _attempt(
        self, action: ActionType, step: PlanStep, ctx: StepContext, limit: float
    ) -> ToolResult:
        try:
            return await asyncio.wait_for(self._toolbox.run(action, step, ctx), timeout=limit)
        except TimeoutError:
            return ToolResult(
                success=False,
                error=f"timeout: {action.value} took longer than {limit:.3g} s",
            )

    async def _score(
        self,
        step: PlanStep,
        ctx: StepContext,
        result: ToolResult,
        attempts: int,
        inherited_quality: float | None,
    ) -> ConfidenceScore:
        is_search = step.action in (ActionType.RAG_SEARCH, ActionType.WEB_SEARCH)
        factors = result.confidence_factors
        sources = result.sources if result.success else []
        if not is_search:
            sources = ctx.dependency_sources
        top = _top_sources(sources)
        agreement = None
        if len(top) > 1:
            try:
                agreement = await self._agreement.calculate(top)
            except GraceError:  # an embedding failure costs the factor, not the step
                agreement = None
        return self._calculator.calculate(
            ConfidenceFactors(
                is_search_step=is_search,
                result_count=int(factors.get("result_count", 0)) if is_search else None,
                search_scores=[s.similarity for s in result.sources] if is_search else [],
                tool_attempts=attempts,
                tool_successes=1 if result.success else 0,
                source_count=len({s.source for s in sources}),
                source_agreement=agreement,
                llm_self_eval=factors.get("llm_self_eval"),
                query_coverage=factors.get("query_coverage"),
                inherited_search_quality=None if is_search else inherited_quality,
                answer_features=result.answer_features,
                model=self._toolbox.model_name,
            )
        )


def _top_sources(sources: list[Source]) -> list[Source]:
    """The sources that matter for agreement: the best hit per document, near the top."""
    best: dict[str, Source] = {}
    for s in sorted(sources, key=lambda s: s.similarity, reverse=True):
        best.setdefault(s.source, s)
    ranked = list(best.values())
    if not ranked:
        return []
    cutoff = ranked[0].similarity * 0.6
    return [s for s in ranked if s.similarity >= cutoff][:AGREEMENT_SOURCES]
