"""How a run is shown outside Slack: the `--json` contract and the terminal text."""

from __future__ import annotations

from typing import Any

from agent.schemas import RunState, RunStatus

_STATUS = {
    RunStatus.ANSWERED: "answered",
    RunStatus.PAUSED: "paused",
    RunStatus.CANCELLED: "cancelled",
    RunStatus.FAILED: "failed",
    RunStatus.RUNNING: "running",
    RunStatus.PLANNING: "running",
}
STEP_ICON = {
    "pending": "⏳",
    "running": "🔄",
    "success": "✅",
    "partial": "⚠️",
    "failed": "❌",
    "skipped": "⏭️",
}


def run_json(state: RunState) -> dict[str, Any]:
    """One JSON object per run, the same for `ask`, `resume` and `show`."""
    steps = []
    if state.plan is not None:
        for step in state.plan.steps:
            result = state.step_results.get(step.step_id)
            steps.append(
                {
                    "step_id": step.step_id,
                    "action": step.action.value,
                    "description": step.description,
                    "depends_on": step.depends_on,
                    "status": result.status.value if result else "pending",
                    "confidence": result.confidence if result else None,
                    "level": result.level.value if result and result.level else None,
                    "breakdown": (
                        result.confidence_detail.breakdown
                        if result and result.confidence_detail
                        else {}
                    ),
                    "penalties": (
                        result.confidence_detail.penalties
                        if result and result.confidence_detail
                        else []
                    ),
                    "error": result.error if result else None,
                }
            )
    return {
        "run_id": state.run_id,
        "status": _STATUS[state.status],
        "question": state.query,
        "answer": state.final_answer,
        "sources": list(dict.fromkeys(s.source for s in state.sources)),
        "overall_confidence": state.overall_confidence,
        "level": state.level.value if state.level else None,
        "breakdown": state.overall_detail.breakdown if state.overall_detail else {},
        "model": state.llm_model,
        "plan": {
            "complexity": state.plan.complexity if state.plan else None,
            "requires_confirmation": state.plan.requires_confirmation if state.plan else None,
            "steps": steps,
        },
        "pending": _intervention(state.pending) if state.pending else None,
        "interventions": [_intervention(i) for i in state.interventions],
        "replans": [
            {
                "trigger": r.trigger.value,
                "strategy": r.strategy.value,
                "reason": r.reason,
                "old_steps": r.old_steps,
                "new_steps": r.new_steps,
            }
            for r in state.replan_history
        ],
        "llm_calls": state.token_usage.calls,
        "token_usage": {
            "input_tokens": state.token_usage.input_tokens,
            "output_tokens": state.token_usage.output_tokens,
            "total_tokens": state.token_usage.total_tokens,
        },
        "cost_usd": round(state.token_usage.cost_usd, 6),
        "error": state.error,
    }


def _intervention(request: Any) -> dict[str, Any]:
    return {
        "intervention_id": request.intervention_id,
        "kind": request.kind.value,
        "level": request.level.value,
        "question": request.question,
        "reason": request.reason,
        "options": request.options,
        "status": request.status.value,
        "step_id": request.step_id,
        "answered_by": request.answered_by,
    }


def run_text(state: RunState, *, with_plan: bool = True) -> str:
    """A readable summary for the terminal (without the plan and its replans when the
    person just watched them go by)."""
    lines = [f"Run {state.run_id} — {_STATUS[state.status]}", f"Q: {state.query}"]
    if state.status.is_active and state.worker:
        until = (
            state.lease_expires_at.isoformat(timespec="seconds") if state.lease_expires_at else "?"
        )
        lines.append(f"Worker: {state.worker} (lease until {until})")
    if state.plan is not None and with_plan:
        lines.append(f"Plan (complexity {state.plan.complexity:.2f}):")
        for step in state.plan.steps:
            result = state.step_results.get(step.step_id)
            status = result.status.value if result else "pending"
            conf = f" confidence {result.confidence:.2f}" if result and result.level else ""
            level = f" [{result.level.value}]" if result and result.level else ""
            lines.append(
                f"  {STEP_ICON[status]} {step.step_id}. {step.action.value}: "
                f"{step.description}{conf}{level}"
            )
    for record in state.replan_history if with_plan else []:
        lines.append(
            f"  ↻ replan {record.trigger.value} → {record.strategy.value}: {record.reason}"
        )
    if state.final_answer:
        lines += ["", state.final_answer, ""]
        names = list(dict.fromkeys(s.citation for s in state.sources))
        if names:
            lines.append("Sources: " + ", ".join(names))
        if state.overall_confidence is not None and state.level is not None:
            lines.append(
                f"Confidence: {state.overall_confidence:.2f} ({state.level.value}) · "
                f"model: {state.llm_model}"
            )
    if state.pending is not None:
        p = state.pending
        lines.append(f"Paused ({p.kind.value}): {p.question}")
        if p.reason:
            lines.append(f"  why: {p.reason}")
        if p.options:
            numbered = enumerate(p.options, start=1)  # numbered from 1, as in Slack
            lines.append("  options: " + ", ".join(f"[{n}] {o}" for n, o in numbered))
    if state.error:
        lines.append(f"Note: {state.error}")
    usage = state.token_usage
    lines.append(
        f"LLM calls: {usage.calls}, tokens: {usage.total_tokens}, cost: ${usage.cost_usd:.4f}"
    )
    return "\n".join(lines)
