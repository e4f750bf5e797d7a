"""Adaptive replanning (SPEC §2.7, seed 000 §4.7).

The manager decides *whether* and *how* to replan and builds the new plan; the
orchestrator applies it. Every replan is recorded, and `max_replans` bounds them, so a
model that keeps producing failing plans ends in a clear failure instead of a loop.

The agent's own replans (failure, low confidence, timeout) and the ones a human asks for
(Modify, new information in reply to an escalation) have separate budgets of
`max_replans` each: the agent escalates to a human exactly when its own budget is spent,
so a shared budget would refuse every NEW_INFORMATION replan.

A replan tells the model what was tried: every earlier step's query, how many results
it found, the best sources with their scores, and its error (`tried`, cumulative over
the run). So no two replans send the same prompt, and the model can change course
instead of repeating a search that found nothing. A reasoning step that failed because
the model service itself was unavailable (rate limit, outage, already retried by the
call layer) or refused the request (blocked even when rephrased) is not replanned:
another plan would hit the same wall, or resend the refused prompt.

Nor does an agent's replan run a search again that this run already ran (the same
action, collection and query once case, whitespace and punctuation are set aside): it
would find the same passages, and a thread showing the same search three times reads
badly. A planner that can only repeat itself has no new plan; the run then ends as it
would at the replan limit (see `fresh_plan`).
"""

from __future__ import annotations

import re

from agent.config import ReplanConfig
from agent.executor import DONE
from agent.knowledge.tokenize import normalize_text
from agent.planner import Planner
from agent.ports import PlanRequest
from agent.schemas import (
    ActionType,
    ExecutionPlan,
    PlanStep,
    ReplanDecision,
    ReplanRecord,
    ReplanStrategy,
    ReplanTrigger,
    RunState,
    StepResult,
    StepStatus,
    TokenUsage,
)

GATHERING = {ActionType.RAG_SEARCH, ActionType.WEB_SEARCH}
SERVICE_ERRORS = ("rate_limit:", "network:", "blocked:")
"""Step errors (see `Toolbox.run`) that another plan cannot fix: the model service failed
after its retries, or its safety filter refused the request even rephrased."""
TRIED_SOURCES = 3
MAX_TRIED = 20
HUMAN_TRIGGERS = frozenset({ReplanTrigger.USER_FEEDBACK, ReplanTrigger.NEW_INFORMATION})


def replans_used(state: RunState, trigger: ReplanTrigger) -> int:
    """Replans already spent from the budget `trigger` draws on (agent's or human's)."""
    human = trigger in HUMAN_TRIGGERS
    return sum(1 for r in state.replan_history if (r.trigger in HUMAN_TRIGGERS) == human)


def normalised(query: str) -> str:
    """A query's words with Unicode width (NFKC), case, punctuation and whitespace set
    aside: two searches that differ only in these are the same search."""
    text = normalize_text(query).casefold()
    return " ".join(re.sub(r"[\W_]+", " ", text).split())


def search_key(step: PlanStep, run_query: str) -> str:
    """A search's identity: its action, collection and query, `normalised`."""
    return f"{step.action.value}|{step.collection or ''}|{normalised(step.query or run_query)}"


def searches_run(state: RunState) -> list[str]:
    """Every search this run has run: earlier plans' (from the replan history) and the
    current plan's finished ones, oldest first."""
    earlier = state.replan_history[-1].searched if state.replan_history else []
    current = []
    if state.plan is not None:
        for step in state.plan.steps:
            result = state.step_results.get(step.step_id)
            if (
                step.action in GATHERING
                and result is not None
                and result.status not in (StepStatus.RUNNING, StepStatus.PENDING)
                and result.status is not StepStatus.SKIPPED
            ):
                current.append(search_key(step, state.query))
    return list(dict.fromkeys([*earlier, *current]))


