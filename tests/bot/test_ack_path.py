"""The ack path does not wait for the agent: an event is acked (and stored first) while
runs are busy, and background work takes no step while a request is being acked —
except a step that holds a database connection, which the ack's own write may need.
No clocks: each test waits on a definite signal, or counts loop turns."""

from __future__ import annotations

import asyncio
from pathlib import Path

from agent.llm.offline import OfflineModel
from agent.ports import (
    Evaluation,
    EvaluationRequest,
    LLMReply,
    PlanDraft,
    PlanRequest,
    ReasoningRequest,
)
from bot.tasks import TaskRunner
from storage.db import make_engine, migrate
from storage.inbox import InboxItem, SqlInbox
from tests.databases import sqlite_url

from .conftest import VACATION_Q, HarnessFactory

BOUND = 10.0
"""Seconds to wait for a signal that comes at once unless the code under test is wrong."""
TURNS = 50
"""Loop turns given to background work that should not take any of them."""


class GatedModel:
    """The offline model, but planning waits at a gate: a run blocked in the agent."""

    def __init__(self) -> None:
        self._model = OfflineModel()
        self.planning = asyncio.Event()
        self.gate = asyncio.Event()

    @property
    def name(self) -> str:
        return self._model.name

    async def plan(self, request: PlanRequest) -> LLMReply[PlanDraft]:
        self.planning.set()
        await self.gate.wait()
        return await self._model.plan(request)

    async def reason(self, request: ReasoningRequest) -> LLMReply[str]:
        return await self._model.reason(request)

    async def evaluate(self, request: EvaluationRequest) -> LLMReply[Evaluation]:
        return await self._model.evaluate(request)


async def test_an_event_is_stored_and_acked_while_a_run_is_blocked_in_the_agent(
    make_harness: HarnessFactory,
) -> None:
    model = GatedModel()
    harness = await make_harness(llm=model)
    try:
        first = await harness.mention(VACATION_Q, ts="1700009000.000100", settle=False)
        assert first.status == 200
        await asyncio.wait_for(model.planning.wait(), BOUND)

        second = await asyncio.wait_for(
            harness.mention(VACATION_Q, ts="1700009000.000200", settle=False), BOUND
        )
        assert second.status == 200
        assert not model.gate.is_set(), "acked while the first run was still blocked"
        # stored before its ack: still in the inbox, or already taken in as a run
        pending = {e.payload["thread_ts"] for e in await harness.bot.services.inbox.pending()}
        taken = await harness.store.latest_run_in_thread(harness.key("1700009000.000200"))
        assert "1700009000.000200" in pending or taken is not None

        model.gate.set()
        await harness.settle()
        for ts in ("1700009000.000100", "1700009000.000200"):
            assert (await harness.run_in(ts)).status.value == "answered"
        assert await harness.bot.services.inbox.pending() == []
    finally:
        model.gate.set()  # a failed check must not leave the run blocked for teardown


async def _turns(condition: object, what: str) -> None:
    """Give the loop turns until `condition()` holds (bounded)."""
    for _ in range(10_000):
        if condition():  # type: ignore[operator]
            return
        await asyncio.sleep(0)
    raise AssertionError(f"never happened: {what}")


async def test_background_work_takes_no_step_while_a_request_is_acked() -> None:
    tasks = TaskRunner()
    steps = {"background": 0, "foreground": 0}
    done = asyncio.Event()

    async def busy(lane: str) -> None:
        while not done.is_set():
            steps[lane] += 1
            await asyncio.sleep(0)

    tasks.spawn(busy("background"))
    foreground = asyncio.create_task(busy("foreground"))
    await _turns(lambda: steps["background"] > 0, "the background task started")

    with tasks.acks.ack():
        background, started = steps["background"], steps["foreground"]
        await _turns(lambda: steps["foreground"] >= started + TURNS, "foreground steps")
        assert steps["background"] <= background + 1, "background work ran during the ack"

    await _turns(lambda: steps["background"] > background + 1, "background resumed after")
    done.set()
    await foreground
    await tasks.idle()


async def test_a_step_holding_the_database_is_not_held_back_by_an_ack(tmp_path: Path) -> None:
    """A background transaction holds SQLite's write lock; the ack's inbox write needs
    it. Holding that transaction back until the ack is done would deadlock them."""
    url = sqlite_url(tmp_path)
    await migrate(url)
    engine = make_engine(url)
    tasks = TaskRunner()
    tasks.acks.max_wait = 3600.0  # only the rule under test can let the holder go on
    tasks.acks.watch(engine)
    inbox = SqlInbox(engine)
    holding, release = asyncio.Event(), asyncio.Event()

    async def hold_the_write_lock() -> None:
        async with engine.begin() as connection:
            await connection.exec_driver_sql("SELECT 1")
            holding.set()
            await release.wait()  # resumed during the ack below

    try:
        tasks.spawn(hold_the_write_lock())
        await asyncio.wait_for(holding.wait(), BOUND)
        with tasks.acks.ack():
            release.set()
            item = InboxItem(event_id="Ev1", kind="question", payload={}, message_key="m1")
            assert await asyncio.wait_for(inbox.add([item]), BOUND) != [None]
        await asyncio.wait_for(tasks.idle(), BOUND)
    finally:
        await engine.dispose()
