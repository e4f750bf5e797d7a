"""`SqlRunStore`: the durable run store (SPEC §5) as one object, for the callers that
take one store — the agent's `agent.ports.RunStore`, the Slack layer, the CLI, the
sweeper. It holds one store per aggregate, sharing an engine and a write-health
monitor, and passes each call on; the work is in:

- storage/runs.py — runs, versions (compare-and-set), queries, the audit trail (lists of
  runs are asked of it directly: `store.runs.list_runs`);
- storage/leases.py — which worker drives a run, until when;
- storage/interventions.py — claiming (answering, expiring) the questions runs wait on;
- storage/message_refs.py — where a run's Slack messages are, and digests of them;
- storage/workspace_notes.py — notes about a workspace that hold until a time;
- storage/feedback.py — votes, the recent window, the confidence thresholds;
- storage/stats.py — statistics;
- storage/verified_answers.py — verified answers (`store.verified`).

Every call is one short transaction committed before it returns, so a caller may tell
Slack about a transition as soon as the call returns.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncEngine

from agent.config import Thresholds
from agent.ports import ClaimResult, RunEvent
from agent.schemas import InterventionAnswer, InterventionRequest, RunState, RunStatus, ThreadKey
from storage.db import WriteHealth
from storage.feedback import DEFAULT_THRESHOLDS_NAME, SqlFeedback
from storage.interventions import SqlInterventions
from storage.leases import SqlLeases
from storage.message_refs import SqlMessageRefs
from storage.runs import RecordedEvent, SqlRuns
from storage.stats import SqlStats
from storage.verified_answers import SqlVerifiedAnswers
from storage.workspace_notes import SqlWorkspaceNotes

__all__ = ["DEFAULT_THRESHOLDS_NAME", "RecordedEvent", "SqlRunStore"]


class SqlRunStore:
    """`agent.ports.RunStore` on SQLAlchemy, plus what the Slack layer and the CLI query."""

    def __init__(self, engine: AsyncEngine, *, health: WriteHealth | None = None) -> None:
        self.health = health or WriteHealth()
        self.runs = SqlRuns(engine, health=self.health)
        self.leases = SqlLeases(engine, health=self.health)
        self.interventions = SqlInterventions(engine, health=self.health)
        self.messages = SqlMessageRefs(engine, health=self.health)
        self.notes = SqlWorkspaceNotes(engine, health=self.health)
        self.feedback = SqlFeedback(engine, health=self.health)
        self.statistics = SqlStats(engine, health=self.health)
        self.verified = SqlVerifiedAnswers(engine, health=self.health)

    @property
    def engine(self) -> AsyncEngine:
        return self.runs.engine

    # runs ---------------------------------------------------------------------------

    async def save(self, state: RunState, event: RunEvent | None = None) -> None:
        await self.runs.save(state, event)

    async def mutate(self, run_id: str, change: Callable[[RunState], object]) -> RunState | None:
        return await self.runs.mutate(run_id, change)

    async def load(self, run_id: str) -> RunState | None:
        return await self.runs.load(run_id)

    async def latest_run_in_thread(self, thread: ThreadKey) -> RunState | None:
        return await self.runs.latest_run_in_thread(thread)

    async def runs_with_status(self, status: RunStatus) -> list[RunState]:
        return await self.runs.runs_with_status(status)

    async def events(self, run_id: str) -> list[RecordedEvent]:
        return await self.runs.events(run_id)

    async def renew_lease(self, run_id: str, worker: str, until: datetime) -> bool:
        return await self.leases.renew_lease(run_id, worker, until)

    # interventions ------------------------------------------------------------------

    async def claim_intervention(
        self, run_id: str, intervention_id: str, answer: InterventionAnswer
    ) -> ClaimResult:
        return await self.interventions.claim_intervention(run_id, intervention_id, answer)

    async def claim_expiry(self, *, intervention_id: str, now: datetime) -> bool:
        return await self.interventions.claim_expiry(intervention_id=intervention_id, now=now)

    async def stranded_interventions(self, before: datetime) -> list[InterventionRequest]:
        return await self.interventions.stranded_interventions(before)

    async def due_interventions(self, now: datetime) -> list[InterventionRequest]:
        return await self.interventions.due_interventions(now)

    async def next_expiry(self) -> datetime | None:
        return await self.interventions.next_expiry()

    async def intervention_rows(self, run_id: str) -> list[InterventionRequest]:
        return await self.interventions.intervention_rows(run_id)

    async def get_intervention(self, intervention_id: str) -> InterventionRequest | None:
        return await self.interventions.get_intervention(intervention_id)

    # Slack messages and workspace notes ---------------------------------------------

    async def set_message_ref(
        self, *, run_id: str, kind: str, channel_id: str, ts: str, digest: str | None = None
    ) -> None:
        await self.messages.set_message_ref(
            run_id=run_id, kind=kind, channel_id=channel_id, ts=ts, digest=digest
        )

    async def get_message_ref(self, *, run_id: str, kind: str) -> tuple[str, str] | None:
        return await self.messages.get_message_ref(run_id=run_id, kind=kind)

    async def message_digests(self, run_id: str) -> dict[str, tuple[str, str, str | None]]:
        return await self.messages.message_digests(run_id)

    async def message_refs(self, run_id: str) -> dict[str, tuple[str, str]]:
        return await self.messages.message_refs(run_id)

    async def note_workspace(self, team_id: str, kind: str, value: str, *, until: datetime) -> None:
        await self.notes.note_workspace(team_id, kind, value, until=until)

    async def workspace_note(
        self, team_id: str, kind: str, *, now: datetime | None = None
    ) -> tuple[str, datetime] | None:
        return await self.notes.workspace_note(team_id, kind, now=now)

    # feedback, thresholds, statistics -----------------------------------------------

    async def recent_feedback(
        self, limit: int = 10, *, team_id: str | None = None
    ) -> list[tuple[float, bool]]:
        return await self.feedback.recent_feedback(limit, team_id=team_id)

    async def load_thresholds(self) -> Thresholds | None:
        return await self.feedback.load_thresholds()

    async def save_thresholds(self, thresholds: Thresholds) -> None:
        await self.feedback.save_thresholds(thresholds)

    async def stats(self, *, since: datetime, team_id: str | None = None) -> dict[str, float | int]:
        return await self.statistics.stats(since=since, team_id=team_id)
