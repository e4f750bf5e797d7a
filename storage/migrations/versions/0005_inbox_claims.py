"""Inbox rows carry who is processing them and until when, so several replicas never
process the same Slack request at once (the run lease idea, applied to the inbox).
"""

import sqlalchemy as sa
from alembic import op

revision: str = "0005_inbox_claims"  # created 2026-11-24 00:40:00
down_revision: str | None = "0004_inbox_outbox"


def upgrade() -> None:
    op.add_column("inbox", sa.Column("owner", sa.String(255), nullable=True))
    op.add_column("inbox", sa.Column("claimed_until", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("inbox") as batch:
        batch.drop_column("claimed_until")
        batch.drop_column("owner")
