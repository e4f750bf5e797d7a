"""The durable run store (SPEC §5): runs, interventions, Slack message references,
dedupe, feedback, thresholds, the audit trail and statistics.

Every public method is one short transaction that is committed before it returns, so a
caller may tell Slack about a transition as soon as the call returns. Nothing but the
database is awaited inside a transaction. Claims (answering or expiring an
intervention, deduplicating an event) are single conditional statements, so exactly one
of any number of concurrent callers — in this process or another — wins.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, cast

from pydantic import BaseModel, ConfigDict
from sqlalchemy import CursorResult, Select, case, delete, func, insert, select, update
from sqlalchemy.dialects import sqlite
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker
from sqlalchemy.orm import aliased

from agent.config import Thresholds
from agent.ports import ClaimResult, RunConflictError, RunEvent
from agent.schemas import (
    ConfidenceScore,
    InterventionAnswer,
    InterventionRequest,
    InterventionStatus,
    RunState,
    RunStatus,
    ThreadKey,
    utcnow,
)
from storage.db import WriteHealth, reader, retried_write
from storage.tables import (
    Base,
    DeliveryRow,
    FeedbackRow,
    InterventionRow,
    MessageRefRow,
    ProcessedEventRow,
    RunEventRow,
    RunRow,
    ThresholdsRow,
    UsageRow,
)

PENDING = InterventionStatus.PENDING.value
DEFAULT_THRESHOLDS_NAME = "default"

if TYPE_CHECKING:
    from sqlalchemy.dialects import postgresql

    Upsert = sqlite.Insert | postgresql.Insert


class RecordedEvent(BaseModel):
    """One row of a run's audit trail."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    seq: int
    event_type: str
    status: str | None
    message: str
    created_at: datetime


def dialect_insert(engine: AsyncEngine, model: type[Base]) -> Upsert:
    """An INSERT that knows ON CONFLICT: the two backends spell it the same way."""
    name = engine.dialect.name
    if name == "sqlite":
        return sqlite.insert(model)
    if name == "postgresql":
        # Loaded with a PostgreSQL engine anyway; not on every SQLite start-up.
        from sqlalchemy.dialects import postgresql

        return postgresql.insert(model)
    raise NotImplementedError(f"storage supports sqlite and postgresql, not {name}")


def _rowcount(result: Any) -> int:
    return cast(CursorResult[Any], result).rowcount


# --------------------------------------------------------------------------- mapping


def _run_values(state: RunState) -> dict[str, Any]:
    return {
        "run_id": state.run_id,
        "team_id": state.thread.team_id,
        "channel_id": state.thread.channel_id,
        "thread_ts": state.thread.thread_ts,
        "asker": state.asker,
        "question": state.query,
        "status": state.status.value,
        "collection": state.collection,
        "overall_confidence": state.overall_confidence,
        "level": state.level.value if state.level else None,
        "replan_count": state.replan_count,
        "error": state.error,
        "cost_usd": state.token_usage.cost_usd,
        "llm_model": state.llm_model or None,
        "state_json": state.model_dump_json(),
        "version": state.version,
        "worker": state.worker,
        "lease_expires_at": state.lease_expires_at,
        "created_at": state.created_at,
        "updated_at": state.updated_at,
    }


def _event_values(event: RunEvent, state: RunState) -> dict[str, Any]:
    return {
        "run_id": state.run_id,
        "seq": state.version,
        "event_type": event.type.value,
        "status": state.status.value,
        "message": event.message,
        "created_at": event.at,
    }


def _intervention_values(request: InterventionRequest, run_id: str) -> dict[str, Any]:
    return {
        "intervention_id": request.intervention_id,
        "run_id": run_id,
        "step_id": request.step_id,
        "kind": request.kind.value,
        "level": request.level.value,
        "question": request.question,
        "reason": request.reason,
        "options_json": json.dumps(request.options, ensure_ascii=False),
        "urgency": request.urgency,
        "confidence_json": request.confidence.model_dump_json() if request.confidence else None,
        "status": request.status.value,
        "allowed_responders_json": json.dumps(request.allowed_responders),
        "answered_by": request.answered_by,
        "answer_json": request.answer.model_dump_json() if request.answer else None,
        "created_at": request.created_at,
        "expires_at": request.expires_at,
        "answered_at": request.answered_at,
    }


