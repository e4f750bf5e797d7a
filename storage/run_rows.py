"""How a run is kept as rows: the `runs` row (its `state_json` is the source of truth,
the other columns are copies for queries), its `interventions` rows (the authority on
their status), and the audit trail. Shared by storage/runs.py, leases.py and
interventions.py, which all read or write a run inside their own transactions."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import insert, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from agent.ports import RunConflictError, RunEvent
from agent.schemas import (
    ConfidenceScore,
    InterventionAnswer,
    InterventionRequest,
    InterventionStatus,
    RunState,
)
from storage.sql import rowcount
from storage.tables import Base, InterventionRow, RunRow

if TYPE_CHECKING:
    from storage.sql import Upsert

PENDING = InterventionStatus.PENDING.value


def run_values(state: RunState) -> dict[str, Any]:
    return {
        "run_id": state.run_id,
        "team_id": state.thread.team_id,
        "enterprise_id": state.thread.enterprise_id,
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


def event_values(event: RunEvent, state: RunState) -> dict[str, Any]:
    return {
        "run_id": state.run_id,
        "seq": state.version,
        "event_type": event.type.value,
        "status": state.status.value,
        "message": event.message,
        "created_at": event.at,
    }


def intervention_values(request: InterventionRequest, run_id: str) -> dict[str, Any]:
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


def _answer(row: InterventionRow) -> InterventionAnswer | None:
    return InterventionAnswer.model_validate_json(row.answer_json) if row.answer_json else None


def request_from_row(row: InterventionRow) -> InterventionRequest:
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
            "answer": _answer(row),
            "created_at": row.created_at,
            "expires_at": row.expires_at,
            "answered_at": row.answered_at,
        }
    )


def interventions_of(state: RunState) -> list[InterventionRequest]:
    """`interventions` and `pending`, one entry per id; a terminal copy beats a pending one."""
    merged: dict[str, InterventionRequest] = {}
    candidates = [*state.interventions, *([state.pending] if state.pending else [])]
    for request in candidates:
        known = merged.get(request.intervention_id)
        if known is None or known.status is InterventionStatus.PENDING:
            merged[request.intervention_id] = request
    return list(merged.values())


def overlay(state: RunState, terminal_rows: Iterable[InterventionRow]) -> RunState:
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
        closed = {"status": InterventionStatus(row.status), "answered_by": row.answered_by}
        return request.model_copy(
            update={**closed, "answer": _answer(row), "answered_at": row.answered_at}
        )

    state.interventions = [fix(request) for request in state.interventions]
    if state.pending is not None:
        state.pending = fix(state.pending)
    return state


async def load_state(session: AsyncSession, run_id: str, *, lock: bool = False) -> RunState | None:
    """The run as stored, terminal intervention statuses applied; `lock` takes its row
    lock (PostgreSQL; SQLite already holds the write lock)."""
    query = select(RunRow.state_json).where(RunRow.run_id == run_id)
    if lock:
        query = query.with_for_update()
    state_json = await session.scalar(query)
    if state_json is None:
        return None
    states = await load_states(session, [state_json])
    return states[0]


async def load_states(session: AsyncSession, blobs: Sequence[str]) -> list[RunState]:
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
    return [overlay(state, by_run.get(state.run_id, [])) for state in states]


async def write_state(
    session: AsyncSession,
    state: RunState,
    *,
    expected: int,
    insert_of: Callable[[type[Base]], Upsert],
) -> None:
    """Compare-and-set on `runs.version`: one conditional statement, so of two
    writers holding the same version exactly one succeeds. Then its interventions."""
    values = run_values(state)
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
        if rowcount(result) != 1:
            current = await session.scalar(
                select(RunRow.version).where(RunRow.run_id == state.run_id)
            )
            raise RunConflictError(state.run_id, expected=expected, stored=current)
    for request in interventions_of(state):
        values = intervention_values(request, state.run_id)
        stmt = insert_of(InterventionRow).values(**values)
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
