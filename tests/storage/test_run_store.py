"""`SqlRunStore`, the one object over the per-aggregate stores (storage/run_store.py)."""

from __future__ import annotations

import inspect

from sqlalchemy.ext.asyncio import AsyncEngine

from agent.ports import RunStore
from storage.run_store import SqlRunStore
from storage.sql import SqlStore
from tests.storage.helpers import make_state


def test_it_has_every_method_of_the_agent_port_with_the_same_signature(
    store: SqlRunStore,
) -> None:
    wanted = {
        name: inspect.signature(member)
        for name, member in vars(RunStore).items()
        if inspect.isfunction(member) and not name.startswith("_")
    }
    assert set(wanted) == {"save", "load", "renew_lease", "claim_intervention"}
    for name, signature in wanted.items():
        assert inspect.iscoroutinefunction(getattr(SqlRunStore, name)), name
        mine = inspect.signature(getattr(SqlRunStore, name))
        assert list(mine.parameters) == list(signature.parameters), name


async def test_its_parts_share_one_engine_and_one_health(
    store: SqlRunStore, engine: AsyncEngine
) -> None:
    parts = [part for part in vars(store).values() if isinstance(part, SqlStore)]
    assert len(parts) == 7
    assert all(part.engine is engine and part.health is store.health for part in parts)

    state = make_state()
    await store.save(state)  # a call through the facade reaches the same database
    assert await store.runs.load(state.run_id) == await store.load(state.run_id)