def fresh_plan(
    plan: ExecutionPlan,
    kept: dict[int, StepResult],
    searched: list[str],
    run_query: str,
    *,
    reasoning_failed: bool,
) -> tuple[ExecutionPlan, dict[int, StepResult]] | None:
    """The new plan without the searches this run already ran, or None when nothing new
    is left: no new search (unless the plan is there to redo a failed answer from the
    passages kept)."""
    done = set(searched)
    repeated = {
        s.step_id
        for s in plan.steps
        if s.step_id not in kept and s.action in GATHERING and search_key(s, run_query) in done
    }
    new_searches = [
        s
        for s in plan.steps
        if s.step_id not in kept and s.action in GATHERING and s.step_id not in repeated
    ]
    kept_searches = [s for s in plan.steps if s.step_id in kept and s.action in GATHERING]
    if not new_searches and not (reasoning_failed and kept_searches):
        return None
    if not repeated:
        return plan, kept
    steps, results = _renumbered([s for s in plan.steps if s.step_id not in repeated], kept)
    return plan.model_copy(update={"steps": steps, "estimated_steps": len(steps)}), results


def _renumbered(
    steps: list[PlanStep], results: dict[int, StepResult]
) -> tuple[list[PlanStep], dict[int, StepResult]]:
    """`steps` numbered 1, 2, … in order, their dependencies and the results of those
    kept (others' dropped) following the new numbers."""
    renumber = {s.step_id: i for i, s in enumerate(steps, 1)}
    renumbered = [
        s.model_copy(
            update={
                "step_id": renumber[s.step_id],
                "depends_on": [renumber[d] for d in s.depends_on if d in renumber],
            }
        )
        for s in steps
    ]
    kept = {
        renumber[k]: r.model_copy(update={"step_id": renumber[k]})
        for k, r in results.items()
        if k in renumber
    }
    return renumbered, kept


def describe_attempts(state: RunState) -> list[str]:
    """One line per finished step of the current plan: what it tried and what it found."""
    plan = state.plan
    if plan is None:
        return []
    round_ = len(state.replan_history) + 1
    lines = []
    for step in plan.steps:
        result = state.step_results.get(step.step_id)
        if result is None or result.status in (StepStatus.RUNNING, StepStatus.PENDING):
            continue
        head = f"plan {round_} step {step.step_id} {step.action.value}"
        if step.action in GATHERING:
            where = f" in {step.collection}" if step.collection else ""
            head += f' "{step.query or state.query}"{where}'
        else:
            head += f": {step.description}"
        if result.status is StepStatus.SKIPPED:
            lines.append(f"{head} → skipped ({result.error or 'a dependency failed'})")
            continue
        found = f"{result.status.value}, confidence {result.confidence:.2f}"
        if step.action in GATHERING and result.status is not StepStatus.FAILED:
            best = _best_sources(result)
            found += f", {len(result.sources)} results"
            if best:
                found += "; top: " + ", ".join(best)
        if result.error:
            found += f"; error: {result.error[:200]}"
        lines.append(f"{head} → {found}")
    return lines


def _best_sources(result: StepResult) -> list[str]:
    ranked = sorted(result.sources, key=lambda s: s.similarity, reverse=True)
    seen: dict[str, float] = {}
    for source in ranked:
        seen.setdefault(source.source, source.similarity)
    return [f"{name} ({score:.2f})" for name, score in list(seen.items())[:TRIED_SOURCES]]


def tried_so_far(state: RunState) -> list[str]:
    """Everything the run tried: earlier plans' attempts (from the replan history) and
    the current plan's, oldest first, the most recent `MAX_TRIED` kept."""
    earlier = state.replan_history[-1].tried if state.replan_history else []
    current = describe_attempts(state)
    merged = list(dict.fromkeys([*earlier, *current]))
    return merged[-MAX_TRIED:]


def _service_failure(state: RunState, step_id: int | None) -> bool:
    if step_id is None or state.plan is None:
        return False
    result = state.step_results.get(step_id)
    step = next((s for s in state.plan.steps if s.step_id == step_id), None)
    return (
        step is not None
        and step.action is ActionType.REASONING
        and result is not None
        and result.status is StepStatus.FAILED
        and (result.error or "").startswith(SERVICE_ERRORS)
    )


def plan_invalidated(state: RunState, low_confidence: float) -> str | None:
    """Seed rule: 2 consecutive failures, 3 in total, or the last two steps both weak."""
    if state.consecutive_failures >= 2:
        return "two consecutive step failures"
    if state.failure_count >= 3:
        return "three step failures in this run"
    finished = [
        r
        for _, r in sorted(state.step_results.items())
        if r.status not in (StepStatus.SKIPPED, StepStatus.RUNNING, StepStatus.PENDING)
    ]
    if len(finished) >= 2 and all(r.confidence < low_confidence for r in finished[-2:]):
        return "the last two steps both scored below the low-confidence threshold"
    return None


