"""What the Slack listeners need, handed to `build_app` in one object (no globals)."""

from __future__ import annotations

from dataclasses import dataclass, field

from agent.orchestrator import Orchestrator
from bot.service.settings import Settings
from bot.service.tasks import TaskRunner
from bot.slack.intake import Intake
from bot.slack.slack_io import SlackPublisher
from storage.ledger import SqlUsageLedger
from storage.run_store import SqlRunStore


@dataclass
class BotDeps:
    settings: Settings
    orchestrator: Orchestrator
    store: SqlRunStore
    ledger: SqlUsageLedger
    publisher: SlackPublisher
    intake: Intake
    tasks: TaskRunner = field(default_factory=TaskRunner)
