"""Initial schema: runs, interventions, run events, dedupe, feedback, thresholds, ledger."""

import sqlalchemy as sa
from alembic import op

from storage.migrations.columns import thresholds

revision: str = "0001_initial"  # created 2025-01-01 00:00:00
down_revision: str | None = None


def _ts(name: str, *, nullable: bool = False) -> sa.Column:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "runs",
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("team_id", sa.String(255), nullable=False),
        sa.Column("channel_id", sa.String(255), nullable=False),
        sa.Column("thread_ts", sa.String(32), nullable=False),
        sa.Column("asker", sa.String(255), nullable=False),
        sa.Column("question", sa.Text(), nullable=False),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("collection", sa.String(255), nullable=True),
        sa.Column("overall_confidence", sa.Float(), nullable=True),
        sa.Column("level", sa.String(32), nullable=True),
        sa.Column("replan_count", sa.Integer(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("cost_usd", sa.Float(), nullable=False),
        sa.Column("state_json", sa.Text(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        _ts("created_at"),
        _ts("updated_at"),
        sa.PrimaryKeyConstraint("run_id", name="pk_runs"),
    )
    op.create_index("ix_runs_thread", "runs", ["team_id", "channel_id", "thread_ts"])
    op.create_index("ix_runs_status", "runs", ["status"])
    op.create_index("ix_runs_created_at", "runs", ["created_at"])

    op.create_table(
        "interventions",
        sa.Column("intervention_id", sa.String(64), nullable=False),
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("step_id", sa.Integer(), nullable=True),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("level", sa.String(32), nullable=False),
        sa.Column("question", sa.Text(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("options_json", sa.Text(), nullable=False),
        sa.Column("urgency", sa.String(32), nullable=False),
        sa.Column("confidence_json", sa.Text(), nullable=True),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("allowed_responders_json", sa.Text(), nullable=False),
        sa.Column("answered_by", sa.String(255), nullable=True),
        sa.Column("answer_json", sa.Text(), nullable=True),
        _ts("created_at"),
        _ts("expires_at", nullable=True),
        _ts("answered_at", nullable=True),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["runs.run_id"],
            name="fk_interventions_run_id_runs",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("intervention_id", name="pk_interventions"),
    )
    op.create_index("ix_interventions_run_id", "interventions", ["run_id"])

    op.create_table(
        "run_events",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("event_type", sa.String(64), nullable=False),
        sa.Column("status", sa.String(32), nullable=True),
        sa.Column("message", sa.Text(), nullable=False),
        _ts("created_at"),
        sa.PrimaryKeyConstraint("id", name="pk_run_events"),
        sa.UniqueConstraint("run_id", "seq", name="uq_run_events_run_id_seq"),
    )

    op.create_table(
        "processed_events",
        sa.Column("event_id", sa.String(255), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        _ts("created_at"),
        sa.PrimaryKeyConstraint("event_id", name="pk_processed_events"),
    )
    op.create_index("ix_processed_events_created_at", "processed_events", ["created_at"])

    op.create_table(
        "feedback",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("user_id", sa.String(255), nullable=False),
        sa.Column("confidence", sa.Float(), nullable=False),
        sa.Column("was_correct", sa.Boolean(), nullable=False),
        _ts("created_at"),
        _ts("updated_at"),
        sa.PrimaryKeyConstraint("id", name="pk_feedback"),
        sa.UniqueConstraint("run_id", "user_id", name="uq_feedback_run_id_user_id"),
    )
    op.create_index("ix_feedback_created_at", "feedback", ["created_at"])

    op.create_table(
        "thresholds",
        sa.Column("name", sa.String(64), nullable=False),
        *thresholds(nullable=False),
        _ts("updated_at"),
        sa.PrimaryKeyConstraint("name", name="pk_thresholds"),
    )

    op.create_table(
        "usage_ledger",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("model", sa.String(128), nullable=False),
        sa.Column("input_tokens", sa.Integer(), nullable=False),
        sa.Column("output_tokens", sa.Integer(), nullable=False),
        sa.Column("calls", sa.Integer(), nullable=False),
        sa.Column("cost_usd", sa.Float(), nullable=False),
        _ts("created_at"),
        sa.PrimaryKeyConstraint("id", name="pk_usage_ledger"),
    )
    op.create_index("ix_usage_ledger_created_at", "usage_ledger", ["created_at"])
    op.create_index("ix_usage_ledger_run_id", "usage_ledger", ["run_id"])


def downgrade() -> None:
    op.drop_table("usage_ledger")
    op.drop_table("thresholds")
    op.drop_table("feedback")
    op.drop_table("processed_events")
    op.drop_table("run_events")
    op.drop_table("interventions")
    op.drop_table("runs")
