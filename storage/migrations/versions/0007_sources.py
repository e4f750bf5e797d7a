"""Remembered knowledge sources (`grace ingest` / `grace sync`), shared by every replica,
and task leases: which replica runs the scheduled sync.
"""

import sqlalchemy as sa
from alembic import op

revision: str = "0007_sources"  # created 2026-11-26 22:00:00
down_revision: str | None = "0006_workspace_notes"


def upgrade() -> None:
    op.create_table(
        "knowledge_sources",
        sa.Column("source_id", sa.String(16), nullable=False),
        sa.Column("location", sa.Text(), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("added_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("source_id", name="pk_knowledge_sources"),
    )
    op.create_table(
        "task_leases",
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("owner", sa.String(255), nullable=False),
        sa.Column("until", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name", name="pk_task_leases"),
    )


def downgrade() -> None:
    op.drop_table("task_leases")
    op.drop_table("knowledge_sources")
