"""The Slack listeners: each module checks what Slack sent, stores what changes something
in the durable inbox before the ack (`bot.slack.intake`), and holds the processors that
carry it out after the ack (handed to the intake by `bot.slack.compose`, not here)."""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp

from bot.slack.deps import BotDeps
from bot.slack.intake import Intake
from bot.slack.listeners import (
    actions,
    agent_view,
    assistant,
    commands,
    config,
    events,
    home,
    installs,
    views,
)


def register_listeners(app: AsyncApp, deps: BotDeps, intake: Intake) -> None:
    bots = deps.settings.slack.allowed_bots
    assistant.register(app, intake, bots)  # its middleware takes assistant-thread messages first
    events.register(app, intake, bots, deps.channels)
    agent_view.register(app, intake)  # before any Home tab listener: it takes tab "messages"
    actions.register(app, deps, intake)
    views.register(app, intake)
    commands.register(app, deps, intake)
    config.register(app, deps)
    home.register(app, deps)
    installs.register(app, deps)