class ReplanManager:
    def __init__(self, planner: Planner, config: ReplanConfig) -> None:
        self._planner = planner
        self._config = config

    @property
    def config(self) -> ReplanConfig:
        return self._config

    def trigger_for(self, result: StepResult) -> ReplanTrigger | None:
        if result.status is StepStatus.FAILED:
            if result.error and result.error.startswith("timeout"):
                return ReplanTrigger.TIMEOUT
            return ReplanTrigger.STEP_FAILED
        if result.confidence < self._config.low_confidence:
            return ReplanTrigger.LOW_CONFIDENCE
        return None

    def decide(
        self, state: RunState, trigger: ReplanTrigger, step_id: int | None, reason: str
    ) -> ReplanDecision:
        plan = state.plan
        assert plan is not None

        tried = tried_so_far(state)
        searched = searches_run(state)

        def decision(strategy: ReplanStrategy, why: str = reason) -> ReplanDecision:
            return ReplanDecision(
                trigger=trigger,
                strategy=strategy,
                reason=why,
                failed_step_id=step_id,
                tried=tried,
                searched=searched,
            )

        if replans_used(state, trigger) >= self._config.max_replans:
            return decision(
                ReplanStrategy.ABORT,
                f"{reason}; the replan limit ({self._config.max_replans}) is reached",
            )
        if trigger is ReplanTrigger.STEP_FAILED and _service_failure(state, step_id):
            return decision(
                ReplanStrategy.ABORT,
                f"{reason}; another plan would fail the same way",
            )
        if trigger is ReplanTrigger.USER_FEEDBACK:
            done = [r for r in state.step_results.values() if r.status in DONE]
            return decision(ReplanStrategy.PARTIAL if done and step_id else ReplanStrategy.FULL)
        invalid = plan_invalidated(state, self._config.low_confidence)
        if (
            invalid
            and trigger is ReplanTrigger.LOW_CONFIDENCE
            and _weak_answer_found(state, step_id)
        ):
            # The searches found passages and only the answer drawn from them is weak:
            # another search adds to them instead of replacing what was found.
            return decision(
                ReplanStrategy.PARTIAL,
                f"{reason}; plan invalidated: {invalid}; the passages found are kept",
            )
        if invalid:
            return decision(ReplanStrategy.FULL, f"{reason}; plan invalidated: {invalid}")
        step = plan.step(step_id) if step_id is not None else None
        if trigger is ReplanTrigger.STEP_FAILED and step is not None and step.fallback is not None:
            return decision(ReplanStrategy.FALLBACK)
        if trigger is ReplanTrigger.STEP_FAILED and step is not None and _is_optional(state, step):
            return decision(ReplanStrategy.SKIP, f"{reason}; other sources cover it")
        if trigger is ReplanTrigger.TIMEOUT:
            return decision(ReplanStrategy.FULL)
        if step_id is not None and step_id / len(plan.steps) < 0.34:
            return decision(ReplanStrategy.FULL)
        return decision(ReplanStrategy.PARTIAL)

    async def build(
        self, state: RunState, decision: ReplanDecision, feedback: str | None = None
    ) -> tuple[ExecutionPlan, dict[int, StepResult], TokenUsage]:
        """The new plan, the step results that stay valid for it, and what planning cost."""
        plan = state.plan
        assert plan is not None
        if decision.strategy is ReplanStrategy.FALLBACK:
            kept = _keep_before(state, decision.failed_step_id)
            return _apply_fallback(plan, decision.failed_step_id), kept, TokenUsage()
        if decision.strategy is ReplanStrategy.SKIP:
            return (*_skip_step(state, decision.failed_step_id), TokenUsage())
        request = PlanRequest(
            query=state.query,
            context=state.context,
            collections=[state.collection] if state.collection else [],
            default_collection=state.collection,
            feedback=feedback,
            failure=None if feedback else decision.reason,
            completed_steps=[
                f"{s.step_id}. {s.action.value}: {s.description}"
                for s in plan.steps
                if s.step_id in state.step_results and state.step_results[s.step_id].status in DONE
            ],
            tried=decision.tried,
        )
        outcome = await self._planner.create_plan(request)
        new_plan = outcome.plan.model_copy(update={"requires_confirmation": False})
        usage = outcome.reply.usage
        if decision.strategy is ReplanStrategy.FULL or decision.failed_step_id is None:
            return new_plan, {}, usage
        return (*_splice(state, new_plan, decision.failed_step_id), usage)

    @staticmethod
    def record(
        decision: ReplanDecision, old: ExecutionPlan, new: ExecutionPlan | None
    ) -> ReplanRecord:
        return ReplanRecord(
            **decision.model_dump(),
            old_steps=[_describe(s) for s in old.steps],
            new_steps=[_describe(s) for s in new.steps] if new else [],
        )


