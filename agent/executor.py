"""Executes plan steps (SPEC §2.3): per-step timeout and a confidence score per step.

A failed step's `fallback` is tried by the replan manager (FALLBACK strategy), so it
is recorded in the replan history like every other recovery.

Ordering and concurrency live here too: `ready_steps` says which steps can run now, and
the orchestrator runs that whole wave at once.
"""

from __future__ import annotations

import asyncio
import time

from agent.confidence import ConfidenceCalculator, ConfidenceFactors, SourceAgreementCalculator
from agent.config import Thresholds
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
from agent.tools import FEATURE_PREFIX, StepContext, Toolbox

DONE = {StepStatus.SUCCESS, StepStatus.PARTIAL}
BLOCKED = {StepStatus.FAILED, StepStatus.SKIPPED}
AGREEMENT_SOURCES = 3


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
    ) -> StepResult:
        started = time.perf_counter()
        attempts = 1
        result = await self._attempt(step.action, step, ctx)
        score = await self._score(step, ctx, result, attempts, inherited_quality)
        decision = self._calculator.decide_action(score, thresholds)
        status = StepStatus.SUCCESS if result.success else StepStatus.FAILED
        return StepResult(
            step_id=step.step_id,
            action=step.action,
            status=status,
            output=result.output,
            confidence=round(score.score, 4),
            confidence_detail=score,
            level=decision.level,
            sources=result.sources,
            error=result.error,
            execution_time_ms=(time.perf_counter() - started) * 1000,
            token_usage=result.token_usage,
            attempts=attempts,
            used_fallback=step.action if step.fallback_of is not None else None,
        )

    async def _attempt(self, action: ActionType, step: PlanStep, ctx: StepContext) -> ToolResult:
        try:
            return await asyncio.wait_for(
                self._toolbox.run(action, step, ctx), timeout=step.timeout_seconds
            )
        except TimeoutError:
            return ToolResult(
                success=False,
                error=f"timeout: {action.value} took longer than {step.timeout_seconds:g} s",
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
        agreement = await self._agreement.calculate(top) if len(top) > 1 else None
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
                answer_features={
                    k.removeprefix(FEATURE_PREFIX): v
                    for k, v in factors.items()
                    if k.startswith(FEATURE_PREFIX)
                }
                or None,
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
