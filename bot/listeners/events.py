"""Events API listeners: mentions, thread replies and DMs.

Bolt acks events before listeners run; these only check and hand the event to a tracked
task, which drops Slack's retries (same `event_id`) and takes the question in at once —
stored as a run before it queues for one of the limited agent slots, so a question that
was acked is never lost, even if the process dies while it waits.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from functools import partial
from typing import Any

from slack_bolt.async_app import AsyncApp

from agent.schemas import ThreadKey
from bot.conversation import on_question, on_reply
from bot.deps import BotDeps

log = logging.getLogger(__name__)


def thread_key(body: dict[str, Any], event: dict[str, Any]) -> ThreadKey | None:
    """The thread an event belongs to; None for an event without a channel or ts."""
    team = body.get("team_id") or event.get("team") or "T0"
    channel, ts = event.get("channel"), event.get("thread_ts") or event.get("ts")
    if not isinstance(channel, str) or not channel or not isinstance(ts, str) or not ts:
        log.warning("ignoring an event without channel or ts: %s", event.get("type"))
        return None
    return ThreadKey(team_id=str(team), channel_id=channel, thread_ts=ts)


async def first_delivery(deps: BotDeps, body: dict[str, Any]) -> bool:
    """False for a Slack retry (or a duplicate) of an event we already took."""
    event_id = body.get("event_id")
    if not event_id:
        return True
    return await deps.store.mark_processed(str(event_id), "event")


async def once(
    deps: BotDeps, body: dict[str, Any], work: Callable[[], Coroutine[Any, Any, None]]
) -> None:
    """Do `work` unless this delivery is a duplicate. Runs after the ack: the dedupe insert
    is atomic, so it need not hold up Slack's 3-second clock."""
    if await first_delivery(deps, body):
        await work()


def register(app: AsyncApp, deps: BotDeps) -> None:
    @app.event("app_mention")
    async def handle_mention(body: dict[str, Any], event: dict[str, Any]) -> None:
        key = thread_key(body, event)
        if key is None:
            return
        user, text = str(event.get("user", "")), str(event.get("text", ""))
        deps.tasks.spawn(
            once(deps, body, partial(on_question, deps, key=key, user=user, text=text)),
            name=f"mention {key.thread_ts}",
            intake=True,
        )

    @app.event("message")
    async def handle_message(
        body: dict[str, Any], event: dict[str, Any], context: dict[str, Any]
    ) -> None:
        if event.get("subtype") or event.get("bot_id") or "user" not in event:
            return  # edits, joins, bot messages (our own included)
        text = str(event.get("text", ""))
        bot_user = context.get("bot_user_id")
        if bot_user and f"<@{bot_user}>" in text and event.get("channel_type") != "im":
            return  # the app_mention event carries it
        is_dm = event.get("channel_type") == "im"
        in_thread = bool(event.get("thread_ts")) and event.get("thread_ts") != event.get("ts")
        if not (is_dm or in_thread):
            return
        key = thread_key(body, event)
        if key is None:
            return
        user = str(event["user"])
        if in_thread:
            work = partial(on_reply, deps, key=key, user=user, text=text.strip())
            deps.tasks.spawn(once(deps, body, work), name=f"reply {key.thread_ts}")
            return
        work = partial(on_question, deps, key=key, user=user, text=text)
        deps.tasks.spawn(once(deps, body, work), name=f"dm {key.thread_ts}", intake=True)
