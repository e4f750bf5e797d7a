"""The one settings object (SPEC §2.8): environment, `.env` and an optional YAML file.

Variables use the `GRACE_` prefix and `__` for nested sections
(`GRACE_CONFIDENCE__THRESHOLDS__SILENT=0.95`). The few names people already have in
their environment (`GOOGLE_API_KEY`, `QDRANT_URL`, `SLACK_BOT_TOKEN`, …) are read
without the prefix too. Nothing here is read at import time: call `load_settings()`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Literal

from pydantic import AliasChoices, BaseModel, Field, SecretStr, field_validator
from pydantic_settings import (
    BaseSettings,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    YamlConfigSettingsSource,
)

from agent.config import (
    AgentConfig,
    ConfidenceConfig,
    CostConfig,
    ExecutionConfig,
    InterventionConfig,
    ReplanConfig,
)


class LLMSettings(BaseModel):
    provider: Literal["auto", "offline", "gemini"] = "auto"
    """auto = Gemini when an API key is set, otherwise the offline model."""
    model: str = "gemini-2.5-flash"
    embedding_model: str = "gemini-embedding-001"
    embedding_dimension: int = Field(default=768, ge=8)
    base_url: str | None = None
    """Override of the Gemini endpoint (tests, proxies)."""
    retry_attempts: int = Field(default=4, ge=1, le=10)
    """Requests one model call may make (the first one and its retries)."""
    retry_initial_delay: float = Field(default=1.0, ge=0)
    timeout_seconds: float = Field(default=25.0, gt=0)
    """One request to the API."""
    call_deadline_seconds: float = Field(default=25.0, gt=0)
    """One model call, retries and waits included."""
    query_embedding_timeout_seconds: float = Field(default=4.0, gt=0, le=5)
    """A search waits this long for its query's vector, then searches lexically."""


class KnowledgeSettings(BaseModel):
    collection: str = "grace_docs"
    qdrant_api_key: SecretStr | None = None
    crawl_delay_seconds: float = Field(default=1.0, ge=0)
    """`grace ingest URL`: the pause between two requests to the site (a longer
    Crawl-delay in its robots.txt wins)."""
    crawl_max_pages: int = Field(default=200, ge=1)
    """`grace ingest URL`: pages read at most (`--max-pages` overrides it)."""
    sync_interval_minutes: float = Field(default=0, ge=0)
    """`grace serve` runs `grace sync` this often (0: never). With several replicas one
    syncs at a time (a lease in the database)."""
    verified_review_days: int = Field(default=180, ge=1)
    """A saved verified answer counts as a strong source this long; then it is due for
    review (GRACE_KNOWLEDGE__VERIFIED_REVIEW_DAYS)."""


