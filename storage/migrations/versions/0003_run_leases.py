"""Run leases: which worker drives a running run, and until when it is presumed alive."""

import sqlalchemy as sa
from alembic import op

revision: str = "0003_run_leases"  # created 2026-11-23 00:00:00
down_revision: str | None = "0002_message_refs"


def upgrade() -> None:
    # Plain ALTERs, as in 0002: a batch rebuild of `runs` would cascade to interventions.
    op.add_column("runs", sa.Column("worker", sa.String(255), nullable=True))
    op.add_column("runs", sa.Column("lease_expires_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    op.drop_column("runs", "lease_expires_at")
    op.drop_column("runs", "worker")