def _describe(step: PlanStep) -> str:
    return f"{step.step_id}. {step.action.value}: {step.description}"


def _keep_before(state: RunState, step_id: int | None) -> dict[int, StepResult]:
    return {
        k: r
        for k, r in state.step_results.items()
        if step_id is not None and k < step_id and r.status in DONE
    }


def _weak_answer_found(state: RunState, step_id: int | None) -> bool:
    """The weak step is the answer, no step failed, and an earlier search found passages."""
    plan = state.plan
    if plan is None or step_id is None or state.failure_count:
        return False
    if plan.step(step_id).action is not ActionType.REASONING:
        return False
    return any(
        s.action in GATHERING
        and s.step_id < step_id
        and (found := state.step_results.get(s.step_id)) is not None
        and found.status in DONE
        and bool(found.sources)
        for s in plan.steps
    )


def _is_optional(state: RunState, step: PlanStep) -> bool:
    """A failed gathering step can be skipped when another gathering step succeeded."""
    if step.action not in GATHERING:
        return False
    plan = state.plan
    assert plan is not None
    return any(
        s.step_id != step.step_id
        and s.action in GATHERING
        and state.step_results.get(s.step_id) is not None
        and state.step_results[s.step_id].status in DONE
        for s in plan.steps
    )


def _apply_fallback(plan: ExecutionPlan, step_id: int | None) -> ExecutionPlan:
    steps = []
    for step in plan.steps:
        if step.step_id == step_id and step.fallback is not None:
            step = step.model_copy(
                update={
                    "action": step.fallback,
                    "description": f"[fallback] {step.description}",
                    "fallback": None,
                    "fallback_of": step.action,
                }
            )
        steps.append(step)
    return plan.model_copy(update={"steps": steps, "requires_confirmation": False})


def _skip_step(state: RunState, step_id: int | None) -> tuple[ExecutionPlan, dict[int, StepResult]]:
    plan = state.plan
    assert plan is not None
    steps = [
        s.model_copy(update={"depends_on": [d for d in s.depends_on if d != step_id]})
        for s in plan.steps
    ]
    kept = {k: r for k, r in state.step_results.items() if r.status in DONE}
    if step_id is not None:
        old = state.step_results.get(step_id)
        kept[step_id] = StepResult(
            step_id=step_id,
            action=plan.step(step_id).action,
            status=StepStatus.SKIPPED,
            error=f"skipped after failure: {old.error if old else 'unknown'}",
        )
    return plan.model_copy(update={"steps": steps}), kept


def _splice(
    state: RunState, new_plan: ExecutionPlan, failed_step_id: int
) -> tuple[ExecutionPlan, dict[int, StepResult]]:
    """PARTIAL: keep completed steps before the failure, append the new plan after them."""
    old = state.plan
    assert old is not None
    kept_results = _keep_before(state, failed_step_id)
    kept_steps, results = _renumbered(
        [s for s in old.steps if s.step_id in kept_results], kept_results
    )
    offset = len(kept_steps)
    kept_gathering = [s.step_id for s in kept_steps if s.action in GATHERING]
    appended = []
    for s in new_plan.steps:
        deps = [d + offset for d in s.depends_on]
        if s.action is ActionType.REASONING:
            deps = sorted({*kept_gathering, *deps})
        appended.append(s.model_copy(update={"step_id": s.step_id + offset, "depends_on": deps}))
    steps = kept_steps + appended
    plan = new_plan.model_copy(update={"steps": steps, "estimated_steps": len(steps)})
    return plan, results
