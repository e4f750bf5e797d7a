"""Intakes sharing one database.

- Replicas: a Slack request is processed by one of them at a time, and taken over only
  when its holder's claim lapsed or the holder is dead.
- `grace serve`'s front and worker: the front only stores — each row claimed by the
  worker's owner id — and hands the new ids over; the worker processes exactly those,
  once, and its inbox sweep finds a row whose hand-over was lost.
"""

from __future__ import annotations

import asyncio
import socket
import sys
from collections.abc import Coroutine
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from agent.schemas import utcnow
from bot.service.tasks import TaskRunner
from bot.slack.intake import Handler, Intake, Received
from bot.slack.items import InboxKind, Question, stored
from storage.inbox import InboxItem, SqlInbox


@pytest.fixture
def engine(sqlite_engine: AsyncEngine) -> AsyncEngine:
    return sqlite_engine


class Replica:
    """An intake whose question processor records what it took and, with `hold`, keeps
    each until `release` is set (a replica busy with it)."""

    def __init__(
        self, engine: AsyncEngine, *, claim_seconds: float = 60.0, hold: bool = True
    ) -> None:
        self.taken: list[str] = []
        self.release = asyncio.Event()
        if not hold:
            self.release.set()
        self.tasks = TaskRunner()
        self.intake = Intake(
            inbox=SqlInbox(engine),
            tasks=self.tasks,
            processors={InboxKind.QUESTION: Handler(self._process, intake_lane=True)},
            claim_seconds=claim_seconds,
        )

    async def _process(self, received: Received[Question]) -> Coroutine[Any, Any, None] | None:
        self.taken.append(received.event_id)
        await self.release.wait()
        return None


def _question(event_id: str) -> InboxItem:
    item = Question(team="T1", channel="C1", thread_ts=f"{event_id}.0", user="U1", text="hi")
    return stored(item, event_id=event_id)


# ---- replicas ------------------------------------------------------------------------


async def _settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0.01)


async def test_a_request_being_worked_on_is_left_to_its_replica(engine: AsyncEngine) -> None:
    a, b = Replica(engine), Replica(engine)
    assert await a.intake.accept(_question("Ev1"))
    await _settle()
    assert a.taken == ["Ev1"]

    assert await b.intake.resume() == 0, "b must not take what a is working on"
    assert await a.intake.resume() == 0, "a renews its claim and does not start it twice"
    await _settle()
    assert b.taken == [] and a.taken == ["Ev1"]

    a.release.set()
    await _settle()
    assert await SqlInbox(engine).pending() == []
    await a.intake.close()
    await b.intake.close()


async def test_a_lapsed_claim_is_taken_over_once(engine: AsyncEngine) -> None:
    a = Replica(engine, claim_seconds=0.2)
    b, c = Replica(engine), Replica(engine)
    assert await a.intake.accept(_question("Ev1"))
    await _settle()
    await asyncio.sleep(0.3)  # a is stuck and never renews: its claim lapses

    taken = await asyncio.gather(b.intake.resume(), c.intake.resume())
    await _settle()
    assert sorted(taken) == [0, 1], "exactly one replica takes it over"
    assert sorted(b.taken + c.taken) == ["Ev1"]
    for replica in (a, b, c):
        replica.release.set()
    await _settle()
    for replica in (a, b, c):
        await replica.intake.close()


async def test_the_requests_of_a_dead_process_are_taken_at_once(engine: AsyncEngine) -> None:
    gone = await asyncio.create_subprocess_exec(sys.executable, "-c", "pass")
    await gone.wait()
    dead_worker = f"{socket.gethostname()}:{gone.pid}:deadbeef"
    inbox = SqlInbox(engine)

    far = utcnow() + timedelta(hours=1)
    await inbox.add([_question("Ev1")], owner=dead_worker, claimed_until=far)
    await inbox.add([_question("Ev2")], owner="elsewhere:1:alive", claimed_until=far)

    b = Replica(engine)
    assert await b.intake.resume() == 1
    await _settle()
    assert b.taken == ["Ev1"], "a live holder on another host keeps its claim"
    b.release.set()
    await _settle()
    await b.intake.close()


# ---- grace serve's front and worker (a replica that does not hold what it takes) ---


def _front(engine: AsyncEngine, worker: Replica, handed: list[list[int]]) -> Intake:
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
    worker, handed = Replica(engine, hold=False), []
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
    worker = Replica(engine, hold=False)
    front = _front(engine, worker, [])  # the ids never reach the worker
    assert await front.accept(_question("Ev1"))

    assert await worker.intake.resume() == 1
    await worker.tasks.idle()
    assert worker.taken == ["Ev1"]
    await front.close()
    await worker.intake.close()


async def test_another_workers_rows_are_not_taken_while_it_lives(engine: AsyncEngine) -> None:
    mine, other, handed = Replica(engine, hold=False), Replica(engine, hold=False), []
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
