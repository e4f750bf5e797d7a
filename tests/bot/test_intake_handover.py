"""`grace serve`'s two intakes on one database: the front's only stores — each row
claimed by the worker's owner id — and hands the new ids over; the worker's processes
exactly those, once, and its inbox sweep finds a row whose hand-over was lost."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.service.tasks import TaskRunner
from bot.slack.intake import Handler, Intake, Received
from bot.slack.items import InboxKind, Question, stored
from storage.inbox import InboxItem, SqlInbox


@pytest.fixture
def engine(sqlite_engine: AsyncEngine) -> AsyncEngine:
    return sqlite_engine


def _question(event_id: str) -> InboxItem:
    item = Question(team="T1", channel="C1", thread_ts=f"{event_id}.0", user="U1", text="hi")
    return stored(item, event_id=event_id)


class Worker:
    """The worker's intake, recording what it processed."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.taken: list[str] = []
        self.done = asyncio.Event()
        self.tasks = TaskRunner()
        self.intake = Intake(
            inbox=SqlInbox(engine),
            tasks=self.tasks,
            processors={InboxKind.QUESTION: Handler(self._process, intake_lane=True)},
        )

    async def _process(self, received: Received[Question]) -> Coroutine[Any, Any, None] | None:
        self.taken.append(received.event_id)
        return None


def _front(engine: AsyncEngine, worker: Worker, handed: list[list[int]]) -> Intake:
    return Intake(
        inbox=SqlInbox(engine),
        tasks=TaskRunner(),
        processors={},
        owner=worker.intake.owner,
        handed_to=handed.append,
    )


async def test_the_front_stores_for_the_worker_which_processes_each_row_once(
    engine: AsyncEngine,
) -> None:
    worker, handed = Worker(engine), []
    front = _front(engine, worker, handed)
    accepted = await asyncio.gather(*(front.accept(_question(f"Ev{n}")) for n in range(5)))
    assert all(accepted)
    assert not await front.accept(_question("Ev0")), "a retry is still refused"

    pending = await SqlInbox(engine).pending()
    assert {e.owner for e in pending} == {worker.intake.owner}, "claimed by the worker"
    assert front.owner == worker.intake.owner
    ids = [i for batch in handed for i in batch]
    assert sorted(ids) == sorted(e.id for e in pending)

    assert await worker.intake.take(ids) == 5
    assert await worker.intake.take(ids) == 0, "told twice, started once"
    await worker.tasks.idle()
    assert sorted(worker.taken) == [f"Ev{n}" for n in range(5)]
    assert await SqlInbox(engine).pending() == []
    assert await worker.intake.take(ids) == 0, "done rows are not taken again"
    await front.close()
    await worker.intake.close()


async def test_a_row_whose_hand_over_was_lost_is_found_by_the_sweep(engine: AsyncEngine) -> None:
    worker = Worker(engine)
    front = _front(engine, worker, [])  # the ids never reach the worker
    assert await front.accept(_question("Ev1"))

    assert await worker.intake.resume() == 1
    await worker.tasks.idle()
    assert worker.taken == ["Ev1"]
    await front.close()
    await worker.intake.close()


async def test_another_workers_rows_are_not_taken_while_it_lives(engine: AsyncEngine) -> None:
    mine, other, handed = Worker(engine), Worker(engine), []
    front = _front(engine, other, handed)
    assert await front.accept(_question("Ev1"))

    assert await mine.intake.take(handed[0]) == 0
    assert await mine.intake.resume() == 0
    assert await other.intake.take(handed[0]) == 1
    await other.tasks.idle()
    assert other.taken == ["Ev1"] and mine.taken == []
    await front.close()
    await mine.intake.close()
    await other.intake.close()