def _request_from_row(row: InterventionRow) -> InterventionRequest:
    return InterventionRequest.model_validate(
        {
            "intervention_id": row.intervention_id,
            "run_id": row.run_id,
            "step_id": row.step_id,
            "kind": row.kind,
            "level": row.level,
            "question": row.question,
            "reason": row.reason,
            "options": json.loads(row.options_json),
            "urgency": row.urgency,
            "confidence": (
                ConfidenceScore.model_validate_json(row.confidence_json)
                if row.confidence_json
                else None
            ),
            "status": row.status,
            "allowed_responders": json.loads(row.allowed_responders_json),
            "answered_by": row.answered_by,
            "answer": (
                InterventionAnswer.model_validate_json(row.answer_json) if row.answer_json else None
            ),
            "created_at": row.created_at,
            "expires_at": row.expires_at,
            "answered_at": row.answered_at,
        }
    )


def _interventions_of(state: RunState) -> list[InterventionRequest]:
    """`interventions` and `pending`, one entry per id; a terminal copy beats a pending one."""
    merged: dict[str, InterventionRequest] = {}
    candidates = [*state.interventions, *([state.pending] if state.pending else [])]
    for request in candidates:
        known = merged.get(request.intervention_id)
        if known is None or known.status is InterventionStatus.PENDING:
            merged[request.intervention_id] = request
    return list(merged.values())


def _overlay(state: RunState, terminal_rows: Iterable[InterventionRow]) -> RunState:
    """Apply the interventions table's terminal statuses to the state loaded from JSON.

    A claim updates only the interventions table (one atomic statement), so the JSON can
    still say "pending" for an intervention somebody has already answered.
    """
    rows = {row.intervention_id: row for row in terminal_rows}
    if not rows:
        return state

    def fix(request: InterventionRequest) -> InterventionRequest:
        row = rows.get(request.intervention_id)
        if row is None:
            return request
        return request.model_copy(
            update={
                "status": InterventionStatus(row.status),
                "answered_by": row.answered_by,
                "answer": (
                    InterventionAnswer.model_validate_json(row.answer_json)
                    if row.answer_json
                    else None
                ),
                "answered_at": row.answered_at,
            }
        )

    state.interventions = [fix(request) for request in state.interventions]
    if state.pending is not None:
        state.pending = fix(state.pending)
    return state


def _claim_refusal(row: InterventionRow | None, run_id: str) -> ClaimResult:
    if row is None or row.run_id != run_id:
        return ClaimResult(claimed=False, reason="unknown intervention")
    if row.status == InterventionStatus.ANSWERED.value:
        who = row.answered_by or "someone"
        return ClaimResult(
            claimed=False, answered_by=row.answered_by, reason=f"already answered by {who}"
        )
    return ClaimResult(claimed=False, answered_by=row.answered_by, reason=row.status)


