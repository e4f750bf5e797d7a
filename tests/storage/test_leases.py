"""Run leases (storage/leases.py): only the holder renews, and renewing is not a new
version of the run."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from agent.schemas import RunStatus, utcnow
from storage.run_store import SqlRunStore
from storage.tables import RunRow
from tests.samples import make_state


async def test_only_the_lease_holder_renews_and_renewing_is_not_a_new_version(
    store: SqlRunStore, engine: AsyncEngine
) -> None:
    state = make_state(status=RunStatus.RUNNING, with_intervention=False)
    state.worker = "host:1:holder"
    state.lease_expires_at = utcnow() + timedelta(seconds=30)
    await store.save(state)
    later = utcnow() + timedelta(minutes=5)

    assert await store.renew_lease(state.run_id, "host:2:intruder", later) is False
    assert await store.renew_lease(state.run_id, "host:1:holder", later) is True

    stored = await store.load(state.run_id)
    assert stored is not None
    assert (stored.version, stored.lease_expires_at) == (1, later)
    async with engine.connect() as connection:
        column = await connection.scalar(
            select(RunRow.lease_expires_at).where(RunRow.run_id == state.run_id)
        )
    assert column == later
    state.status = RunStatus.PAUSED  # the holder's save after a renewal still succeeds
    state.worker = state.lease_expires_at = None
    await store.save(state)
    assert await store.renew_lease(state.run_id, "host:1:holder", later) is False
    assert await store.renew_lease("no-such-run", "host:1:holder", later) is False
