"""Listener registration: each module wires its ids to plain handler functions."""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp

from bot.slack.deps import BotDeps
from bot.slack.listeners import actions, assistant, commands, events, views


def register_listeners(app: AsyncApp, deps: BotDeps) -> None:
    assistant.register(app, deps)  # its middleware takes assistant-thread messages first
    events.register(app, deps)
    actions.register(app, deps)
    views.register(app, deps)
    commands.register(app, deps)