def _ratio(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


# --------------------------------------------------------------------------- the store


class SqlRunStore:
    """`agent.ports.RunStore` on SQLAlchemy, plus what the Slack layer and the CLI query."""

    def __init__(self, engine: AsyncEngine, *, health: WriteHealth | None = None) -> None:
        self._engine = engine
        self.health = health or WriteHealth()
        self._sessions = async_sessionmaker(engine, expire_on_commit=False)
        self._reads = async_sessionmaker(reader(engine), expire_on_commit=False)

    @property
    def engine(self) -> AsyncEngine:
        return self._engine

    def _insert(self, model: type[Base]) -> Upsert:
        return dialect_insert(self._engine, model)

    # ------------------------------------------------------------------ runs

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
                await self._write(session, stored, expected=state.version)
                if event is not None:
                    await session.execute(
                        insert(RunEventRow).values(**_event_values(event, stored))
                    )
                await self._want_delivery(session, stored)
        except IntegrityError as exc:  # a new run whose id is taken
            raise RunConflictError(
                state.run_id, expected=state.version, stored=await self._version(state.run_id)
            ) from exc
        state.version = stored.version
        state.updated_at = stored.updated_at

    async def _want_delivery(self, session: AsyncSession, state: RunState) -> None:
        """The outbox entry: a Slack run's messages must show this version (same
        transaction as the run's write, so no transition's messages can be forgotten)."""
        if not state.thread.thread_ts:
            return  # not a Slack run (CLI)
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

    async def _write(self, session: AsyncSession, state: RunState, *, expected: int) -> None:
        """Compare-and-set on `runs.version`: one conditional statement, so of two
        writers holding the same version exactly one succeeds."""
        values = _run_values(state)
        if expected == 0:
            await session.execute(insert(RunRow).values(**values))
        else:
            changed = {k: v for k, v in values.items() if k not in ("run_id", "created_at")}
            result = await session.execute(
                update(RunRow)
                .where(RunRow.run_id == state.run_id, RunRow.version == expected)
                .values(**changed)
                .execution_options(synchronize_session=False)
            )
            if _rowcount(result) != 1:
                current = await session.scalar(
                    select(RunRow.version).where(RunRow.run_id == state.run_id)
                )
                raise RunConflictError(state.run_id, expected=expected, stored=current)
        for request in _interventions_of(state):
            values = _intervention_values(request, state.run_id)
            stmt = self._insert(InterventionRow).values(**values)
            keep = ("intervention_id", "run_id", "created_at")
            await session.execute(
                stmt.on_conflict_do_update(
                    index_elements=[InterventionRow.intervention_id],
                    set_={k: stmt.excluded[k] for k in values if k not in keep},
                    # The database's terminal status wins over a stale in-memory copy.
                    where=InterventionRow.status == PENDING,
                )
            )
        if state.status.is_final:
            # A finished run can be answered no more: stale buttons get "cancelled".
            await session.execute(
                update(InterventionRow)
                .where(InterventionRow.run_id == state.run_id, InterventionRow.status == PENDING)
                .values(status=InterventionStatus.CANCELLED.value)
                .execution_options(synchronize_session=False)
            )

    async def load(self, run_id: str) -> RunState | None:
        async with self._reads.begin() as session:
            return await self._load(session, run_id)

    async def _load(
        self, session: AsyncSession, run_id: str, *, lock: bool = False
    ) -> RunState | None:
        query = select(RunRow.state_json).where(RunRow.run_id == run_id)
        if lock:
            query = query.with_for_update()  # PostgreSQL; SQLite already holds the write lock
        state_json = await session.scalar(query)
        if state_json is None:
            return None
        states = await self._states(session, [state_json])
        return states[0]

    async def _states(self, session: AsyncSession, blobs: Sequence[str]) -> list[RunState]:
        states = [RunState.model_validate_json(blob) for blob in blobs]
        if not states:
            return []
        terminal = await session.scalars(
            select(InterventionRow).where(
                InterventionRow.run_id.in_([s.run_id for s in states]),
                InterventionRow.status != PENDING,
            )
        )
        by_run: dict[str, list[InterventionRow]] = {}
        for row in terminal:
            by_run.setdefault(row.run_id, []).append(row)
        return [_overlay(state, by_run.get(state.run_id, [])) for state in states]

    async def _select_states(self, query: Select[tuple[str]]) -> list[RunState]:
        async with self._reads.begin() as session:
            blobs = list(await session.scalars(query))
            return await self._states(session, blobs)

    @retried_write
    async def mutate(self, run_id: str, change: Callable[[RunState], object]) -> RunState | None:
        """Read, change and write a run in one transaction: concurrent callers never lose
        each other's changes (e.g. a slash-command cancel racing a worker's update).

        `change` must be quick and synchronous — it runs while the write lock is held.
        Returns the saved state, or None when the run does not exist.
        """
        async with self._sessions.begin() as session:
            state = await self._load(session, run_id, lock=True)
            if state is None:
                return None
            expected = state.version
            change(state)
            state.version = expected + 1
            state.updated_at = utcnow()
            await self._write(session, state, expected=expected)
            await self._want_delivery(session, state)
            return state

    async def renew_lease(self, run_id: str, worker: str, until: datetime) -> bool:
        async with self._sessions.begin() as session:
            state = await self._load(session, run_id, lock=True)
            if state is None or state.worker != worker or not state.status.is_active:
                return False
            state.lease_expires_at = until
            result = await session.execute(
                update(RunRow)
                .where(RunRow.run_id == run_id, RunRow.version == state.version)
                .values(lease_expires_at=until, state_json=state.model_dump_json())
                .execution_options(synchronize_session=False)
            )
            return _rowcount(result) == 1

    async def list_runs(
        self,
        *,
        status: RunStatus | None = None,
        channel_id: str | None = None,
        limit: int = 50,
    ) -> list[RunState]:
        """Newest first."""
        query = select(RunRow.state_json)
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

    # ------------------------------------------------------------------ interventions

    @retried_write
    async def claim_intervention(
        self, run_id: str, intervention_id: str, answer: InterventionAnswer
    ) -> ClaimResult:
        async with self._sessions.begin() as session:
            result = await session.execute(
                update(InterventionRow)
                .where(
                    InterventionRow.intervention_id == intervention_id,
                    InterventionRow.run_id == run_id,
                    InterventionRow.status == PENDING,
                )
                .values(
                    status=InterventionStatus.ANSWERED.value,
                    answered_by=answer.user,
                    answer_json=answer.model_dump_json(),
                    answered_at=utcnow(),
                )
                .execution_options(synchronize_session=False)
            )
            if _rowcount(result) == 1:
                state = await self._load(session, run_id)
                return ClaimResult(
                    claimed=True, state=state, answered_by=answer.user, reason="claimed"
                )
            row = await session.get(InterventionRow, intervention_id)
            return _claim_refusal(row, run_id)

    @retried_write
    async def claim_expiry(self, *, intervention_id: str, now: datetime) -> bool:
        """Expire a still-pending intervention whose time is up; True for the one winner.

        Answers are accepted until this succeeds, so a thread hears exactly one outcome.
        """
        async with self._sessions.begin() as session:
            result = await session.execute(
                update(InterventionRow)
                .where(
                    InterventionRow.intervention_id == intervention_id,
                    InterventionRow.status == PENDING,
                    InterventionRow.expires_at.is_not(None),
                    InterventionRow.expires_at <= now,
                )
                .values(status=InterventionStatus.EXPIRED.value)
                .execution_options(synchronize_session=False)
            )
            return _rowcount(result) == 1

    async def stranded_interventions(self, before: datetime) -> list[InterventionRequest]:
        """Questions answered (or expired) before `before` whose run is still PAUSED on
        them: the process that claimed them died before it moved the run on."""
        other = aliased(InterventionRow)
        still_pending = (
            select(other.intervention_id)
            .where(other.run_id == RunRow.run_id, other.status == PENDING)
            .exists()
        )
        answered = (InterventionRow.status == InterventionStatus.ANSWERED.value) & (
            InterventionRow.answered_at <= before
        )
        expired = (InterventionRow.status == InterventionStatus.EXPIRED.value) & (
            InterventionRow.expires_at <= before
        )
        async with self._reads.begin() as session:
            rows = await session.scalars(
                select(InterventionRow)
                .join(RunRow, RunRow.run_id == InterventionRow.run_id)
                .where(RunRow.status == RunStatus.PAUSED.value, ~still_pending, answered | expired)
                .order_by(InterventionRow.created_at, InterventionRow.intervention_id)
            )
            return [_request_from_row(row) for row in rows]

    async def due_interventions(self, now: datetime) -> list[InterventionRequest]:
        """Pending interventions whose expiry time has passed, oldest deadline first."""
        async with self._reads.begin() as session:
            rows = await session.scalars(
                select(InterventionRow)
                .where(InterventionRow.status == PENDING, InterventionRow.expires_at <= now)
                .order_by(InterventionRow.expires_at, InterventionRow.intervention_id)
            )
            return [_request_from_row(row) for row in rows]

    async def next_expiry(self) -> datetime | None:
        """When the next pending intervention expires: how long an expiry sweeper may sleep."""
        async with self._reads.begin() as session:
            return await session.scalar(
                select(func.min(InterventionRow.expires_at)).where(
                    InterventionRow.status == PENDING
                )
            )

    async def intervention_rows(self, run_id: str) -> list[InterventionRequest]:
        async with self._reads.begin() as session:
            rows = await session.scalars(
                select(InterventionRow)
                .where(InterventionRow.run_id == run_id)
                .order_by(InterventionRow.created_at, InterventionRow.intervention_id)
            )
            return [_request_from_row(row) for row in rows]

    async def get_intervention(self, intervention_id: str) -> InterventionRequest | None:
        async with self._reads.begin() as session:
            row = await session.get(InterventionRow, intervention_id)
            return _request_from_row(row) if row else None

    # ------------------------------------------------------------------ audit trail

    async def events(self, run_id: str) -> list[RecordedEvent]:
        async with self._reads.begin() as session:
            rows = await session.scalars(
                select(RunEventRow).where(RunEventRow.run_id == run_id).order_by(RunEventRow.seq)
            )
            return [
                RecordedEvent(
                    run_id=row.run_id,
                    seq=row.seq,
                    event_type=row.event_type,
                    status=row.status,
                    message=row.message,
                    created_at=row.created_at,
                )
                for row in rows
            ]

    # ------------------------------------------------------------------ Slack messages

    @retried_write
    async def set_message_ref(
        self, *, run_id: str, kind: str, channel_id: str, ts: str, digest: str | None = None
    ) -> None:
        """Remember where the run's `kind` message ("plan", "answer", "intervention:<id>")
        is, and a digest of what it shows, replacing an earlier one."""
        now = utcnow()
        stmt = self._insert(MessageRefRow).values(
            run_id=run_id,
            kind=kind,
            channel_id=channel_id,
            ts=ts,
            digest=digest,
            created_at=now,
            updated_at=now,
        )
        stmt = stmt.on_conflict_do_update(
            index_elements=[MessageRefRow.run_id, MessageRefRow.kind],
            set_={"channel_id": channel_id, "ts": ts, "digest": digest, "updated_at": now},
        )
        async with self._sessions.begin() as session:
            await session.execute(stmt)

    async def get_message_ref(self, *, run_id: str, kind: str) -> tuple[str, str] | None:
        """(channel_id, ts) of the run's `kind` message."""
        async with self._reads.begin() as session:
            row = (
                await session.execute(
                    select(MessageRefRow.channel_id, MessageRefRow.ts).where(
                        MessageRefRow.run_id == run_id, MessageRefRow.kind == kind
                    )
                )
            ).first()
            return (row[0], row[1]) if row else None

    async def message_digests(self, run_id: str) -> dict[str, tuple[str, str, str | None]]:
        """kind → (channel_id, ts, digest) of every message the run has posted."""
        async with self._reads.begin() as session:
            rows = await session.execute(
                select(
                    MessageRefRow.kind,
                    MessageRefRow.channel_id,
                    MessageRefRow.ts,
                    MessageRefRow.digest,
                ).where(MessageRefRow.run_id == run_id)
            )
            return {kind: (channel, ts, digest) for kind, channel, ts, digest in rows}

    async def message_refs(self, run_id: str) -> dict[str, tuple[str, str]]:
        async with self._reads.begin() as session:
            rows = await session.execute(
                select(MessageRefRow.kind, MessageRefRow.channel_id, MessageRefRow.ts).where(
                    MessageRefRow.run_id == run_id
                )
            )
            return {kind: (channel_id, ts) for kind, channel_id, ts in rows}

    # ------------------------------------------------------------------ workspace notes

    async def note_workspace(self, team_id: str, kind: str, value: str, *, until: datetime) -> None:
        """Remember `value` about a workspace (e.g. "it refused streaming") until `until`.
        Kept as a message ref of an owner no run has (run ids have no colon)."""
        await self.set_message_ref(
            run_id=_team_owner(team_id),
            kind=kind,
            channel_id=team_id,
            ts=str(int(until.timestamp())),
            digest=value[:32],
        )

    async def workspace_note(
        self, team_id: str, kind: str, *, now: datetime | None = None
    ) -> tuple[str, datetime] | None:
        """The workspace's `kind` note and until when it holds; None if none or expired."""
        async with self._reads.begin() as session:
            row = (
                await session.execute(
                    select(MessageRefRow.ts, MessageRefRow.digest).where(
                        MessageRefRow.run_id == _team_owner(team_id), MessageRefRow.kind == kind
                    )
                )
            ).first()
        if row is None or not row[0].isdigit():
            return None
        until = datetime.fromtimestamp(int(row[0]), tz=UTC)
        return (row[1] or "", until) if until > (now or utcnow()) else None

    # ------------------------------------------------------------------ dedupe

    @retried_write
    async def mark_processed(self, event_id: str, kind: str = "event") -> bool:
        """True the first time `event_id` is seen, False ever after — across processes."""
        stmt = (
            self._insert(ProcessedEventRow)
            .values(event_id=event_id, kind=kind, created_at=utcnow())
            .on_conflict_do_nothing(index_elements=[ProcessedEventRow.event_id])
        )
        async with self._sessions.begin() as session:
            return _rowcount(await session.execute(stmt)) == 1

    @retried_write
    async def prune_processed(self, *, before: datetime) -> int:
        """Forget event ids older than `before` (Slack stops retrying after minutes)."""
        async with self._sessions.begin() as session:
            result = await session.execute(
                delete(ProcessedEventRow)
                .where(ProcessedEventRow.created_at < before)
                .execution_options(synchronize_session=False)
            )
            return _rowcount(result)

    # ------------------------------------------------------------------ feedback

    async def recent_feedback(self, limit: int = 10) -> list[tuple[float, bool]]:
        """The last `limit` (confidence, was_correct) pairs, oldest first."""
        async with self._reads.begin() as session:
            rows = await session.execute(
                select(FeedbackRow.confidence, FeedbackRow.was_correct)
                .order_by(FeedbackRow.created_at.desc(), FeedbackRow.id.desc())
                .limit(limit)
            )
            return [(float(c), bool(ok)) for c, ok in rows][::-1]

    # ------------------------------------------------------------------ thresholds

    async def load_thresholds(self) -> Thresholds | None:
        async with self._reads.begin() as session:
            row = await session.get(ThresholdsRow, DEFAULT_THRESHOLDS_NAME)
            if row is None:
                return None
            return Thresholds(silent=row.silent, notify=row.notify, confirm=row.confirm)

    @retried_write
    async def save_thresholds(self, thresholds: Thresholds) -> None:
        values = {
            "silent": thresholds.silent,
            "notify": thresholds.notify,
            "confirm": thresholds.confirm,
            "updated_at": utcnow(),
        }
        stmt = self._insert(ThresholdsRow).values(name=DEFAULT_THRESHOLDS_NAME, **values)
        stmt = stmt.on_conflict_do_update(index_elements=[ThresholdsRow.name], set_=values)
        async with self._sessions.begin() as session:
            await session.execute(stmt)

    # ------------------------------------------------------------------ statistics

    async def stats(self, *, since: datetime) -> dict[str, float | int]:
        """Metrics over runs created since `since` and money spent since then.

        Rates are fractions 0–1 (0.0 when there is nothing to divide by):
        completion_rate = answered / runs; hitl_rate = runs with an intervention / runs;
        replan_rate = runs replanned / runs; replan_success_rate = replanned runs that
        ended answered / runs replanned.
        """
        answered = RunStatus.ANSWERED.value
        is_answered = case((RunRow.status == answered, 1), else_=0)
        replanned = case((RunRow.replan_count > 0, 1), else_=0)
        async with self._reads.begin() as session:
            rows = await session.execute(
                select(RunRow.status, func.count())
                .where(RunRow.created_at >= since)
                .group_by(RunRow.status)
            )
            by_status = {status: int(n) for status, n in rows}
            totals = (
                await session.execute(
                    select(
                        func.count(),
                        func.coalesce(func.sum(replanned), 0),
                        func.coalesce(func.sum(replanned * is_answered), 0),
                    ).where(RunRow.created_at >= since)
                )
            ).one()
            with_hitl = await session.scalar(
                select(func.count(func.distinct(RunRow.run_id)))
                .join(InterventionRow, InterventionRow.run_id == RunRow.run_id)
                .where(RunRow.created_at >= since)
            )
            avg_confidence = await session.scalar(
                select(func.avg(RunRow.overall_confidence)).where(
                    RunRow.created_at >= since,
                    RunRow.status == answered,
                    RunRow.overall_confidence.is_not(None),
                )
            )
            cost = await session.scalar(
                select(func.coalesce(func.sum(UsageRow.cost_usd), 0.0)).where(
                    UsageRow.created_at >= since
                )
            )
        runs, n_replanned, n_replan_ok = (int(v) for v in totals)
        count = {status: int(by_status.get(status.value, 0)) for status in RunStatus}
        return {
            "runs": runs,
            "answered": count[RunStatus.ANSWERED],
            "cancelled": count[RunStatus.CANCELLED],
            "failed": count[RunStatus.FAILED],
            "paused": count[RunStatus.PAUSED],
            "running": count[RunStatus.RUNNING] + count[RunStatus.PLANNING],
            "completion_rate": _ratio(count[RunStatus.ANSWERED], runs),
            "hitl_rate": _ratio(int(with_hitl or 0), runs),
            "replan_rate": _ratio(n_replanned, runs),
            "replan_success_rate": _ratio(n_replan_ok, n_replanned),
            "avg_confidence": float(avg_confidence or 0.0),
            "cost_usd": float(cost or 0.0),
        }


def _team_owner(team_id: str) -> str:
    """The message-ref owner of a workspace's notes (≤ 64 characters)."""
    owner = f"team:{team_id}"
    return (
        owner if len(owner) <= 64 else "team:" + hashlib.sha256(team_id.encode()).hexdigest()[:40]
    )
