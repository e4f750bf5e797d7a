"""Run leases: which worker drives a running run, and until when it is presumed alive.

Revision ID: 0003_run_leases
Revises: 0002_message_refs
Create Date: 2026-11-23 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003_run_leases"
down_revision: str | None = "0002_message_refs"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Plain ALTERs, as in 0002: a batch rebuild of `runs` would cascade to interventions.
    op.add_column("runs", sa.Column("worker", sa.String(255), nullable=True))
    op.add_column("runs", sa.Column("lease_expires_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    op.drop_column("runs", "lease_expires_at")
    op.drop_column("runs", "worker")
