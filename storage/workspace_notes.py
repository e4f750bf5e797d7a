"""Notes about a Slack workspace that must outlive the process, each until a time: e.g.
"this workspace refused streaming", so a restart does not try again (bot/plan_stream.py).

Kept in `workspace_notes` (migration 0006; they used to be message refs of a made-up
run id `team:<id>`).
"""

from __future__ import annotations

from datetime import datetime

from agent.schemas import utcnow
from storage.db import retried_write
from storage.sql import SqlStore
from storage.tables import NOTE_VALUE_LENGTH, WorkspaceNoteRow


class SqlWorkspaceNotes(SqlStore):
    """One note per (workspace, kind); a newer one replaces it."""

    @retried_write
    async def note_workspace(self, team_id: str, kind: str, value: str, *, until: datetime) -> None:
        """Remember `value` (its first 32 characters) about a workspace until `until`."""
        now = utcnow()
        values = {"value": value[:NOTE_VALUE_LENGTH], "until": until, "updated_at": now}
        stmt = self._insert(WorkspaceNoteRow).values(team_id=team_id, kind=kind, **values)
        stmt = stmt.on_conflict_do_update(
            index_elements=[WorkspaceNoteRow.team_id, WorkspaceNoteRow.kind], set_=values
        )
        async with self._sessions.begin() as session:
            await session.execute(stmt)

    async def workspace_note(
        self, team_id: str, kind: str, *, now: datetime | None = None
    ) -> tuple[str, datetime] | None:
        """The workspace's `kind` note and until when it holds; None if none or expired."""
        async with self._reads.begin() as session:
            note = await session.get(WorkspaceNoteRow, (team_id, kind))
        if note is None or note.until <= (now or utcnow()):
            return None
        return note.value, note.until
