"""The same figures `/grace stats` shows for the workspace (storage's `stats`), computed
over one person's own runs: what a member who is not an approver may see."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from agent.schemas import RunState, RunStatus


def _ratio(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def figures(
    count: Mapping[RunStatus, int],
    *,
    runs: int,
    with_hitl: int,
    replanned: int,
    replanned_answered: int,
    avg_confidence: float,
    cost_usd: float,
) -> dict[str, float | int]:
    """The workspace figures by name from the counts they are made of (`count`: runs by
    status, `runs`: all of them), so the SQL totals (storage/stats.py) and `stats_of`
    name and divide alike. Rates are fractions 0–1, 0.0 when there is nothing to divide
    by."""
    answered = count.get(RunStatus.ANSWERED, 0)
    return {
        "runs": runs,
        "answered": answered,
        "cancelled": count.get(RunStatus.CANCELLED, 0),
        "failed": count.get(RunStatus.FAILED, 0),
        "paused": count.get(RunStatus.PAUSED, 0),
        "running": count.get(RunStatus.RUNNING, 0) + count.get(RunStatus.PLANNING, 0),
        "completion_rate": _ratio(answered, runs),
        "hitl_rate": _ratio(with_hitl, runs),
        "replan_rate": _ratio(replanned, runs),
        "replan_success_rate": _ratio(replanned_answered, replanned),
        "avg_confidence": avg_confidence,
        "cost_usd": cost_usd,
    }


def stats_of(runs: Sequence[RunState]) -> dict[str, float | int]:
    """Counts, rates (0–1) and cost of `runs`, with the workspace figures' names."""
    count = {status: sum(1 for r in runs if r.status is status) for status in RunStatus}
    replanned = [r for r in runs if r.replan_count > 0]
    confidences = [
        r.overall_confidence
        for r in runs
        if r.status is RunStatus.ANSWERED and r.overall_confidence is not None
    ]
    return figures(
        count,
        runs=len(runs),
        with_hitl=sum(1 for r in runs if r.interventions),
        replanned=len(replanned),
        replanned_answered=sum(1 for r in replanned if r.status is RunStatus.ANSWERED),
        avg_confidence=sum(confidences) / len(confidences) if confidences else 0.0,
        cost_usd=sum(r.token_usage.cost_usd for r in runs),
    )
