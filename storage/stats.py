"""Statistics for `/grace stats` and the command line: what happened to the runs asked
since a date, and what was spent."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import case, func, select, true

from agent.run_stats import figures
from agent.schemas import RunStatus
from storage.sql import SqlStore
from storage.tables import InterventionRow, RunRow, UsageRow


class SqlStats(SqlStore):
    """Read-only queries over runs, interventions and the usage ledger."""

    async def stats(self, *, since: datetime, team_id: str | None = None) -> dict[str, float | int]:
        """Metrics over runs created since `since` and money spent since then — of one
        Slack workspace's runs with `team_id` (OAuth mode: nothing shared between teams).

        Rates are fractions 0–1 (0.0 when there is nothing to divide by):
        completion_rate = answered / runs; hitl_rate = runs with an intervention / runs;
        replan_rate = runs replanned / runs; replan_success_rate = replanned runs that
        ended answered / runs replanned.
        """
        answered = RunStatus.ANSWERED.value
        is_answered = case((RunRow.status == answered, 1), else_=0)
        replanned = case((RunRow.replan_count > 0, 1), else_=0)
        mine = RunRow.team_id == team_id if team_id is not None else true()
        spent = (
            UsageRow.run_id.in_(select(RunRow.run_id).where(mine))
            if team_id is not None
            else true()
        )
        async with self._reads.begin() as session:
            rows = await session.execute(
                select(RunRow.status, func.count())
                .where(RunRow.created_at >= since, mine)
                .group_by(RunRow.status)
            )
            by_status = {status: int(n) for status, n in rows}
            totals = (
                await session.execute(
                    select(
                        func.count(),
                        func.coalesce(func.sum(replanned), 0),
                        func.coalesce(func.sum(replanned * is_answered), 0),
                    ).where(RunRow.created_at >= since, mine)
                )
            ).one()
            with_hitl = await session.scalar(
                select(func.count(func.distinct(RunRow.run_id)))
                .join(InterventionRow, InterventionRow.run_id == RunRow.run_id)
                .where(RunRow.created_at >= since, mine)
            )
            avg_confidence = await session.scalar(
                select(func.avg(RunRow.overall_confidence)).where(
                    RunRow.created_at >= since,
                    mine,
                    RunRow.status == answered,
                    RunRow.overall_confidence.is_not(None),
                )
            )
            cost = await session.scalar(
                select(func.coalesce(func.sum(UsageRow.cost_usd), 0.0)).where(
                    UsageRow.created_at >= since, spent
                )
            )
        runs, n_replanned, n_replan_ok = (int(v) for v in totals)
        count = {status: int(by_status.get(status.value, 0)) for status in RunStatus}
        return figures(
            count,
            runs=runs,
            with_hitl=int(with_hitl or 0),
            replanned=n_replanned,
            replanned_answered=n_replan_ok,
            avg_confidence=float(avg_confidence or 0.0),
            cost_usd=float(cost or 0.0),
        )
