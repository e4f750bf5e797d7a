"""One worker per run: the lease this worker holds on the runs it drives, the heartbeat
that renews it, and what a worker does when it finds its copy of a run superseded.

A lease lets several processes share one database: whoever finds a run whose lease ran
out (or whose worker visibly died) may adopt it, and the run store's compare-and-set
makes sure a presumed-dead worker that wakes up writes nothing."""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta

from agent.ports import RunStore
from agent.schemas import RunState, RunStatus, utcnow

log = logging.getLogger(__name__)


class Superseded(Exception):
    """The stored run moved on without this task: stop, write nothing more."""


class CancelledElsewhere(Superseded):
    """Someone cancelled the run (another task or process) while this one worked on it."""


class TakenOver(Superseded):
    """Another worker took the run over (it presumed this one dead)."""


class LeaseKeeper:
    """The leases of one worker (one process)."""

    def __init__(self, *, store: RunStore, worker_id: str, lease_seconds: float) -> None:
        self.store = store
        self.worker_id = worker_id
        self.lease_seconds = lease_seconds
        self.held: set[str] = set()  # active runs whose lease this worker holds

    def stamp(self, state: RunState) -> None:
        """An active run is held by this worker until its lease runs out; others are not.
        Called on every commit, so the lease travels with the saved run."""
        if state.status.is_active:
            state.worker = self.worker_id
            state.lease_expires_at = utcnow() + timedelta(seconds=self.lease_seconds)
            self.held.add(state.run_id)
        else:
            state.worker = None
            state.lease_expires_at = None
            self.held.discard(state.run_id)

    async def renew(self, state: RunState) -> bool:
        """Extend the lease of a run this worker holds; False when it is no longer ours."""
        until = utcnow() + timedelta(seconds=self.lease_seconds)
        if not await self.store.renew_lease(state.run_id, self.worker_id, until):
            self.held.discard(state.run_id)
            return False
        state.lease_expires_at = until
        return True

    async def keep(self, state: RunState) -> None:
        """Renew the run's lease while this worker drives it, so nobody presumes it dead."""
        while True:
            await asyncio.sleep(self.lease_seconds / 4)
            if not state.status.is_active or state.worker != self.worker_id:
                continue
            try:
                renewed = await self.renew(state)
            except Exception as exc:  # a database hiccup: the next beat tries again
                log.warning(  # one line: it is retried, a traceback would read as a crash
                    "renewing the run's lease failed (%s: %s); trying again",
                    type(exc).__name__,
                    exc,
                    extra={"run_id": state.run_id},
                )
                continue
            if not renewed:
                log.warning("lost the run's lease", extra={"run_id": state.run_id})
                return

    async def release_all(self) -> list[str]:
        """Hand every run this worker still holds to whoever adopts abandoned runs next
        (at shutdown, once no task drives them any more). The run ids released."""
        released = []
        for run_id in sorted(self.held):
            if await self.store.renew_lease(run_id, self.worker_id, utcnow()):
                released.append(run_id)
        self.held.clear()
        return released

    async def adopt_stored(self, state: RunState) -> Superseded:
        """Our copy is stale: take the stored run as the truth and say why we must stop
        (the caller raises what this returns)."""
        self.held.discard(state.run_id)
        stored = await self.store.load(state.run_id)
        if stored is None:
            return TakenOver(state.run_id)
        for name in RunState.model_fields:
            if name != "execution_time_ms":
                setattr(state, name, getattr(stored, name))
        if stored.status is RunStatus.CANCELLED:
            return CancelledElsewhere(state.run_id)
        return TakenOver(state.run_id)
