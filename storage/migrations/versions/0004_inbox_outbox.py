"""Durable inbox and outbox: every acknowledged Slack request, and every run whose Slack
messages are not yet what its state says.
"""

import sqlalchemy as sa
from alembic import op

revision: str = "0004_inbox_outbox"  # created 2026-11-23 21:00:00
down_revision: str | None = "0003_run_leases"


def upgrade() -> None:
    op.create_table(
        "inbox",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("event_id", sa.String(255), nullable=False),
        sa.Column("message_key", sa.String(255), nullable=True),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("payload_json", sa.Text(), nullable=False),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("done_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_inbox"),
        sa.UniqueConstraint("event_id", name="uq_inbox_event_id"),
        sa.UniqueConstraint("message_key", name="uq_inbox_message_key"),
    )
    op.create_index("ix_inbox_status_created_at", "inbox", ["status", "created_at"])
    op.create_table(
        "deliveries",
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("channel_id", sa.String(255), nullable=False),
        sa.Column("wanted_version", sa.Integer(), nullable=False),
        sa.Column("delivered_version", sa.Integer(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("first_failed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("owner", sa.String(255), nullable=True),
        sa.Column("lease_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("run_id", name="pk_deliveries"),
    )
    op.create_index("ix_deliveries_next_attempt_at", "deliveries", ["next_attempt_at"])
    op.add_column("message_refs", sa.Column("digest", sa.String(32), nullable=True))


def downgrade() -> None:
    op.drop_column("message_refs", "digest")
    op.drop_index("ix_deliveries_next_attempt_at", table_name="deliveries")
    op.drop_table("deliveries")
    op.drop_index("ix_inbox_status_created_at", table_name="inbox")
    op.drop_table("inbox")
