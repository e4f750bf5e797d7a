"""The assistant pane (Slack's Agents & AI Apps), through Bolt's `AsyncAssistant`.

- `assistant_thread_started`: a greeting and suggested prompts from the knowledge base.
- A person's message in an assistant thread: a question (or the answer to the thread's
  pause), handled by the same run machinery as a mention — the thread is titled with
  the question and its status line follows the run (see `bot.slack.delivery.assistant_status`).

Like every listener, these only store the event in the durable inbox before the ack;
the work happens after it, from the inbox (`greet` and `take_question`, handed to the
intake by `bot.slack.compose`).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Collection
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.middleware.assistant.async_assistant import AsyncAssistant

from agent.schemas import RunOrigin, ThreadKey
from bot.slack.assistant_prompts import PROMPTS_TITLE, welcome
from bot.slack.conversation import on_question, strip_mentions
from bot.slack.delivery.assistant_status import AssistantThreads
from bot.slack.deps import BotDeps
from bot.slack.intake import FollowUp, Intake, Received
from bot.slack.items import AssistantQuestion, InboxKind, InThread, ThreadStarted, stored
from bot.slack.listeners.events import message_row, thread_key
from bot.slack.senders import sender
from storage.inbox import InboxItem

log = logging.getLogger(__name__)

GREETING = "assistant_greeting"
READING = "is reading your question…"


def greeting_owner(key: ThreadKey) -> str:
    """The message-ref owner of a thread's greeting (an id no run ever has): one greeting
    per thread, whichever delivery of the event it came from."""
    thread = f"{key.team_id}:{key.channel_id}:{key.thread_ts}"
    return "greeting:" + hashlib.sha256(thread.encode()).hexdigest()[:16]


async def greet(
    deps: BotDeps, threads: AssistantThreads, received: Received[ThreadStarted]
) -> None:
    """A new assistant thread: say hello and offer prompts from the knowledge base.
    The greeting's ts is stored, so a replayed or repeated event does not greet twice."""
    key, user = received.item.key, received.item.user
    greeted = greeting_owner(key)
    hello = await welcome(deps.orchestrator.knowledge_base, user)
    if await deps.store.get_message_ref(run_id=greeted, kind=GREETING) is None:
        ts = await deps.publisher.post_text(key.channel_id, key.thread_ts, hello.greeting)
        if ts is not None:
            await deps.store.set_message_ref(
                run_id=greeted, kind=GREETING, channel_id=key.channel_id, ts=ts
            )
    if hello.prompts:
        await threads.set_prompts(key, hello.prompts, title=PROMPTS_TITLE)
    return None


async def take_question(
    deps: BotDeps, threads: AssistantThreads, received: Received[AssistantQuestion]
) -> FollowUp | None:
    """A message in an assistant thread. A new question titles the thread (when it is
    the first), marks its run as an assistant run and shows a status at once; then the
    usual question handling (start, follow up, or answer the thread's pause)."""
    item, run_id = received.item, received.run_id
    key = item.key
    if await deps.store.load(run_id) is not None:
        return None  # replayed after the run was registered
    existing = await deps.store.latest_run_in_thread(key)
    starts_run = existing is None or existing.status.is_final
    text = item.text
    if starts_run:
        question = strip_mentions(text)
        await threads.mark(run_id, key)
        if existing is None and question:
            await threads.set_title(key, question)
        await threads.show(run_id, key, READING)
    # the replay check is done above: on_question, not process_question (which repeats it)
    follow_up = await on_question(
        deps, key=key, user=item.user, text=text, run_id=run_id, origin=RunOrigin.ASSISTANT_PANE
    )
    if starts_run and await deps.store.load(run_id) is None:
        await threads.set_status(key, "")  # refused (told in the thread): nothing running
    return follow_up


def started_row(body: dict[str, Any], event: dict[str, Any]) -> InboxItem | None:
    thread = event.get("assistant_thread") or {}
    channel, ts = thread.get("channel_id"), thread.get("thread_ts")
    if not isinstance(channel, str) or not channel or not isinstance(ts, str) or not ts:
        log.warning("ignoring an assistant_thread_started event without its thread")
        return None
    team = str(body.get("team_id") or (thread.get("context") or {}).get("team_id") or "T0")
    enterprise = body.get("enterprise_id") or None
    key = ThreadKey(
        team_id=team,
        channel_id=channel,
        thread_ts=ts,
        enterprise_id=str(enterprise) if enterprise else None,
    )
    item = ThreadStarted(**InThread.fields_of(key), user=str(thread.get("user_id", "")))
    event_id = str(body.get("event_id") or f"{InboxKind.THREAD_STARTED}:{channel}:{ts}")
    return stored(item, event_id=event_id)


def register(app: AsyncApp, intake: Intake, allowed_bots: Collection[str] = ()) -> None:
    assistant = AsyncAssistant(logger=logging.getLogger("slack_bolt"))

    @assistant.thread_started
    async def on_thread_started(body: dict[str, Any], event: dict[str, Any]) -> None:
        row = started_row(body, event)
        if row is not None:
            await intake.accept(row)

    @assistant.user_message
    async def on_user_message(body: dict[str, Any], event: dict[str, Any]) -> None:
        user = sender(event, allowed_bots)
        key = thread_key(body, event)
        if key is None or user is None:
            return  # a bot (not allowed) or no one: never a run
        text = str(event.get("text", ""))
        item = AssistantQuestion(**InThread.fields_of(key), user=user, text=text)
        await intake.accept(message_row(item, body, event))

    app.assistant(assistant)
