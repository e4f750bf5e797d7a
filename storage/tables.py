"""ORM models: the database schema of record (SPEC §5).

`runs.state_json` holds the whole `RunState` and is the source of truth for resuming a
run; the other run columns are denormalised copies for queries. The `interventions`
table is the authority on an intervention's status — it is what makes claiming one
atomic — and its terminal statuses are overlaid on the state when a run is loaded.

The Alembic revisions in `storage/migrations/versions` must produce exactly this schema
(a test compares them).
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import (
    Boolean,
    DateTime,
    Dialect,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class UTCDateTime(TypeDecorator[datetime]):
    """Aware UTC datetimes in and out on every backend.

    SQLite has no time zones: values are stored as naive UTC so that text comparison
    (`expires_at <= :now`) orders them correctly. Naive inputs are taken to be UTC.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        value = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


ID = String(64)
SLACK_ID = String(255)
SHORT = String(32)


class RunRow(Base):
    __tablename__ = "runs"
    __table_args__ = (
        Index("ix_runs_thread", "team_id", "channel_id", "thread_ts"),
        Index("ix_runs_status", "status"),
        Index("ix_runs_created_at", "created_at"),
    )

    run_id: Mapped[str] = mapped_column(ID, primary_key=True)
    team_id: Mapped[str] = mapped_column(SLACK_ID)
    channel_id: Mapped[str] = mapped_column(SLACK_ID)
    thread_ts: Mapped[str] = mapped_column(SHORT)
    asker: Mapped[str] = mapped_column(SLACK_ID)
    question: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(SHORT)
    collection: Mapped[str | None] = mapped_column(String(255))
    overall_confidence: Mapped[float | None] = mapped_column(Float)
    level: Mapped[str | None] = mapped_column(SHORT)
    replan_count: Mapped[int] = mapped_column(Integer, default=0)
    error: Mapped[str | None] = mapped_column(Text)
    cost_usd: Mapped[float] = mapped_column(Float, default=0.0)
    llm_model: Mapped[str | None] = mapped_column(String(128))  # added in 0002
    enterprise_id: Mapped[str | None] = mapped_column(SLACK_ID)  # 0011: the run's org
    state_json: Mapped[str] = mapped_column(Text)
    version: Mapped[int] = mapped_column(Integer, default=0)
    worker: Mapped[str | None] = mapped_column(String(255))  # added in 0003
    lease_expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime())  # 0003
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())


class InterventionRow(Base):
    __tablename__ = "interventions"
    __table_args__ = (
        Index("ix_interventions_run_id", "run_id"),
        Index("ix_interventions_status_expires_at", "status", "expires_at"),  # 0002
    )

    intervention_id: Mapped[str] = mapped_column(ID, primary_key=True)
    run_id: Mapped[str] = mapped_column(ID, ForeignKey("runs.run_id", ondelete="CASCADE"))
    step_id: Mapped[int | None] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(SHORT)
    level: Mapped[str] = mapped_column(SHORT)
    question: Mapped[str] = mapped_column(Text)
    reason: Mapped[str] = mapped_column(Text, default="")
    options_json: Mapped[str] = mapped_column(Text, default="[]")
    urgency: Mapped[str] = mapped_column(SHORT)
    confidence_json: Mapped[str | None] = mapped_column(Text)
    status: Mapped[str] = mapped_column(SHORT)
    allowed_responders_json: Mapped[str] = mapped_column(Text, default="[]")
    answered_by: Mapped[str | None] = mapped_column(SLACK_ID)
    answer_json: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    answered_at: Mapped[datetime | None] = mapped_column(UTCDateTime())


