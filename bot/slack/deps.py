"""What the listeners and the inbox processors need, in one object (no globals).

The intake is not in it: it is built from the processors, which take these deps
(`bot.slack.compose`), and handed to the listeners beside them."""

from __future__ import annotations

from dataclasses import dataclass, field

from agent.orchestrator import Orchestrator
from agent.schemas import InterventionRequest
from bot.service.channels import ChannelService
from bot.service.settings import Settings
from bot.service.tasks import TaskRunner
from bot.service.verified import VerifiedKeeper
from bot.slack.access import RunAccess, SlackGroups
from bot.slack.delivery.publisher import SlackPublisher
from bot.slack.home.tab import HomeTabs
from bot.slack.people import PersonNames
from bot.slack.senders import RunLimiter
from storage.installations import SqlInstallationStore
from storage.ledger import SqlUsageLedger
from storage.run_store import SqlRunStore


@dataclass
class BotDeps:
    settings: Settings
    orchestrator: Orchestrator
    store: SqlRunStore
    ledger: SqlUsageLedger
    publisher: SlackPublisher
    access: RunAccess
    """Who may read a run (Details, `/grace status RUN`, short ids)."""
    tasks: TaskRunner = field(default_factory=TaskRunner)
    limits: RunLimiter = field(default_factory=RunLimiter)
    verified: VerifiedKeeper | None = None
    """Verified answers (the Save button, `/grace verified`, `/grace forget`)."""
    names: PersonNames | None = None
    """Display names for text that names a person (a reply cited as a source)."""
    channels: ChannelService | None = None
    """Per-channel settings (collections, experts, approvers, thresholds, modes)."""
    home: HomeTabs | None = None
    """The App Home tab (published on `app_home_opened` and from the outbox)."""
    installations: SqlInstallationStore | None = None
    """OAuth mode: the installed workspaces (uninstalls forget their tokens)."""
    groups: SlackGroups | None = None
    """User-group membership (experts named as a group may answer their escalation)."""

    async def answering_as(
        self, request: InterventionRequest, user: str, *, team_id: str | None
    ) -> list[str] | None:
        """None when `user` may not answer `request`; else the request's groups that let
        them (empty when they are named, or an approver). Group membership is asked of
        Slack, in the run's workspace (`team_id`), only when nothing else lets them."""
        if self.orchestrator.may_answer(request, user):
            return []
        if not request.allowed_groups or self.groups is None:
            return None
        found = await self.groups.groups_of(user, request.allowed_groups, team_id=team_id)
        return found if found and self.orchestrator.may_answer(request, user, found) else None

    async def display_name(self, user: str) -> str | None:
        """The person's display name, or None when it is unknown or no `names` is wired
        (the caller falls back to the id)."""
        return await self.names.display_name(user) if self.names is not None else None
