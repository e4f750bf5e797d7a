"""The confidence maps `grace calibrate` fitted, one per provider: `agent.ports.CalibrationStore`
on SQLAlchemy. Every process loads them when it starts (bot/service/wiring.py)."""

from __future__ import annotations

import json

from sqlalchemy import delete, select

from agent.confidence import Calibration, FittedCalibration
from storage.sql import SqlStore, rowcount
from storage.tables import CalibrationRow


class SqlCalibrationStore(SqlStore):
    """`agent.ports.CalibrationStore` on SQLAlchemy: a fit replaces its provider's row."""

    async def load(self) -> list[FittedCalibration]:
        async with self._reads.begin() as session:
            rows = (
                await session.scalars(select(CalibrationRow).order_by(CalibrationRow.provider))
            ).all()
            return [_fitted(row) for row in rows]

    async def get(self, provider: str) -> FittedCalibration | None:
        async with self._reads.begin() as session:
            row = await session.get(CalibrationRow, provider)
            return None if row is None else _fitted(row)

    async def save(self, fit: FittedCalibration) -> None:
        values = {
            "intercept": fit.calibration.intercept,
            "weights_json": json.dumps(fit.calibration.weights),
            "cases_file": fit.cases_file,
            "cases": fit.cases,
            "answers": fit.answers,
            "folds": fit.folds,
            "fitted_at": fit.fitted_at,
        }
        stmt = self._insert(CalibrationRow).values(provider=fit.provider, **values)
        stmt = stmt.on_conflict_do_update(index_elements=[CalibrationRow.provider], set_=values)
        async with self._sessions.begin() as session:
            await session.execute(stmt)

    async def reset(self, provider: str) -> bool:
        """Forget the provider's fit (its shipped map applies again); False if none."""
        async with self._sessions.begin() as session:
            result = await session.execute(
                delete(CalibrationRow).where(CalibrationRow.provider == provider)
            )
            return bool(rowcount(result))


def _fitted(row: CalibrationRow) -> FittedCalibration:
    return FittedCalibration(
        provider=row.provider,
        calibration=Calibration(intercept=row.intercept, weights=json.loads(row.weights_json)),
        fitted_at=row.fitted_at,
        cases_file=row.cases_file,
        cases=row.cases,
        answers=row.answers,
        folds=row.folds,
    )
