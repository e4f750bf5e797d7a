"""Slack's Agent messaging experience: the Stop button and the Messages tab.

- `agent_session_stopped`: someone clicked Stop on a thread's agent session (Slack shows
  it while the session is `processing`). The thread's run is cancelled — whether it is
  working or paused — when the person may cancel it (its asker or an approver,
  `agent.access.may_cancel`, as for `/grace cancel`); the thread then says who stopped
  it and the session is closed by the outbox (`bot.slack.delivery.sessions`). Anyone
  else is told, only them, that they may not; the run goes on.
- `app_home_opened` with `tab == "messages"` (what replaces `assistant_thread_started`):
  the person's DM with GRACE gets a greeting once and suggested prompts from the
  knowledge base (for the DM, without a thread: Slack's agent apps take no `thread_ts`).
  The Home tab (`tab == "home"`) is not handled here.

Like every listener, these only store the event in the durable inbox before the ack;
the work happens after it (`stop_session`, `DirectMessages.opened`, handed to the intake
by `bot.slack.compose`).
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from agent.access import may_cancel
from agent.schemas import ThreadKey
from bot.slack.assistant_prompts import PROMPTS_TITLE, welcome
from bot.slack.delivery.web_api import slack_error
from bot.slack.deps import BotDeps
from bot.slack.intake import Intake, Received
from bot.slack.items import InboxKind, InThread, MessagesOpened, SessionStopped, stored
from storage.inbox import InboxItem

log = logging.getLogger(__name__)

STOP_REFUSED = "Only the person who asked, or a GRACE approver, can stop this run; it carries on."
DM_GREETING = "dm_greeting"
PROMPTS_EVERY_S = 900.0
"""A DM's suggested prompts are set at most this often per process (Slack sends
`app_home_opened` each time the tab is opened)."""


def stopped_by(user: str) -> str:
    """The reason a stopped run shows in its thread ("🛑 Stopped: stopped by @ann")."""
    return f"stopped by <@{user}> (Stop button)"


async def stop_session(deps: BotDeps, received: Received[SessionStopped]) -> None:
    """Cancel the thread's run for someone who may; tell anyone else they may not."""
    item = received.item
    state = await deps.store.latest_run_in_thread(item.key)
    if state is None:
        log.info("Stop clicked in a thread without a run")
        return
    if state.status.is_final:
        return  # it ended meanwhile: its session is closed by the outbox
    if not may_cancel(state, item.user, approvers=deps.settings.approvers):
        await deps.publisher.ephemeral(
            item.channel, item.user, STOP_REFUSED, thread_ts=item.thread_ts
        )
        return
    await deps.orchestrator.cancel(state.run_id, user=item.user, reason=stopped_by(item.user))


def dm_owner(team: str, channel: str) -> str:
    """The message-ref owner of a DM's greeting (an id no run ever has)."""
    return "dm:" + hashlib.sha256(f"{team}:{channel}".encode()).hexdigest()[:16]


@dataclass
class DirectMessages:
    """What a person sees on opening their DM with GRACE (agent view)."""

    deps: BotDeps
    client: AsyncWebClient
    clock: Callable[[], float] = time.monotonic
    _prompted: dict[str, float] = field(default_factory=dict)

    async def opened(self, received: Received[MessagesOpened]) -> None:
        item = received.item
        now = self.clock()
        if self._prompted.get(item.channel, -PROMPTS_EVERY_S) + PROMPTS_EVERY_S > now:
            return  # greeted and prompted a moment ago
        self._prompted[item.channel] = now
        hello = await welcome(self.deps.orchestrator.knowledge_base, item.user)
        owner = dm_owner(item.team, item.channel)
        store = self.deps.store
        if await store.get_message_ref(run_id=owner, kind=DM_GREETING) is None:
            ts = await self.deps.publisher.post_text(item.channel, None, hello.greeting)
            if ts is not None:
                await store.set_message_ref(
                    run_id=owner, kind=DM_GREETING, channel_id=item.channel, ts=ts
                )
        if not hello.prompts:
            return
        try:  # the DM's prompts: no thread_ts (an agent app's call with one silently fails)
            await self.client.assistant_threads_setSuggestedPrompts(
                channel_id=item.channel, prompts=hello.prompts, title=PROMPTS_TITLE
            )
        except Exception as exc:  # prompts are a nicety: never worth failing for
            log.warning("assistant.threads.setSuggestedPrompts failed: %s", slack_error(exc))


def _text(event: dict[str, Any], name: str) -> str:
    value = event.get(name)
    return value if isinstance(value, str) else ""


def _enterprise(body: dict[str, Any]) -> str | None:
    """The Enterprise Grid org (an org-wide install's token is found by it)."""
    enterprise = body.get("enterprise_id")
    return str(enterprise) if enterprise else None


def stopped_row(body: dict[str, Any], event: dict[str, Any]) -> InboxItem | None:
    channel, thread_ts, user = (
        _text(event, "channel"),
        _text(event, "thread_ts"),
        _text(event, "user"),
    )
    if not (channel and thread_ts and user):
        log.warning("ignoring an agent_session_stopped event without channel, thread or user")
        return None
    team = str(body.get("team_id") or "T0")
    key = ThreadKey(
        team_id=team, channel_id=channel, thread_ts=thread_ts, enterprise_id=_enterprise(body)
    )
    streams = [str(ts) for ts in event.get("streaming_message_ts") or [] if ts]
    item = SessionStopped(**InThread.fields_of(key), user=user, streaming_message_ts=streams)
    event_id = str(body.get("event_id") or f"{InboxKind.SESSION_STOPPED}:{channel}:{thread_ts}")
    return stored(item, event_id=event_id)


def opened_row(body: dict[str, Any], event: dict[str, Any]) -> InboxItem | None:
    channel, user = _text(event, "channel"), _text(event, "user")
    if not (channel and user):
        log.warning("ignoring an app_home_opened event without channel or user")
        return None
    item = MessagesOpened(
        team=str(body.get("team_id") or "T0"),
        enterprise=_enterprise(body),
        channel=channel,
        user=user,
    )
    event_id = str(body.get("event_id") or f"{InboxKind.MESSAGES_OPENED}:{channel}:{user}")
    return stored(item, event_id=event_id)


async def _messages_tab(event: dict[str, Any]) -> bool:
    return event.get("tab") == "messages"


def register(app: AsyncApp, intake: Intake) -> None:
    @app.event("agent_session_stopped")
    async def on_session_stopped(body: dict[str, Any], event: dict[str, Any]) -> None:
        row = stopped_row(body, event)
        if row is not None:
            await intake.accept(row)

    # Only the Messages tab: a Home tab listener registered after this one gets the rest.
    @app.event("app_home_opened", matchers=[_messages_tab])
    async def on_messages_opened(body: dict[str, Any], event: dict[str, Any]) -> None:
        row = opened_row(body, event)
        if row is not None:
            await intake.accept(row)