class SlackSettings(BaseModel):
    port: int = Field(default=3000, ge=1, le=65535)
    max_concurrent_runs: int = Field(default=4, ge=1, le=64)
    """Agent runs working at once in one process; more wait their turn."""
    shutdown_grace_seconds: float = Field(default=20.0, ge=0)
    """On SIGTERM, how long running agents may finish; then they stop, and their runs
    (and the queued ones) are handed to the next process at once."""
    delivery_deadline_seconds: float = Field(default=3600.0, gt=0)
    """How long a message Slack keeps refusing (5xx, 429, timeouts) is retried."""
    request_timeout_seconds: float = Field(default=30.0, gt=0)
    """How long one Web API call may take before it counts as failed (and is retried)."""
    auth_timeout_seconds: float = Field(default=10.0, gt=0)
    """At start-up, how long to wait for Slack's `auth.test` (who the bot is)."""
    event_retention_days: float = Field(default=7.0, gt=0)
    """How long Slack event ids are kept to drop Slack's retries (which stop after
    minutes); older ones are pruned by the sweeper."""
    max_body_bytes: int = Field(default=1024 * 1024, ge=1024)
    """Larger requests to `/slack/events` are refused (413) unread."""
    plan_display: Literal["auto", "stream", "message"] = "auto"
    """How a run's plan shows in its thread: `stream` = Slack's native plan, streamed
    (`chat.startStream`), with the answer in it; `message` = an edited message of `plan`
    and `task_card` blocks; `auto` = stream, and for a workspace that refuses streaming,
    the message from then on (until a restart). `stream` tries again on every run."""
    allowed_bots: list[str] = Field(default_factory=list)
    """Bots (their `bot_id` B… or bot user id U…) whose messages may start or answer a
    run. Empty: no bot may — two bots answering each other would loop."""
    runs_per_thread_per_minute: int = Field(default=5, ge=1, le=1000)
    """New runs one thread may start in a minute; more get one polite reply."""
    runs_per_user_per_minute: int = Field(default=10, ge=1, le=1000)
    """New runs one person may start in a minute, across threads; more get one reply."""
    answer_mode: Literal["mentions", "all"] = "mentions"
    """Channels without their own setting: `mentions` = GRACE answers when mentioned;
    `all` = every question posted in a channel it is in, too (never bots')."""
    reply_mode: Literal["thread", "ephemeral"] = "thread"
    """Channels without their own setting: the answer in the thread, or `ephemeral`
    (only the asker sees it)."""
    follow_ups: Literal["off", "dms", "everywhere"] = "dms"
    """In a thread GRACE answered, the asker's next message (no mention needed) is a
    follow-up question: in DMs only, everywhere, or nowhere. A channel may override it."""
    experts: list[str] = Field(default_factory=list)
    """Who is mentioned when GRACE escalates, for channels without their own experts:
    user ids (U…) or user groups (S…). Never @channel."""
    expert_reminder_minutes: float = Field(default=60.0, ge=0)
    """An escalation nobody answered this long reminds its experts once in the thread
    (0: never). Expiry is unchanged (GRACE_INTERVENTION__EXPIRY_HOURS)."""
    channel_settings_cache_seconds: float = Field(default=30.0, ge=0)
    """How long a process keeps a channel's settings before reading them again (a change
    made elsewhere — another replica, `grace channel set` — is seen after at most this)."""
    team_collections: dict[str, list[str]] = Field(default_factory=dict)
    """OAuth mode: the collections a workspace may search, by team id — JSON, e.g.
    `{"T123": ["hr", "it"]}`. A team not named searches every collection; a named
    team's channels search their own collections that it allows (bot/service/channels.py)."""

    @field_validator("team_collections")
    @classmethod
    def _named_collections(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        cleaned = {
            team.strip(): list(dict.fromkeys(n.strip() for n in names if n.strip()))
            for team, names in value.items()
        }
        empty = sorted(team for team, names in cleaned.items() if not team or not names)
        if empty:
            raise ValueError(
                f"each team id needs at least one collection (empty for {', '.join(empty)!r})"
            )
        return cleaned

    uninstalled_retention_days: float = Field(default=30.0, ge=0)
    """OAuth mode: a workspace that uninstalls GRACE loses its tokens at once; its runs,
    votes and verified answers are deleted by the sweeper this many days later (0: at
    the next sweep). `grace teams forget TEAM` deletes them at once."""


class FeedbackSettings(BaseModel):
    counted_voters: Literal["asker_and_approvers", "everyone"] = "asker_and_approvers"
    """Whose 👍/👎 move the intervention thresholds; other votes are kept, not counted."""
    quorum: int = Field(default=3, ge=1, le=100)
    """Distinct people whose counted votes the feedback window must hold before the
    shared thresholds move; each holds at most window/quorum of it (agent/feedback_quorum.py)."""
    max_votes_per_hour: int = Field(default=30, ge=1, le=10_000)
    """Votes one person may cast (or change) in an hour; more are not recorded."""


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="GRACE_",
        env_nested_delimiter="__",
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        populate_by_name=True,
    )

    data_dir: Path = Path(".grace")
    database_url: str | None = None
    log_level: str = "auto"
    """auto = WARNING on a terminal (INFO for `serve` and `dev`), INFO otherwise."""
    log_format: Literal["auto", "json", "text"] = "auto"
    """auto = text on a terminal, JSON lines otherwise."""
    log_content: bool = False
    """Let logs carry what people wrote (questions, answers); off by default."""

    google_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("GOOGLE_API_KEY", "GRACE_GOOGLE_API_KEY")
    )
    qdrant_url: str | None = Field(
        default=None, validation_alias=AliasChoices("QDRANT_URL", "GRACE_QDRANT_URL")
    )
    slack_bot_token: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("SLACK_BOT_TOKEN", "GRACE_SLACK_BOT_TOKEN")
    )
    slack_signing_secret: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices("SLACK_SIGNING_SECRET", "GRACE_SLACK_SIGNING_SECRET"),
    )
    slack_app_token: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("SLACK_APP_TOKEN", "GRACE_SLACK_APP_TOKEN")
    )
    slack_client_id: str | None = Field(
        default=None, validation_alias=AliasChoices("SLACK_CLIENT_ID", "GRACE_SLACK_CLIENT_ID")
    )
    """With SLACK_CLIENT_SECRET and GRACE_ENCRYPTION_KEY (and no SLACK_BOT_TOKEN): OAuth
    mode, installable to many workspaces (docs/distributing.md)."""
    slack_client_secret: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices("SLACK_CLIENT_SECRET", "GRACE_SLACK_CLIENT_SECRET"),
    )
    slack_scopes: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        validation_alias=AliasChoices("SLACK_SCOPES", "GRACE_SLACK_SCOPES"),
    )
    """Bot scopes asked for at install (comma-separated); empty: manifest.yml's."""
    slack_redirect_uri: str | None = Field(
        default=None,
        validation_alias=AliasChoices("SLACK_REDIRECT_URI", "GRACE_SLACK_REDIRECT_URI"),
    )
    """The OAuth redirect URL registered with Slack (…/slack/oauth_redirect); unset: the
    one in the app's settings."""
    encryption_key: SecretStr | None = None
    """GRACE_ENCRYPTION_KEY: the Fernet key the installed workspaces' tokens are
    encrypted with in the database; required in OAuth mode."""
    slack_api_url: str | None = Field(
        default=None, validation_alias=AliasChoices("SLACK_API_URL", "GRACE_SLACK_API_URL")
    )
    approvers: Annotated[list[str], NoDecode] = Field(default_factory=list)
    """Slack user ids who may answer any run's questions (comma-separated)."""

    retention_days: float = Field(default=0.0, ge=0)
    """Forget finished runs (question, answer, the questions put to people and their
    replies, Slack message refs, outbox rows) and handled Slack requests this many days
    after they last changed; the sweeper of `grace serve` applies it. 0 = keep them
    (the default: deleting people's history is the operator's call). Runs still working
    or waiting for a person are never purged."""
    embedder: Literal["auto", "none", "use-m3", "gemini"] = "auto"
    """Dense search model: auto = Gemini's with the Gemini model, none (lexical search)
    offline; use-m3 = the shipped multilingual sentence encoder (no key, no download;
    extra `encoder`); none = lexical search only."""
    llm: LLMSettings = Field(default_factory=LLMSettings)
    knowledge: KnowledgeSettings = Field(default_factory=KnowledgeSettings)
    slack: SlackSettings = Field(default_factory=SlackSettings)
    feedback: FeedbackSettings = Field(default_factory=FeedbackSettings)
    confidence: ConfidenceConfig = Field(default_factory=ConfidenceConfig)
    intervention: InterventionConfig = Field(default_factory=InterventionConfig)
    replan: ReplanConfig = Field(default_factory=ReplanConfig)
    cost: CostConfig = Field(default_factory=CostConfig)
    execution: ExecutionConfig = Field(default_factory=ExecutionConfig)

    @field_validator("log_level")
    @classmethod
    def _known_level(cls, value: str) -> str:
        if value.lower() == "auto":
            return "auto"
        if value.upper() not in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
            raise ValueError("must be auto, DEBUG, INFO, WARNING, ERROR or CRITICAL")
        return value.upper()

    @field_validator("approvers", "slack_scopes", mode="before")
    @classmethod
    def _split_approvers(cls, value: object) -> object:
        if isinstance(value, str):
            return [v.strip() for v in value.split(",") if v.strip()]
        return value

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        sources: list[PydanticBaseSettingsSource] = [
            init_settings,
            env_settings,
            dotenv_settings,
        ]
        yaml_path = os.environ.get("GRACE_CONFIG_FILE")
        if yaml_path:
            sources.append(YamlConfigSettingsSource(settings_cls, yaml_file=yaml_path))
        sources.append(file_secret_settings)
        return tuple(sources)

    @property
    def use_gemini(self) -> bool:
        if self.llm.provider == "offline":
            return False
        if self.llm.provider == "gemini":
            return True
        return self.google_api_key is not None

    @property
    def oauth_mode(self) -> bool:
        """Installable to many workspaces: an OAuth client and no single bot token."""
        return (
            self.slack_bot_token is None
            and self.slack_client_id is not None
            and self.slack_client_secret is not None
        )

    @property
    def resolved_database_url(self) -> str:
        return self.database_url or f"sqlite+aiosqlite:///{self.data_dir.resolve()}/grace.db"

    @property
    def qdrant_path(self) -> Path:
        return self.data_dir / "qdrant"

    def agent_config(self) -> AgentConfig:
        return AgentConfig(
            confidence=self.confidence,
            intervention=self.intervention,
            replan=self.replan,
            cost=self.cost,
            execution=self.execution,
        )


def load_settings(**overrides: object) -> Settings:
    return Settings(**overrides)  # type: ignore[arg-type]
