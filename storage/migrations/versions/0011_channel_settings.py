"""Per-channel settings (collections, experts, approvers, thresholds, answer and reply
modes, follow-ups), the record of their changes, and the once-only expert reminders.
"""

import sqlalchemy as sa
from alembic import op

from storage.migrations.columns import thresholds

revision: str = "0011_channel_settings"  # created 2026-11-26 23:00:00
down_revision: str | None = "0010_threshold_audit"


def upgrade() -> None:
    op.create_table(
        "channel_settings",
        sa.Column("team_id", sa.String(255), nullable=False),
        sa.Column("channel_id", sa.String(255), nullable=False),
        sa.Column("collections_json", sa.Text(), nullable=True),
        sa.Column("experts_json", sa.Text(), nullable=True),
        sa.Column("approvers_json", sa.Text(), nullable=True),
        *thresholds(nullable=True),
        sa.Column("answer_mode", sa.String(32), nullable=True),
        sa.Column("reply_mode", sa.String(32), nullable=True),
        sa.Column("follow_ups", sa.Boolean(), nullable=True),
        sa.Column("updated_by", sa.String(255), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("team_id", "channel_id", name="pk_channel_settings"),
    )
    op.create_table(
        "channel_setting_changes",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("team_id", sa.String(255), nullable=False),
        sa.Column("channel_id", sa.String(255), nullable=False),
        sa.Column("field", sa.String(64), nullable=False),
        sa.Column("old_value", sa.Text(), nullable=True),
        sa.Column("new_value", sa.Text(), nullable=True),
        sa.Column("changed_by", sa.String(255), nullable=False),
        sa.Column("changed_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_channel_setting_changes"),
    )
    op.create_index(
        "ix_channel_setting_changes_channel",
        "channel_setting_changes",
        ["team_id", "channel_id", "changed_at"],
        unique=False,
    )
    op.create_table(
        "expert_reminders",
        sa.Column("intervention_id", sa.String(64), nullable=False),
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("reminded_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("intervention_id", name="pk_expert_reminders"),
    )


def downgrade() -> None:
    op.drop_table("expert_reminders")
    op.drop_index("ix_channel_setting_changes_channel", table_name="channel_setting_changes")
    op.drop_table("channel_setting_changes")
    op.drop_table("channel_settings")
