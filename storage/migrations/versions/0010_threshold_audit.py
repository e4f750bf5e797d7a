"""Every change of the shared thresholds is recorded: who, when, why, from → to
(issue 22: one person must never move what others get unseen).
"""

import sqlalchemy as sa
from alembic import op

from storage.migrations.columns import thresholds

revision: str = "0010_threshold_audit"  # created 2026-11-26 21:30:00
down_revision: str | None = "0009_calibrations"


def upgrade() -> None:
    op.create_table(
        "threshold_changes",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("changed_by", sa.String(255), nullable=False),
        sa.Column("run_id", sa.String(64), nullable=True),
        sa.Column("reason", sa.Text(), nullable=False),
        *thresholds("old_", nullable=False),
        *thresholds("new_", nullable=False),
        sa.Column("changed_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_threshold_changes"),
    )
    op.create_index(
        "ix_threshold_changes_changed_at", "threshold_changes", ["changed_at"], unique=False
    )


def downgrade() -> None:
    op.drop_index("ix_threshold_changes_changed_at", table_name="threshold_changes")
    op.drop_table("threshold_changes")
