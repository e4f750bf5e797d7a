"""The token usage / cost ledger (SPEC §2.8): what was spent, when, by which run.

Hourly and daily limits are enforced across replicas from this table, so every LLM
call's usage is one committed row.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, insert, select
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker

from agent.schemas import TokenUsage, utcnow
from storage.db import reader
from storage.tables import UsageRow


class SqlUsageLedger:
    """`agent.ports.UsageLedger` on SQLAlchemy."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._sessions = async_sessionmaker(engine, expire_on_commit=False)
        self._reads = async_sessionmaker(reader(engine), expire_on_commit=False)

    async def record(self, run_id: str, usage: TokenUsage, model: str) -> None:
        async with self._sessions.begin() as session:
            await session.execute(
                insert(UsageRow).values(
                    run_id=run_id,
                    model=model,
                    input_tokens=usage.input_tokens,
                    output_tokens=usage.output_tokens,
                    calls=usage.calls,
                    cost_usd=usage.cost_usd,
                    created_at=utcnow(),
                )
            )

    async def spent_since(self, since: datetime) -> float:
        async with self._reads.begin() as session:
            total = await session.scalar(
                select(func.coalesce(func.sum(UsageRow.cost_usd), 0.0)).where(
                    UsageRow.created_at >= since
                )
            )
            return float(total or 0.0)

    async def run_cost(self, run_id: str) -> float:
        async with self._reads.begin() as session:
            total = await session.scalar(
                select(func.coalesce(func.sum(UsageRow.cost_usd), 0.0)).where(
                    UsageRow.run_id == run_id
                )
            )
            return float(total or 0.0)

    async def totals(self, since: datetime) -> TokenUsage:
        async with self._reads.begin() as session:
            row = (
                await session.execute(
                    select(
                        func.coalesce(func.sum(UsageRow.input_tokens), 0),
                        func.coalesce(func.sum(UsageRow.output_tokens), 0),
                        func.coalesce(func.sum(UsageRow.calls), 0),
                        func.coalesce(func.sum(UsageRow.cost_usd), 0.0),
                    ).where(UsageRow.created_at >= since)
                )
            ).one()
        return TokenUsage(
            input_tokens=int(row[0]),
            output_tokens=int(row[1]),
            calls=int(row[2]),
            cost_usd=float(row[3]),
        )
