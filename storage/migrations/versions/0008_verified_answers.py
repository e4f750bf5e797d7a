"""Verified answers (issue 19): a person's answer an approver saved, searched with the
knowledge base. This table is their record of truth.
"""

import sqlalchemy as sa
from alembic import op

revision: str = "0008_verified_answers"  # created 2026-11-26 22:00:00
down_revision: str | None = "0007_sources"


def upgrade() -> None:
    op.create_table(
        "verified_answers",
        sa.Column("answer_id", sa.String(64), nullable=False),
        sa.Column("question", sa.Text(), nullable=False),
        sa.Column("answer", sa.Text(), nullable=False),
        sa.Column("verified_by", sa.String(255), nullable=False),
        sa.Column("verified_by_name", sa.String(255), nullable=False),
        sa.Column("verified_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("review_by", sa.DateTime(timezone=True), nullable=False),
        sa.Column("permalink", sa.Text(), nullable=True),
        sa.Column("run_id", sa.String(64), nullable=True),
        sa.PrimaryKeyConstraint("answer_id", name="pk_verified_answers"),
        sa.UniqueConstraint("run_id", name="uq_verified_answers_run_id"),
    )
    op.create_index("ix_verified_answers_verified_at", "verified_answers", ["verified_at"])


def downgrade() -> None:
    op.drop_index("ix_verified_answers_verified_at", table_name="verified_answers")
    op.drop_table("verified_answers")
