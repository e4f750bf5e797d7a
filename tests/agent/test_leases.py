"""Runs are driven by one worker at a time: a live worker keeps its run (it renews its
lease while a step is slow), a silent or dead one loses it to the next process, and a
worker that lost its run never writes to it again."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta

import pytest

from agent.config import AgentConfig, ExecutionConfig
from agent.knowledge.lexical import HashingEmbedder
from agent.knowledge.qdrant_kb import QdrantKnowledgeBase
from agent.memory_store import InMemoryRunStore
from agent.orchestrator import Orchestrator
from agent.ports import ClaimResult, RunConflictError, RunEvent, RunEventType
from agent.schemas import InterventionAnswer, RunState, RunStatus, StepStatus, utcnow
from agent.workers import is_abandoned, is_dead_here, new_worker_id
from tests.agent.conftest import ASKER, OrchestratorFactory
from tests.agent.doubles import ControlledKB, RecordingObserver, ScriptedModel, draft, reasoning
from tests.agent.doubles import search as search_step

QUESTION = "How many vacation days do new employees get?"
SHORT_LEASE = AgentConfig(execution=ExecutionConfig(lease_seconds=1.0))  # renewed every 0.25 s


def _plan() -> ScriptedModel:
    return ScriptedModel([draft(search_step(1, "vacation days new employees"), reasoning(2, [1]))])


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


async def _until(predicate: Callable[[], bool]) -> None:
    for _ in range(1000):
        if predicate():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the condition never became true")


async def _lease_of(store: InMemoryRunStore, run_id: str) -> datetime:
    state = await store.load(run_id)
    assert state is not None and state.lease_expires_at is not None, "the run has a lease"
    return state.lease_expires_at


async def _eventually(check: Callable[[], Awaitable[bool]]) -> None:
    """`_until` for a check that reads the store (10 s at most)."""
    for _ in range(1000):
        if await check():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the condition never became true")


class RenewalsFail:
    """The shared store as seen by a worker cut off from the database between commits (a
    network partition, a long pause): its lease renewals never arrive."""

    def __init__(self, shared: InMemoryRunStore) -> None:
        self._shared = shared

    async def save(self, state: RunState, event: RunEvent | None = None) -> None:
        await self._shared.save(state, event)

    async def load(self, run_id: str) -> RunState | None:
        return await self._shared.load(run_id)

    async def claim_intervention(
        self, run_id: str, intervention_id: str, answer: InterventionAnswer
    ) -> ClaimResult:
        return await self._shared.claim_intervention(run_id, intervention_id, answer)

    async def renew_lease(self, run_id: str, worker: str, until: datetime) -> bool:
        raise ConnectionError("the database is unreachable from this worker")


# ---------------------------------------------------------------------- worker ids


def test_a_worker_is_dead_only_when_this_host_can_tell() -> None:
    me = new_worker_id()
    host = socket.gethostname()
    assert not is_dead_here(me)
    assert not is_dead_here(f"{host}:{os.getppid()}:abcd"), "a live process"
    assert is_dead_here(f"{host}:{_dead_pid()}:abcd"), "a process that exited"
    assert is_dead_here(f"{host}:{os.getpid()}:older"), "our pid, an earlier life"
    assert not is_dead_here(f"elsewhere:{_dead_pid()}:abcd"), "another host: unknown"
    assert not is_dead_here("garbage")


def test_only_active_runs_with_a_gone_worker_are_abandoned() -> None:
    me, now = new_worker_id(), utcnow()
    other = "elsewhere:1:abcd"
    live = RunState(
        query="q", status=RunStatus.RUNNING, worker=other, lease_expires_at=now + timedelta(1)
    )
    assert not is_abandoned(live, me=me, now=now)
    assert is_abandoned(live, me=me, now=now + timedelta(days=2)), "lease ran out"
    assert is_abandoned(live.model_copy(update={"worker": None}), me=me, now=now)
    assert not is_abandoned(live.model_copy(update={"worker": me}), me=me, now=now)
    paused = live.model_copy(update={"status": RunStatus.PAUSED})
    assert not is_abandoned(paused, me=me, now=now + timedelta(days=2))


# ---------------------------------------------------------------------- the store


async def test_the_store_refuses_a_stale_copy(store: InMemoryRunStore) -> None:
    state = RunState(query="q")
    await store.save(state)
    mine = await store.load(state.run_id)
    theirs = await store.load(state.run_id)
    assert mine is not None and theirs is not None
    theirs.status = RunStatus.CANCELLED
    await store.save(theirs)
    mine.status = RunStatus.RUNNING
    with pytest.raises(RunConflictError):
        await store.save(mine)
    stored = await store.load(state.run_id)
    assert stored is not None and stored.status is RunStatus.CANCELLED
    with pytest.raises(RunConflictError):
        await store.save(RunState(query="q", run_id=state.run_id))  # the id is taken


# ---------------------------------------------------------------------- the orchestrator


async def test_a_live_worker_keeps_its_run_through_a_slow_step(
    kb: QdrantKnowledgeBase, store: InMemoryRunStore, make_orchestrator: OrchestratorFactory
) -> None:
    slow = ControlledKB(kb, delay=3.0, delay_times=1)
    worker = make_orchestrator(llm=_plan(), knowledge_base=slow, config=SHORT_LEASE)
    replica = make_orchestrator(config=SHORT_LEASE)
    run = asyncio.create_task(worker.start(QUESTION, asker=ASKER, run_id="run-live"))
    await _until(lambda: len(slow.calls) == 1)
    first = await _lease_of(store, "run-live")
    lease = timedelta(seconds=SHORT_LEASE.execution.lease_seconds)

    async def outlived_twice() -> bool:  # only renewals keep the run the worker's
        return utcnow() > first + lease and await _lease_of(store, "run-live") > utcnow()

    await _eventually(outlived_twice)

    assert await replica.adopt("run-live") is None
    state = await run
    assert state.status is RunStatus.ANSWERED, state.error
    assert len(slow.calls) == 1, "the search ran twice"
    assert state.worker is None and state.lease_expires_at is None


async def test_a_silent_worker_loses_its_run_and_never_writes_to_it_again(
    kb: QdrantKnowledgeBase, store: InMemoryRunStore, make_orchestrator: OrchestratorFactory
) -> None:
    slow = ControlledKB(kb, delay=3.0, delay_times=1)  # outlasts the takeover below
    silent_log = RecordingObserver()
    silent = Orchestrator(
        llm=_plan(),
        knowledge_base=slow,
        store=RenewalsFail(store),
        embedder=HashingEmbedder(),
        config=SHORT_LEASE,
        observers=[silent_log],
    )
    replica_log = RecordingObserver()
    replica = make_orchestrator(llm=_plan(), config=SHORT_LEASE, observers=[replica_log])
    run = asyncio.create_task(silent.start(QUESTION, asker=ASKER, run_id="run-silent"))
    await _until(lambda: len(slow.calls) == 1)
    lease = await _lease_of(store, "run-silent")

    async def ran_out() -> bool:  # nobody renewed it
        return utcnow() > lease and await _lease_of(store, "run-silent") == lease

    await _eventually(ran_out)

    adopted = await replica.adopt("run-silent")
    assert adopted is not None and adopted.worker == replica.worker_id
    await replica.run_adopted(adopted)
    assert adopted.status is RunStatus.ANSWERED, adopted.error
    assert replica_log.events[0].type is RunEventType.RUN_RECOVERED

    late = await run  # the silent worker's step ends; its next commit is refused
    events_after_takeover = [e for e in silent_log.events if e.at > adopted.created_at]
    assert all(e.type is not RunEventType.ANSWER_READY for e in events_after_takeover)
    stored = await store.load("run-silent")
    assert stored is not None and stored.status is RunStatus.ANSWERED
    assert stored.version == late.version, "the late worker took the stored run as the truth"
    assert stored.final_answer == adopted.final_answer


async def test_a_run_whose_worker_died_on_this_host_is_taken_over_at_once(
    store: InMemoryRunStore, make_orchestrator: OrchestratorFactory
) -> None:
    host = socket.gethostname()
    crashed = RunState(
        query=QUESTION,
        asker=ASKER,
        status=RunStatus.PLANNING,
        worker=f"{host}:{_dead_pid()}:deadbeef",
        lease_expires_at=utcnow() + timedelta(hours=1),  # it never got to give it back
    )
    await store.save(crashed)

    recovered = await make_orchestrator().recover(crashed.run_id)

    assert recovered is not None
    assert recovered.status is RunStatus.ANSWERED, recovered.error
    assert all(r.status is StepStatus.SUCCESS for r in recovered.step_results.values())


async def test_once_a_replica_adopted_a_run_the_others_leave_it_alone(
    store: InMemoryRunStore, make_orchestrator: OrchestratorFactory
) -> None:
    crashed = RunState(query=QUESTION, asker=ASKER, status=RunStatus.RUNNING)
    await store.save(crashed)  # no worker at all: written before leases existed
    replicas = [make_orchestrator() for _ in range(5)]

    adopted = await asyncio.gather(*(r.adopt(crashed.run_id) for r in replicas))

    winners = [state for state in adopted if state is not None]
    assert len(winners) == 1
    stored = await store.load(crashed.run_id)
    assert stored is not None and stored.worker == winners[0].worker
    assert stored.worker in {r.worker_id for r in replicas}


async def test_a_cancel_wins_over_a_worker_that_keeps_committing(
    kb: QdrantKnowledgeBase, make_orchestrator: OrchestratorFactory
) -> None:
    slow = ControlledKB(kb, delay=0.3, delay_times=1)
    worker = make_orchestrator(llm=_plan(), knowledge_base=slow)
    run = asyncio.create_task(worker.start(QUESTION, asker=ASKER, run_id="run-cancel"))
    await _until(lambda: len(slow.calls) == 1)

    cancelled = await make_orchestrator().cancel("run-cancel", user="U_ADMIN")

    assert cancelled is not None and cancelled.status is RunStatus.CANCELLED
    state = await run
    assert state.status is RunStatus.CANCELLED
    assert state.error == "cancelled by U_ADMIN"
    assert not state.final_answer
