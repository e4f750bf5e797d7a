"""Runs and their versions (SPEC §5): save with compare-and-set, read-change-write,
queries, and the audit trail written with each transition.

Every save of a Slack run also records, in the same transaction, that its messages must
be brought to the new version (the outbox entry, storage/outbox.py delivers it), so no
transition's messages can be forgotten.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from pydantic import BaseModel, ConfigDict
from sqlalchemy import Select, insert, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from agent.ports import RunConflictError, RunEvent
from agent.schemas import RunOrigin, RunState, RunStatus, ThreadKey, utcnow
from storage.db import retried_write
from storage.run_rows import event_values, load_state, load_states, write_state
from storage.sql import SqlStore
from storage.tables import DeliveryRow, RunEventRow, RunRow


class RecordedEvent(BaseModel):
    """One row of a run's audit trail."""

    model_config = ConfigDict(frozen=True, from_attributes=True)

    run_id: str
    seq: int
    event_type: str
    status: str | None
    message: str
    created_at: datetime


class SqlRuns(SqlStore):
    """Runs: the `save`/`load` half of `agent.ports.RunStore`, plus the queries the Slack
    layer and the command line make."""

    @retried_write
    async def save(self, state: RunState, event: RunEvent | None = None) -> None:
        """Write the run and its interventions if nobody else wrote the run since
        `state.version` (0: a new run), else raise `RunConflictError`; committed before
        returning. `event` goes to the audit trail in the same transaction, numbered by
        the run's new version (unique per run: the compare-and-set guarantees it).

        `state.version` is incremented and `state.updated_at` set on the caller's object
        (only once the commit succeeded), so it equals what `load` will return.
        """
        stored = state.model_copy(update={"version": state.version + 1, "updated_at": utcnow()})
        try:
            async with self._sessions.begin() as session:
                await write_state(session, stored, expected=state.version, insert_of=self._insert)
                if event is not None:
                    await session.execute(insert(RunEventRow).values(**event_values(event, stored)))
                await self._want_delivery(session, stored)
        except IntegrityError as exc:  # a new run whose id is taken
            raise RunConflictError(
                state.run_id, expected=state.version, stored=await self._version(state.run_id)
            ) from exc
        state.version = stored.version
        state.updated_at = stored.updated_at

    @retried_write
    async def mutate(self, run_id: str, change: Callable[[RunState], object]) -> RunState | None:
        """Read, change and write a run in one transaction: concurrent callers never lose
        each other's changes (e.g. a slash-command cancel racing a worker's update).

        `change` must be quick and synchronous — it runs while the write lock is held.
        Returns the saved state, or None when the run does not exist.
        """
        async with self._sessions.begin() as session:
            state = await load_state(session, run_id, lock=True)
            if state is None:
                return None
            expected = state.version
            change(state)
            state.version = expected + 1
            state.updated_at = utcnow()
            await write_state(session, state, expected=expected, insert_of=self._insert)
            await self._want_delivery(session, state)
            return state

    async def _want_delivery(self, session: AsyncSession, state: RunState) -> None:
        """The outbox entry: a Slack run's messages must show this version (same
        transaction as the run's write, so no transition's messages can be forgotten)."""
        if state.origin is RunOrigin.COMMAND_LINE:
            return  # nothing of it is posted anywhere
        now = utcnow()
        stmt = self._insert(DeliveryRow).values(
            run_id=state.run_id,
            channel_id=state.thread.channel_id,
            wanted_version=state.version,
            delivered_version=0,
            attempts=0,
            updated_at=now,
        )
        await session.execute(
            stmt.on_conflict_do_update(
                index_elements=[DeliveryRow.run_id],
                set_={"wanted_version": state.version, "updated_at": now},
            )
        )

    async def _version(self, run_id: str) -> int | None:
        async with self._reads.begin() as session:
            return await session.scalar(select(RunRow.version).where(RunRow.run_id == run_id))

    async def load(self, run_id: str) -> RunState | None:
        async with self._reads.begin() as session:
            return await load_state(session, run_id)

    async def _select_states(self, query: Select[tuple[str]]) -> list[RunState]:
        async with self._reads.begin() as session:
            blobs = list(await session.scalars(query))
            return await load_states(session, blobs)

    async def list_runs(
        self,
        *,
        status: RunStatus | None = None,
        channel_id: str | None = None,
        asker: str | None = None,
        limit: int = 50,
    ) -> list[RunState]:
        """Newest first."""
        query = select(RunRow.state_json)
        if asker is not None:
            query = query.where(RunRow.asker == asker)
        if status is not None:
            query = query.where(RunRow.status == RunStatus(status).value)
        if channel_id is not None:
            query = query.where(RunRow.channel_id == channel_id)
        query = query.order_by(RunRow.created_at.desc(), RunRow.run_id.desc()).limit(limit)
        return await self._select_states(query)

    async def latest_run_in_thread(self, thread: ThreadKey) -> RunState | None:
        query = (
            select(RunRow.state_json)
            .where(
                RunRow.team_id == thread.team_id,
                RunRow.channel_id == thread.channel_id,
                RunRow.thread_ts == thread.thread_ts,
            )
            .order_by(RunRow.created_at.desc(), RunRow.run_id.desc())
            .limit(1)
        )
        states = await self._select_states(query)
        return states[0] if states else None

    async def runs_with_status(self, status: RunStatus) -> list[RunState]:
        """Oldest first; e.g. RUNNING runs to recover after a crash."""
        query = (
            select(RunRow.state_json)
            .where(RunRow.status == RunStatus(status).value)
            .order_by(RunRow.created_at, RunRow.run_id)
        )
        return await self._select_states(query)

    async def events(self, run_id: str) -> list[RecordedEvent]:
        """The run's audit trail, in order."""
        async with self._reads.begin() as session:
            rows = await session.scalars(
                select(RunEventRow).where(RunEventRow.run_id == run_id).order_by(RunEventRow.seq)
            )
            return [RecordedEvent.model_validate(row) for row in rows]
