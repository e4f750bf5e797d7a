"""Drop `processed_events`: Slack event ids are deduplicated by the inbox (0004) and
nothing has read or written this table since; its rows are only old event ids.

Revision ID: 0007_drop_processed_events
Revises: 0006_workspace_notes
Create Date: 2026-11-26 21:05:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007_drop_processed_events"
down_revision: str | None = "0006_workspace_notes"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
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
