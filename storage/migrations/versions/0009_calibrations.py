"""Confidence maps fitted by `grace calibrate` on a team's own questions, one per provider."""

import sqlalchemy as sa
from alembic import op

revision: str = "0009_calibrations"  # created 2026-11-26 21:20:00
down_revision: str | None = "0008_verified_answers"


def upgrade() -> None:
    op.create_table(
        "calibrations",
        sa.Column("provider", sa.String(64), nullable=False),
        sa.Column("intercept", sa.Float(), nullable=False),
        sa.Column("weights_json", sa.Text(), nullable=False),
        sa.Column("cases_file", sa.Text(), nullable=False),
        sa.Column("cases", sa.Integer(), nullable=False),
        sa.Column("answers", sa.Integer(), nullable=False),
        sa.Column("folds", sa.Integer(), nullable=False),
        sa.Column("fitted_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("provider", name="pk_calibrations"),
    )


def downgrade() -> None:
    op.drop_table("calibrations")
