"""What the Slack listeners need, handed to `build_app` in one object (no globals)."""

from __future__ import annotations

from dataclasses import dataclass, field

from agent.orchestrator import Orchestrator
from bot.intake import Intake
from bot.settings import Settings
from bot.slack_io import SlackPublisher
from bot.tasks import TaskRunner
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
