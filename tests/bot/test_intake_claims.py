"""Two replicas' intakes on one database: a Slack request is processed by one of them at
a time, and taken over only when its holder's claim lapsed or the holder is dead."""

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
    """An intake whose question processor records what it took and waits to be let go."""

    def __init__(self, engine: AsyncEngine, name: str, *, claim_seconds: float = 60.0) -> None:
        self.name = name
        self.taken: list[str] = []
        self.release = asyncio.Event()
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
    item = Question(team="T1", channel="C1", thread_ts="1.0", user="U1", text="hi")
    return stored(item, event_id=event_id)


async def _settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0.01)


async def test_a_request_being_worked_on_is_left_to_its_replica(engine: AsyncEngine) -> None:
    a, b = Replica(engine, "a"), Replica(engine, "b")
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
    a = Replica(engine, "a", claim_seconds=0.2)
    b, c = Replica(engine, "b"), Replica(engine, "c")
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

    b = Replica(engine, "b")
    assert await b.intake.resume() == 1
    await _settle()
    assert b.taken == ["Ev1"], "a live holder on another host keeps its claim"
    b.release.set()
    await _settle()
    await b.intake.close()
