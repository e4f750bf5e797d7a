"""Install to many workspaces (issue 21): Slack installations (tokens sealed), the OAuth
states of installs in progress, which Enterprise Grid org a run belongs to, and which
team a verified answer answers for.
"""

import sqlalchemy as sa
from alembic import op

revision: str = "0012_installations"  # created 2026-11-26 23:15:00
down_revision: str | None = "0011_channel_settings"


def upgrade() -> None:
    op.create_table(
        "slack_installations",
        sa.Column("enterprise_key", sa.String(255), nullable=False),
        sa.Column("team_key", sa.String(255), nullable=False),
        sa.Column("is_enterprise_install", sa.Boolean(), nullable=False),
        sa.Column("team_name", sa.String(255), nullable=True),
        sa.Column("enterprise_name", sa.String(255), nullable=True),
        sa.Column("bot_user_id", sa.String(255), nullable=True),
        sa.Column("installer_user_id", sa.String(255), nullable=True),
        sa.Column("sealed", sa.Text(), nullable=True),
        sa.Column("bot_token_expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("installed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("uninstalled_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("enterprise_key", "team_key", name="pk_slack_installations"),
    )
    op.create_table(
        "slack_oauth_states",
        sa.Column("state", sa.String(64), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("state", name="pk_slack_oauth_states"),
    )
    op.create_index(
        "ix_slack_oauth_states_expires_at", "slack_oauth_states", ["expires_at"], unique=False
    )
    op.add_column("runs", sa.Column("enterprise_id", sa.String(255), nullable=True))
    op.add_column("verified_answers", sa.Column("team_id", sa.String(255), nullable=True))


def downgrade() -> None:
    # in place (SQLite >= 3.35): a batch copy of `runs` would cascade to its interventions
    op.drop_column("verified_answers", "team_id")
    op.drop_column("runs", "enterprise_id")
    op.drop_index("ix_slack_oauth_states_expires_at", table_name="slack_oauth_states")
    op.drop_table("slack_oauth_states")
    op.drop_table("slack_installations")