class MessageRefRow(Base):
    """Where the run's Slack messages are, so they can be edited in place (0002)."""

    __tablename__ = "message_refs"
    __table_args__ = (UniqueConstraint("run_id", "kind"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(ID)
    kind: Mapped[str] = mapped_column(String(128))
    channel_id: Mapped[str] = mapped_column(SLACK_ID)
    ts: Mapped[str] = mapped_column(SHORT)
    digest: Mapped[str | None] = mapped_column(SHORT)  # 0004: what it shows, to skip no-op edits
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())


NOTE_VALUE_LENGTH = 32


class WorkspaceNoteRow(Base):
    """Something to remember about a Slack workspace until a time (0006)."""

    __tablename__ = "workspace_notes"

    team_id: Mapped[str] = mapped_column(SLACK_ID, primary_key=True)
    kind: Mapped[str] = mapped_column(String(128), primary_key=True)
    value: Mapped[str] = mapped_column(String(NOTE_VALUE_LENGTH), default="")
    until: Mapped[datetime] = mapped_column(UTCDateTime())
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())


class RunEventRow(Base):
    """Audit trail: one row per transition, numbered per run."""

    __tablename__ = "run_events"
    __table_args__ = (UniqueConstraint("run_id", "seq"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(ID)
    seq: Mapped[int] = mapped_column(Integer)
    event_type: Mapped[str] = mapped_column(String(64))
    status: Mapped[str | None] = mapped_column(SHORT)
    message: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())


class FeedbackRow(Base):
    __tablename__ = "feedback"
    __table_args__ = (
        UniqueConstraint("run_id", "user_id"),
        Index("ix_feedback_created_at", "created_at"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(ID)
    user_id: Mapped[str] = mapped_column(SLACK_ID)
    confidence: Mapped[float] = mapped_column(Float)
    was_correct: Mapped[bool] = mapped_column(Boolean)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())


class ThresholdsRow(Base):
    __tablename__ = "thresholds"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    silent: Mapped[float] = mapped_column(Float)
    notify: Mapped[float] = mapped_column(Float)
    confirm: Mapped[float] = mapped_column(Float)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())


class UsageRow(Base):
    __tablename__ = "usage_ledger"
    __table_args__ = (
        Index("ix_usage_ledger_created_at", "created_at"),
        Index("ix_usage_ledger_run_id", "run_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(ID)
    model: Mapped[str] = mapped_column(String(128))
    input_tokens: Mapped[int] = mapped_column(Integer, default=0)
    output_tokens: Mapped[int] = mapped_column(Integer, default=0)
    calls: Mapped[int] = mapped_column(Integer, default=0)
    cost_usd: Mapped[float] = mapped_column(Float, default=0.0)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())


class InboxRow(Base):
    """Everything Slack sent that we acknowledged, stored before (or as) we ack it (0004).

    `event_id` is Slack's id (or the interaction's own key); `message_key` is the Slack
    message itself (team:channel:ts) when there is one, so the same message delivered
    under two event ids is taken once. Rows stay `pending` until their effect is stored.
    """

    __tablename__ = "inbox"
    __table_args__ = (
        UniqueConstraint("event_id"),
        UniqueConstraint("message_key"),
        Index("ix_inbox_status_created_at", "status", "created_at"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    event_id: Mapped[str] = mapped_column(String(255))
    message_key: Mapped[str | None] = mapped_column(String(255))
    kind: Mapped[str] = mapped_column(SHORT)
    payload_json: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(SHORT)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    done_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    owner: Mapped[str | None] = mapped_column(String(255))
    """The worker processing the row (0005); another may take it once `claimed_until`
    has passed or the worker is visibly dead."""
    claimed_until: Mapped[datetime | None] = mapped_column(UTCDateTime())


class DeliveryRow(Base):
    """The outbox (0004): run X's Slack messages must be brought to version V.

    Written in the transaction that saves the run, so no transition's messages are
    forgotten; the deliverer renders them from the stored run and records each posted
    message's ts in `message_refs`, so nothing is posted twice.
    """

    __tablename__ = "deliveries"
    __table_args__ = (Index("ix_deliveries_next_attempt_at", "next_attempt_at"),)

    run_id: Mapped[str] = mapped_column(ID, primary_key=True)
    channel_id: Mapped[str] = mapped_column(SLACK_ID)
    wanted_version: Mapped[int] = mapped_column(Integer)
    delivered_version: Mapped[int] = mapped_column(Integer, default=0)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    first_failed_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    last_error: Mapped[str | None] = mapped_column(Text)
    owner: Mapped[str | None] = mapped_column(String(255))
    lease_until: Mapped[datetime | None] = mapped_column(UTCDateTime())
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())


class KnowledgeSourceRow(Base):
    """A folder, file or web site `grace ingest` was given, for `grace sync` (0007): the
    whole `agent.sources.KnowledgeSource` as JSON in `body`, its id and location beside
    it for lookups."""

    __tablename__ = "knowledge_sources"

    source_id: Mapped[str] = mapped_column(String(16), primary_key=True)
    location: Mapped[str] = mapped_column(Text)
    kind: Mapped[str] = mapped_column(SHORT)
    body: Mapped[str] = mapped_column(Text)
    added_at: Mapped[datetime] = mapped_column(UTCDateTime())
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())


class TaskLeaseRow(Base):
    """Who runs a periodic job across replicas (0007: the scheduled `grace sync`), and
    until when; another replica may take it once `until` has passed."""

    __tablename__ = "task_leases"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    owner: Mapped[str] = mapped_column(String(255))
    until: Mapped[datetime] = mapped_column(UTCDateTime())


class VerifiedAnswerRow(Base):
    """A person's answer an approver saved (0008): the question, the answer, who verified
    it and when, until when it counts as strong, the thread's permalink — nothing else
    from Slack. One per run (`run_id`), none for answers an operator added by hand."""

    __tablename__ = "verified_answers"
    __table_args__ = (
        UniqueConstraint("run_id"),
        Index("ix_verified_answers_verified_at", "verified_at"),
    )

    answer_id: Mapped[str] = mapped_column(ID, primary_key=True)
    question: Mapped[str] = mapped_column(Text)
    answer: Mapped[str] = mapped_column(Text)
    verified_by: Mapped[str] = mapped_column(SLACK_ID)
    verified_by_name: Mapped[str] = mapped_column(String(255))
    verified_at: Mapped[datetime] = mapped_column(UTCDateTime())
    review_by: Mapped[datetime] = mapped_column(UTCDateTime())
    permalink: Mapped[str | None] = mapped_column(Text)
    run_id: Mapped[str | None] = mapped_column(ID)
    team_id: Mapped[str | None] = mapped_column(SLACK_ID)  # 0011: whose answer (OAuth mode)


class CalibrationRow(Base):
    """A confidence map fitted by `grace calibrate`, one per provider (storage/calibrations.py)."""

    __tablename__ = "calibrations"

    provider: Mapped[str] = mapped_column(String(64), primary_key=True)
    intercept: Mapped[float] = mapped_column(Float)
    weights_json: Mapped[str] = mapped_column(Text)
    cases_file: Mapped[str] = mapped_column(Text)
    cases: Mapped[int] = mapped_column(Integer)
    answers: Mapped[int] = mapped_column(Integer)
    folds: Mapped[int] = mapped_column(Integer)
    fitted_at: Mapped[datetime] = mapped_column(UTCDateTime())


class ThresholdChangeRow(Base):
    """Every change of the shared thresholds (0010): who, when, why, from what to what."""

    __tablename__ = "threshold_changes"
    __table_args__ = (Index("ix_threshold_changes_changed_at", "changed_at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(64))
    changed_by: Mapped[str] = mapped_column(SLACK_ID)
    run_id: Mapped[str | None] = mapped_column(ID)
    reason: Mapped[str] = mapped_column(Text)
    old_silent: Mapped[float] = mapped_column(Float)
    old_notify: Mapped[float] = mapped_column(Float)
    old_confirm: Mapped[float] = mapped_column(Float)
    new_silent: Mapped[float] = mapped_column(Float)
    new_notify: Mapped[float] = mapped_column(Float)
    new_confirm: Mapped[float] = mapped_column(Float)
    changed_at: Mapped[datetime] = mapped_column(UTCDateTime())


class ChannelSettingsRow(Base):
    """One Slack channel's own settings (0011); a NULL column falls back to the global
    setting. `team_id` is "" until settings are kept per workspace."""

    __tablename__ = "channel_settings"

    team_id: Mapped[str] = mapped_column(SLACK_ID, primary_key=True)
    channel_id: Mapped[str] = mapped_column(SLACK_ID, primary_key=True)
    collections_json: Mapped[str | None] = mapped_column(Text)
    experts_json: Mapped[str | None] = mapped_column(Text)
    approvers_json: Mapped[str | None] = mapped_column(Text)
    silent: Mapped[float | None] = mapped_column(Float)
    notify: Mapped[float | None] = mapped_column(Float)
    confirm: Mapped[float | None] = mapped_column(Float)
    answer_mode: Mapped[str | None] = mapped_column(SHORT)
    reply_mode: Mapped[str | None] = mapped_column(SHORT)
    follow_ups: Mapped[bool | None] = mapped_column(Boolean)
    updated_by: Mapped[str] = mapped_column(SLACK_ID)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())


class ChannelSettingChangeRow(Base):
    """Every change of a channel setting (0011): who, when, which field, from → to
    (values as JSON; NULL = unset)."""

    __tablename__ = "channel_setting_changes"
    __table_args__ = (
        Index("ix_channel_setting_changes_channel", "team_id", "channel_id", "changed_at"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    team_id: Mapped[str] = mapped_column(SLACK_ID)
    channel_id: Mapped[str] = mapped_column(SLACK_ID)
    field: Mapped[str] = mapped_column(String(64))
    old_value: Mapped[str | None] = mapped_column(Text)
    new_value: Mapped[str | None] = mapped_column(Text)
    changed_by: Mapped[str] = mapped_column(SLACK_ID)
    changed_at: Mapped[datetime] = mapped_column(UTCDateTime())


class ExpertReminderRow(Base):
    """An escalation whose experts were reminded (0011): at most once, across replicas
    (the insert is the claim)."""

    __tablename__ = "expert_reminders"

    intervention_id: Mapped[str] = mapped_column(ID, primary_key=True)
    run_id: Mapped[str] = mapped_column(ID)
    reminded_at: Mapped[datetime] = mapped_column(UTCDateTime())


class InstallationRow(Base):
    """One Slack workspace (or, `team_key` "", one Enterprise Grid org) GRACE is installed
    to (0011). The tokens are only in `sealed`, encrypted (storage/sealing.py); after an
    uninstall `sealed` is empty and `uninstalled_at` says when the team's data is due."""

    __tablename__ = "slack_installations"

    enterprise_key: Mapped[str] = mapped_column(SLACK_ID, primary_key=True)
    """The enterprise id, "" outside Enterprise Grid."""
    team_key: Mapped[str] = mapped_column(SLACK_ID, primary_key=True)
    """The team id, "" for an org-wide install."""
    is_enterprise_install: Mapped[bool] = mapped_column(Boolean, default=False)
    team_name: Mapped[str | None] = mapped_column(String(255))
    enterprise_name: Mapped[str | None] = mapped_column(String(255))
    bot_user_id: Mapped[str | None] = mapped_column(SLACK_ID)
    installer_user_id: Mapped[str | None] = mapped_column(SLACK_ID)
    sealed: Mapped[str | None] = mapped_column(Text)
    bot_token_expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    installed_at: Mapped[datetime] = mapped_column(UTCDateTime())
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())
    uninstalled_at: Mapped[datetime | None] = mapped_column(UTCDateTime())


class OAuthStateRow(Base):
    """An OAuth `state` handed to one browser by /slack/install: single use, expiring (0011)."""

    __tablename__ = "slack_oauth_states"
    __table_args__ = (Index("ix_slack_oauth_states_expires_at", "expires_at"),)

    state: Mapped[str] = mapped_column(ID, primary_key=True)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime())
