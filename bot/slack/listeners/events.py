"""Events API listeners: mentions, thread replies and DMs.

Bolt runs these before it acks (`process_before_response`): each only checks the event
and stores it in the durable inbox (`bot.slack.intake`), which is quick (one batched insert)
and refuses Slack's retries and the same message under a second event id. The work —
taking the question in as a run, answering a pause — happens after the ack, from the
inbox, so a question that was acked is never lost, even if the process dies at once.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from typing import Any

from slack_bolt.async_app import AsyncApp

from agent.schemas import ThreadKey
from bot.service.channels import ChannelService
from bot.slack.channel_questions import is_question
from bot.slack.intake import Intake
from bot.slack.items import AssistantQuestion, InThread, Question, Reply, stored
from bot.slack.senders import sender
from storage.inbox import InboxItem

log = logging.getLogger(__name__)


def is_bot_message(event: dict[str, Any]) -> bool:
    return bool(event.get("bot_id")) or event.get("subtype") == "bot_message"


def thread_key(body: dict[str, Any], event: dict[str, Any]) -> ThreadKey | None:
    """The thread an event belongs to; None for an event without a channel or ts."""
    team = body.get("team_id") or event.get("team") or "T0"
    channel, ts = event.get("channel"), event.get("thread_ts") or event.get("ts")
    if not isinstance(channel, str) or not channel or not isinstance(ts, str) or not ts:
        log.warning("ignoring an event without channel or ts: %s", event.get("type"))
        return None
    enterprise = body.get("enterprise_id") or None
    return ThreadKey(
        team_id=str(team),
        channel_id=channel,
        thread_ts=ts,
        enterprise_id=str(enterprise) if enterprise else None,
    )


def message_row(
    item: Question | Reply | AssistantQuestion, body: dict[str, Any], event: dict[str, Any]
) -> InboxItem:
    """The inbox row for a message event's item: deduplicated on Slack's event id and on
    the message itself (team, channel, ts)."""
    ts = str(event.get("ts") or "")
    message_key = f"{item.team}:{item.channel}:{ts}" if ts else None
    event_id = str(body.get("event_id") or f"message:{message_key}")
    return stored(item, event_id=event_id, message_key=message_key)


def mention_row(
    body: dict[str, Any], event: dict[str, Any], allowed_bots: Collection[str]
) -> InboxItem | None:
    """The inbox row for an `app_mention` event: a question; None when it must not reach
    a run (a bot not allowed, no one, no thread). The listener's whole decision — also
    taken without Bolt by `grace serve`'s front (bot/slack/mentions.py)."""
    user = sender(event, allowed_bots)
    if user is None:
        return None  # a bot (not allowed) or no one: never a run
    key = thread_key(body, event)
    if key is None:
        return None
    text = str(event.get("text", ""))
    return message_row(Question(**InThread.fields_of(key), user=user, text=text), body, event)


async def asks_channel(
    channels: ChannelService | None, body: dict[str, Any], event: dict[str, Any], text: str
) -> bool:
    """A top-level message in a channel that answers every question (its answer mode is
    `all`), from a person, that is a question. Bots never (`sender` refused them)."""
    if channels is None or event.get("channel_type") not in ("channel", "group"):
        return False
    channel = event.get("channel")
    if not isinstance(channel, str) or not channel or not is_question(text):
        return False
    try:
        team = body.get("team_id") or event.get("team")  # whose settings (OAuth mode)
        effective = await channels.effective(channel, team_id=str(team) if team else None)
        return effective.answer_mode == "all"
    except Exception:  # the database: never fail the ack over a message nobody asked us
        log.warning("could not read a channel's settings; not answering its message")
        return False


def register(
    app: AsyncApp,
    intake: Intake,
    allowed_bots: Collection[str] = (),
    channels: ChannelService | None = None,
) -> None:
    @app.event("app_mention")
    async def handle_mention(body: dict[str, Any], event: dict[str, Any]) -> None:
        row = mention_row(body, event, allowed_bots)
        if row is not None:
            await intake.accept(row)

    @app.event("message")
    async def handle_message(
        body: dict[str, Any], event: dict[str, Any], context: dict[str, Any]
    ) -> None:
        if event.get("subtype") not in (None, "bot_message"):
            return  # edits, joins, …
        sent_by = sender(event, allowed_bots)
        if sent_by is None or sent_by == context.get("bot_user_id"):
            return  # bot messages (our own included), unless a setting allows the bot
        text = str(event.get("text", ""))
        bot_user = context.get("bot_user_id")
        if bot_user and f"<@{bot_user}>" in text and event.get("channel_type") != "im":
            return  # the app_mention event carries it
        is_dm = event.get("channel_type") == "im"
        in_thread = bool(event.get("thread_ts")) and event.get("thread_ts") != event.get("ts")
        if not (is_dm or in_thread):
            if is_bot_message(event) or not await asks_channel(channels, body, event, text):
                return  # an allowed bot may answer a pause or ask in a DM, never ask unasked
        key = thread_key(body, event)
        if key is None:
            return
        user, where = sent_by, InThread.fields_of(key)
        item: Question | Reply = (
            Reply(**where, user=user, text=text.strip())
            if in_thread
            else Question(**where, user=user, text=text)
        )
        await intake.accept(message_row(item, body, event))
