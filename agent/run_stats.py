"""The same figures `/grace stats` shows for the workspace (storage's `stats`), computed
over one person's own runs: what a member who is not an approver may see."""

from __future__ import annotations

from collections.abc import Sequence

from agent.schemas import RunState, RunStatus


def _ratio(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def stats_of(runs: Sequence[RunState]) -> dict[str, float | int]:
    """Counts, rates (0–1) and cost of `runs`, with the workspace figures' names."""
    count = {status: sum(1 for r in runs if r.status is status) for status in RunStatus}
    total = len(runs)
    replanned = [r for r in runs if r.replan_count > 0]
    confidences = [
        r.overall_confidence
        for r in runs
        if r.status is RunStatus.ANSWERED and r.overall_confidence is not None
    ]
    return {
        "runs": total,
        "answered": count[RunStatus.ANSWERED],
        "cancelled": count[RunStatus.CANCELLED],
        "failed": count[RunStatus.FAILED],
        "paused": count[RunStatus.PAUSED],
        "running": count[RunStatus.RUNNING] + count[RunStatus.PLANNING],
        "completion_rate": _ratio(count[RunStatus.ANSWERED], total),
        "hitl_rate": _ratio(sum(1 for r in runs if r.interventions), total),
        "replan_rate": _ratio(len(replanned), total),
        "replan_success_rate": _ratio(
            sum(1 for r in replanned if r.status is RunStatus.ANSWERED), len(replanned)
        ),
        "avg_confidence": sum(confidences) / len(confidences) if confidences else 0.0,
        "cost_usd": sum(r.token_usage.cost_usd for r in runs),
    }
