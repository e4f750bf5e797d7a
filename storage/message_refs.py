"""Where a run's Slack messages are (SPEC §5), and a digest of what each shows.

The deliverer edits a run's messages in place instead of posting new ones, and skips an
edit whose digest has not changed; `kind` names the message: "plan", "answer",
"intervention:<id>", the assistant pane.
"""

from __future__ import annotations

from sqlalchemy import select

from agent.schemas import utcnow
from storage.db import retried_write
from storage.sql import SqlStore
from storage.tables import MessageRefRow


class SqlMessageRefs(SqlStore):
    """Slack message references of runs, one per (run, kind)."""

    @retried_write
    async def set_message_ref(
        self, *, run_id: str, kind: str, channel_id: str, ts: str, digest: str | None = None
    ) -> None:
        """Remember where the run's `kind` message is, and a digest of what it shows,
        replacing an earlier one."""
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
        """kind → (channel_id, ts) of every message the run has posted."""
        digests = await self.message_digests(run_id)
        return {kind: (channel_id, ts) for kind, (channel_id, ts, _) in digests.items()}
