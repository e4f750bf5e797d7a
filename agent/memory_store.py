"""In-process run store and usage ledger: for a single process with nothing to survive.

States are kept as JSON so a caller can never mutate a stored run by accident — the same
contract the SQL store gives.
"""

from __future__ import annotations

import asyncio
from datetime import datetime

from agent.ports import ClaimResult, RunConflictError, RunEvent
from agent.schemas import (
    InterventionAnswer,
    InterventionStatus,
    RunState,
    TokenUsage,
    utcnow,
)


class InMemoryRunStore:
    def __init__(self) -> None:
        self._runs: dict[str, str] = {}
        self._claims: dict[str, InterventionAnswer] = {}
        self.events: list[RunEvent] = []
        self._lock = asyncio.Lock()

    async def save(self, state: RunState, event: RunEvent | None = None) -> None:
        """Like the SQL store: refuses a stale copy, then bumps `version` and `updated_at`
        on the caller's object, and keeps `event` in `events`."""
        raw = self._runs.get(state.run_id)
        stored = RunState.model_validate_json(raw).version if raw else None
        if stored != (state.version or None):
            raise RunConflictError(state.run_id, expected=state.version, stored=stored)
        state.version += 1
        state.updated_at = utcnow()
        self._runs[state.run_id] = state.model_dump_json()
        if event is not None:
            self.events.append(event)

    async def renew_lease(self, run_id: str, worker: str, until: datetime) -> bool:
        state = await self.load(run_id)
        if state is None or state.worker != worker or not state.status.is_active:
            return False
        state.lease_expires_at = until
        self._runs[run_id] = state.model_dump_json()
        return True

    async def load(self, run_id: str) -> RunState | None:
        raw = self._runs.get(run_id)
        return RunState.model_validate_json(raw) if raw else None

    async def claim_intervention(
        self, run_id: str, intervention_id: str, answer: InterventionAnswer
    ) -> ClaimResult:
        async with self._lock:
            state = await self.load(run_id)
            if state is None:
                return ClaimResult(claimed=False, reason=f"unknown run {run_id}")
            if intervention_id in self._claims:
                by = self._claims[intervention_id].user
                return ClaimResult(
                    claimed=False, answered_by=by, reason=f"already answered by {by}"
                )
            pending = state.pending
            if pending is None or pending.intervention_id != intervention_id:
                return ClaimResult(claimed=False, reason="this request is no longer pending")
            if pending.status is not InterventionStatus.PENDING:
                return ClaimResult(claimed=False, reason=f"request {pending.status.value}")
            self._claims[intervention_id] = answer
            return ClaimResult(claimed=True, state=state, answered_by=answer.user)


class InMemoryLedger:
    def __init__(self) -> None:
        self.entries: list[tuple[datetime, str, TokenUsage, str]] = []

    async def record(self, run_id: str, usage: TokenUsage, model: str) -> None:
        self.entries.append((utcnow(), run_id, usage, model))

    async def spent_since(self, since: datetime) -> float:
        return sum(u.cost_usd for at, _, u, _ in self.entries if at >= since)
