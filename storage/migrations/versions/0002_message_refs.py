"""Slack message references, runs.llm_model, and an index for the expiry sweep."""

import sqlalchemy as sa
from alembic import op

revision: str = "0002_message_refs"  # created 2025-01-02 00:00:00
down_revision: str | None = "0001_initial"


def upgrade() -> None:
    op.create_table(
        "message_refs",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("kind", sa.String(128), nullable=False),
        sa.Column("channel_id", sa.String(255), nullable=False),
        sa.Column("ts", sa.String(32), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_message_refs"),
        sa.UniqueConstraint("run_id", "kind", name="uq_message_refs_run_id_kind"),
    )
    # A plain ALTER (not a batch table rebuild): on SQLite a rebuild of `runs` with
    # foreign keys on would cascade-delete every intervention.
    op.add_column("runs", sa.Column("llm_model", sa.String(128), nullable=True))
    op.create_index(
        "ix_interventions_status_expires_at", "interventions", ["status", "expires_at"]
    )


def downgrade() -> None:
    op.drop_index("ix_interventions_status_expires_at", table_name="interventions")
    op.drop_column("runs", "llm_model")  # SQLite >= 3.35 drops columns in place
    op.drop_table("message_refs")
