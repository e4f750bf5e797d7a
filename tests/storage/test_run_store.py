"""`SqlRunStore`, the one object over the per-aggregate stores (storage/run_store.py)."""

from __future__ import annotations

import inspect
import typing

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from agent.memory_store import InMemoryRunStore
from agent.ports import RunStore
from storage.run_store import SqlRunStore
from storage.sql import SqlStore
from tests.samples import make_state


def _port_methods() -> list[str]:
    """The port's own methods, as declared (not what `Protocol` adds)."""
    return [n for n, v in vars(RunStore).items() if inspect.isfunction(v) and n[0] != "_"]


@pytest.mark.parametrize("implementation", [SqlRunStore, InMemoryRunStore])
def test_implements_the_agent_port(implementation: type) -> None:
    """Every method of the `RunStore` port is there, a coroutine as in the port, taking
    the same parameters (names, kinds, defaults) of the same types, and returning the
    same type: what a type checker would say, for a suite that runs none."""
    assert {"save", "load"} <= set(_port_methods()), "the port's methods are found"
    for name in _port_methods():
        wanted, got = getattr(RunStore, name), getattr(implementation, name, None)
        assert got is not None, f"{implementation.__name__} has no {name}"
        assert inspect.iscoroutinefunction(got) == inspect.iscoroutinefunction(wanted), name
        shape = [(p.name, p.kind, p.default) for p in inspect.signature(wanted).parameters.values()]
        assert [
            (p.name, p.kind, p.default) for p in inspect.signature(got).parameters.values()
        ] == shape, name
        assert typing.get_type_hints(got) == typing.get_type_hints(wanted), name


async def test_its_parts_share_one_engine_and_one_health(
    store: SqlRunStore, engine: AsyncEngine
) -> None:
    parts = [part for part in vars(store).values() if isinstance(part, SqlStore)]
    assert len(parts) == 8
    assert all(part.engine is engine and part.health is store.health for part in parts)

    state = make_state()
    await store.save(state)  # a call through the facade reaches the same database
    assert await store.runs.load(state.run_id) == await store.load(state.run_id)
