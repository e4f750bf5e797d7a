"""Workspace notes get a table of their own: they were message refs of a made-up run id
`team:<id>` (team id in `channel_id`, the time they hold until as epoch seconds in `ts`,
the value in `digest`). Existing notes are moved, not lost.

And `processed_events` goes: Slack event ids are deduplicated by the inbox (0004) and
nothing has read or written that table since; its rows are only old event ids.
"""

import hashlib
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

revision: str = "0006_workspace_notes"  # created 2026-11-26 21:00:00
down_revision: str | None = "0005_inbox_claims"

OWNER_PREFIX = "team:"  # run ids have no colon: no run's message ref starts with it

message_refs = sa.table(
    "message_refs",
    sa.column("id", sa.Integer()),
    sa.column("run_id", sa.String(64)),
    sa.column("kind", sa.String(128)),
    sa.column("channel_id", sa.String(255)),
    sa.column("ts", sa.String(32)),
    sa.column("digest", sa.String(32)),
    sa.column("created_at", sa.DateTime(timezone=True)),
    sa.column("updated_at", sa.DateTime(timezone=True)),
)


def _naive_on_sqlite(value: datetime) -> datetime:
    """Stored as storage.tables.UTCDateTime stores it: naive UTC on SQLite."""
    return value.replace(tzinfo=None) if op.get_bind().dialect.name == "sqlite" else value


def upgrade() -> None:
    notes = op.create_table(
        "workspace_notes",
        sa.Column("team_id", sa.String(255), nullable=False),
        sa.Column("kind", sa.String(128), nullable=False),
        sa.Column("value", sa.String(32), nullable=False),
        sa.Column("until", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("team_id", "kind", name="pk_workspace_notes"),
    )
    old = sa.select(
        message_refs.c.channel_id,
        message_refs.c.kind,
        message_refs.c.ts,
        message_refs.c.digest,
        message_refs.c.updated_at,
    ).where(message_refs.c.run_id.startswith(OWNER_PREFIX, autoescape=True))
    rows = []
    for team_id, kind, ts, digest, updated_at in op.get_bind().execute(old):
        if not ts.isdigit():
            continue  # never readable as a note: the old code ignored it too
        until = datetime.fromtimestamp(int(ts), tz=UTC)
        rows.append(
            {
                "team_id": team_id,
                "kind": kind,
                "value": digest or "",
                "until": _naive_on_sqlite(until),
                "updated_at": updated_at,
            }
        )
    if rows:
        op.bulk_insert(notes, rows)
    op.execute(
        message_refs.delete().where(message_refs.c.run_id.startswith(OWNER_PREFIX, autoescape=True))
    )
    op.drop_index("ix_processed_events_created_at", table_name="processed_events")
    op.drop_table("processed_events")


def downgrade() -> None:
    op.create_table(
        "processed_events",
        sa.Column("event_id", sa.String(255), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("event_id", name="pk_processed_events"),
    )
    op.create_index("ix_processed_events_created_at", "processed_events", ["created_at"])
    notes = sa.table(
        "workspace_notes",
        sa.column("team_id", sa.String(255)),
        sa.column("kind", sa.String(128)),
        sa.column("value", sa.String(32)),
        sa.column("until", sa.DateTime(timezone=True)),
        sa.column("updated_at", sa.DateTime(timezone=True)),
    )
    rows = []
    for team_id, kind, value, until, updated_at in op.get_bind().execute(sa.select(notes)):
        until = until if until.tzinfo else until.replace(tzinfo=UTC)
        owner = f"{OWNER_PREFIX}{team_id}"
        if len(owner) > 64:  # as the old code named a long team id's notes
            owner = OWNER_PREFIX + hashlib.sha256(team_id.encode()).hexdigest()[:40]
        rows.append(
            {
                "run_id": owner,
                "kind": kind,
                "channel_id": team_id,
                "ts": str(int(until.timestamp())),
                "digest": value,
                "created_at": updated_at,
                "updated_at": updated_at,
            }
        )
    if rows:
        op.bulk_insert(message_refs, rows)
    op.drop_table("workspace_notes")
