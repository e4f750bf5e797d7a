"""The state of a simulated Slack workspace, independent of any transport.

Channels, threads, messages (edited in place), ephemeral messages, reactions, modals and
users. Plain Python, no HTTP: the Web API (`webapi.py`), the Socket Mode relay and the
page all work on one `SlackWorkspace`, and learn about changes by subscribing to it.

The workspace can be saved to and loaded from JSON (`save` / `load`), and
`AutoSaver` writes it after every change (debounced), so `grace dev` keeps its channel
history across restarts.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import os
import time
import uuid
from collections import defaultdict
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, TypeVar

from slack_sdk.errors import SlackObjectFormationError
from slack_sdk.models.blocks import Block

from bot.simulator.streams import (
    DISPLAY_MODES,
    ChunkError,
    StreamState,
    apply_chunks,
    check_chunks,
    stream_blocks,
)

log = logging.getLogger(__name__)

DEFAULT_TEAM_ID = "T0FAKE0001"
DEFAULT_BOT_USER_ID = "U0GRACEBOT"
DEFAULT_BOT_ID = "B0GRACEBOT"
DEFAULT_APP_ID = "A0GRACEAPP"
DEFAULT_USER_ID = "U0ASKER001"
DEFAULT_CHANNEL_ID = "C0GENERAL1"
SLACKBOT_USER_ID = "USLACKBOT"

_T = TypeVar("_T")

MAX_BLOCKS = 50
MAX_TEXT = 40_000
FORMAT_VERSION = 1


class WorkspaceError(Exception):
    """A Slack API error code (`message_not_found`, `invalid_blocks`…) from the workspace."""

    def __init__(self, error: str, detail: str = "") -> None:
        super().__init__(f"{error}: {detail}" if detail else error)
        self.error = error
        self.detail = detail


# --------------------------------------------------------------------------- records


@dataclass
class StoredMessage:
    """A message as Slack keeps it: the current state after every edit."""

    channel: str
    ts: str
    text: str = ""
    blocks: list[dict[str, Any]] = field(default_factory=list)
    user: str = ""
    bot_id: str | None = None
    thread_ts: str | None = None
    reactions: dict[str, list[str]] = field(default_factory=dict)
    edits: int = 0
    metadata: dict[str, Any] | None = None
    streaming: bool = False
    """A `chat.startStream` reply not stopped yet: its content is still arriving."""
    stream: dict[str, Any] | None = None
    """What a streamed reply received (`streams.StreamState.to_dict()`); None otherwise."""

    @property
    def is_reply(self) -> bool:
        """True for a reply inside a thread (not the thread's parent)."""
        return self.thread_ts is not None and self.thread_ts != self.ts

    def to_api(self) -> dict[str, Any]:
        """The message as the Web API returns it."""
        data: dict[str, Any] = {
            "type": "message",
            "ts": self.ts,
            "user": self.user,
            "text": self.text,
            "team": None,
        }
        if self.blocks:
            data["blocks"] = self.blocks
        if self.bot_id:
            data["bot_id"] = self.bot_id
        if self.thread_ts:
            data["thread_ts"] = self.thread_ts
        if self.edits:
            data["edited"] = {"user": self.user, "ts": self.ts}
        if self.reactions:
            data["reactions"] = [
                {"name": name, "users": users, "count": len(users)}
                for name, users in self.reactions.items()
            ]
        if self.metadata:
            data["metadata"] = self.metadata
        return data


@dataclass
class EphemeralMessage:
    """A message only `user` sees; Slack keeps no history of these, the fake does.

    `sender` is who shows as its author: None for the app's bot, `USLACKBOT` for the
    errors Slack itself reports (a slash command nobody answered, say).
    """

    channel: str
    user: str
    ts: str
    text: str = ""
    blocks: list[dict[str, Any]] = field(default_factory=list)
    thread_ts: str | None = None
    sender: str | None = None


@dataclass
class StoredView:
    """A modal opened with `views.open`, as last updated."""

    id: str
    view: dict[str, Any]
    trigger_id: str
    hash: str
    user: str | None = None
    external_id: str | None = None
    closed: bool = False

    def to_api(self, team_id: str, app_id: str, bot_id: str) -> dict[str, Any]:
        """The view as the Web API (and a `view_submission` payload) carries it."""
        return {
            **self.view,
            "id": self.id,
            "team_id": team_id,
            "app_id": app_id,
            "bot_id": bot_id,
            "hash": self.hash,
            "state": {"values": {}},
            "root_view_id": self.id,
            "previous_view_id": None,
            "external_id": self.external_id or "",
        }


@dataclass(frozen=True)
class WorkspaceEvent:
    """Something changed in the workspace: what a simulator UI or Socket Mode relays."""

    kind: str  # message_posted | message_updated | ephemeral_posted | reaction_added | view_*
    channel: str | None
    ts: str | None
    data: dict[str, Any]


class Subscribers:
    """Who is told of each `WorkspaceEvent` (a simulator UI, Socket Mode). An observer's
    bug is logged, never raised: it must not fail the API call that changed state."""

    def __init__(self, logger: logging.Logger, what: str) -> None:
        self._callbacks: list[Callable[[WorkspaceEvent], None]] = []
        self._log = logger
        self._what = what

    def subscribe(self, callback: Callable[[WorkspaceEvent], None]) -> Callable[[], None]:
        """Call `callback` on every event; returns a function that unsubscribes."""
        self._callbacks.append(callback)

        def unsubscribe() -> None:
            with contextlib.suppress(ValueError):
                self._callbacks.remove(callback)

        return unsubscribe

    def emit(self, event: WorkspaceEvent) -> None:
        for callback in list(self._callbacks):
            try:
                callback(event)
            except Exception:
                self._log.exception("%s subscriber failed on %s", self._what, event.kind)


def check_blocks(blocks: list[Any]) -> None:
    """Reject blocks the way Slack does (`invalid_blocks`), using slack_sdk's validation."""
    if not isinstance(blocks, list):
        raise WorkspaceError("invalid_blocks_format", "blocks must be a JSON array")
    if len(blocks) > MAX_BLOCKS:
        raise WorkspaceError("invalid_blocks", f"{len(blocks)} blocks > {MAX_BLOCKS}")
    action_ids: set[str] = set()
    for index, raw in enumerate(blocks):
        if not isinstance(raw, dict) or "type" not in raw:
            raise WorkspaceError("invalid_blocks", f"block {index} has no type")
        try:
            parsed = Block.parse(raw)
            if parsed is not None:
                parsed.to_dict()
        except (SlackObjectFormationError, TypeError, KeyError, AttributeError) as exc:
            raise WorkspaceError("invalid_blocks", f"block {index}: {exc}") from exc
        elements = raw.get("elements", []) if raw.get("type") == "actions" else []
        for element in elements:
            action_id = element.get("action_id") if isinstance(element, dict) else None
            if action_id is not None and action_id in action_ids:
                raise WorkspaceError("invalid_blocks", f"duplicate action_id {action_id}")
            if action_id is not None:
                action_ids.add(action_id)


def _from_dict(cls: type[_T], data: dict[str, Any]) -> _T:
    """A dataclass from saved JSON, ignoring keys a newer or older version wrote."""
    names = {f.name for f in fields(cls)}  # type: ignore[arg-type]
    return cls(**{k: v for k, v in data.items() if k in names})


# --------------------------------------------------------------------------- the workspace


class SlackWorkspace:
    """The state of one fake Slack workspace, independent of any transport.

    `clock` (e.g. `time.time`) makes message timestamps real epoch times, as Slack's
    are; without it they count up from `1700000000.000100`, which keeps tests stable.
    """

    def __init__(
        self,
        *,
        team_id: str = DEFAULT_TEAM_ID,
        team_name: str = "Fake Workspace",
        bot_user_id: str = DEFAULT_BOT_USER_ID,
        bot_id: str = DEFAULT_BOT_ID,
        app_id: str = DEFAULT_APP_ID,
        bot_name: str = "grace",
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.team_id = team_id
        self.team_name = team_name
        self.bot_user_id = bot_user_id
        self.bot_id = bot_id
        self.app_id = app_id
        self.bot_name = bot_name
        self.users: dict[str, dict[str, Any]] = {}
        self.channels: dict[str, dict[str, Any]] = {}
        self.members: dict[str, list[str]] = {}
        """channel → its members, when a test set them (`set_members`)."""
        self.usergroups: dict[str, list[str]] = {}
        """user group → its members (`set_usergroup`)."""
        self.add_user(bot_user_id, name=bot_name, is_bot=True)
        self._clock = clock
        self._ts_counter = itertools.count(1)
        self._last_micros = 0
        self._view_counter = itertools.count(1)
        self._messages: dict[str, dict[str, StoredMessage]] = defaultdict(dict)
        self._ephemeral: list[EphemeralMessage] = []
        self._views: dict[str, StoredView] = {}
        self._used_triggers: set[str] = set()
        self._triggers: dict[str, str] = {}
        self._subscribers = Subscribers(log, "workspace")
        self.refuse_streaming: str | None = None
        """An error code (`feature_not_enabled`…) for every `chat.startStream`: a
        workspace without streaming, to exercise the bot's fallback."""

    # ------------------------------------------------------------------ plumbing

    def next_ts(self) -> str:
        """A unique, increasing message ts: `1700000000.000100`, `1700000000.000200`…"""
        if self._clock is not None:
            micros = max(int(self._clock() * 1_000_000), self._last_micros + 1)
        else:
            n = next(self._ts_counter)
            micros = (1_700_000_000 + n // 10_000) * 1_000_000 + (n % 10_000) * 100
            micros = max(micros, self._last_micros + 1)
        self._last_micros = micros
        return f"{micros // 1_000_000}.{micros % 1_000_000:06d}"

    @property
    def latest_ts(self) -> str:
        """The last ts handed out: anything newer was posted after this moment."""
        micros = self._last_micros
        return f"{micros // 1_000_000}.{micros % 1_000_000:06d}"

    def _seen_ts(self, ts: str) -> None:
        """Keep `next_ts` above a timestamp loaded from disk."""
        try:
            seconds, _, fraction = ts.partition(".")
            micros = int(seconds) * 1_000_000 + int(fraction.ljust(6, "0")[:6])
        except ValueError:
            return
        self._last_micros = max(self._last_micros, micros)

    def subscribe(self, callback: Callable[[WorkspaceEvent], None]) -> Callable[[], None]:
        """Call `callback` on every change; returns a function that unsubscribes."""
        return self._subscribers.subscribe(callback)

    def _emit(self, kind: str, channel: str | None, ts: str | None, **data: Any) -> None:
        self._subscribers.emit(WorkspaceEvent(kind=kind, channel=channel, ts=ts, data=data))

    def add_user(
        self,
        user_id: str,
        *,
        name: str | None = None,
        is_bot: bool = False,
        tz: str = "UTC",
        is_admin: bool = False,
        team_id: str | None = None,
    ) -> dict[str, Any]:
        """Register a user that `users.info` will describe (`is_admin`: a workspace admin;
        `team_id`: another workspace's person, when one simulator holds several)."""
        name = name or f"user-{user_id.lower()}"
        user = {
            "id": user_id,
            "team_id": team_id or self.team_id,
            "name": name,
            "real_name": name.title(),
            "is_bot": is_bot,
            "is_admin": is_admin,
            "is_owner": False,
            "deleted": False,
            "tz": tz,
            "profile": {"display_name": name, "real_name": name.title()},
        }
        self.users[user_id] = user
        return user

    def add_channel(
        self,
        channel_id: str,
        name: str,
        *,
        is_im: bool = False,
        user: str | None = None,
        team_id: str | None = None,
    ) -> dict[str, Any]:
        """Register a channel (or, with `is_im`, the DM between `user` and the bot);
        `team_id`: a channel of another workspace, when one simulator holds several."""
        channel: dict[str, Any] = {
            "id": channel_id,
            "name": name,
            "is_channel": channel_id.startswith("C"),
            "is_private": channel_id.startswith("G"),
            "is_im": is_im,
            "user": user,
            "created": int(time.time()),
        }
        if team_id is not None:
            channel["context_team_id"] = team_id
        self.channels[channel_id] = channel
        return channel

    def team_of_user(self, user_id: str) -> str:
        """The workspace a person belongs to: the team of what they open or submit."""
        return str((self.users.get(user_id) or {}).get("team_id") or self.team_id)

    def team_of(self, channel_id: str | None) -> str:
        """The workspace a channel belongs to (the simulator's own unless it was added
        with another `team_id`): the team its events and clicks come from."""
        info = self.channels.get(channel_id or "") or {}
        return str(info.get("context_team_id") or self.team_id)

    def channel_type(self, channel_id: str) -> str:
        """`channel`, `group` or `im`, as `message` events say (from the id's prefix)."""
        info = self.channels.get(channel_id)
        if (info and info.get("is_im")) or channel_id.startswith("D"):
            return "im"
        return "group" if channel_id.startswith("G") else "channel"

    def channel_info(self, channel_id: str) -> dict[str, Any]:
        """A registered channel, or a synthesised one for any plausible channel id."""
        if channel_id in self.channels:
            return self.channels[channel_id]
        if channel_id[:1] in {"C", "G", "D"} and channel_id.isalnum():
            return self.add_channel(channel_id, channel_id.lower(), is_im=channel_id[0] == "D")
        raise WorkspaceError("channel_not_found")

    def set_members(self, channel_id: str, users: list[str]) -> None:
        """Who is in a channel (the bot always is), as `conversations.members` answers."""
        self.channel_info(channel_id)
        self.members[channel_id] = [*dict.fromkeys([*users, self.bot_user_id])]

    def set_usergroup(self, group_id: str, users: list[str]) -> None:
        """A user group (`S…`) and its members, as `usergroups.users.list` answers."""
        self.usergroups[group_id] = list(dict.fromkeys(users))

    def usergroup_members(self, group_id: str) -> list[str]:
        if group_id not in self.usergroups:
            raise WorkspaceError("no_such_subteam")
        return list(self.usergroups[group_id])

    def channel_members(self, channel_id: str) -> list[str]:
        """A channel's members: as set, else a DM's person and the bot, else every user the
        workspace knows and everyone who wrote in the channel."""
        info = self.channel_info(channel_id)
        if channel_id in self.members:
            return list(self.members[channel_id])
        if info.get("is_im") and info.get("user"):
            return [str(info["user"]), self.bot_user_id]
        authors = [m.user for m in self.all_messages(channel_id) if m.user]
        return [*dict.fromkeys([*self.users, *authors])]

    # ------------------------------------------------------------------ messages

    def post_message(
        self,
        channel: str,
        *,
        text: str = "",
        blocks: list[dict[str, Any]] | None = None,
        thread_ts: str | None = None,
        user: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> StoredMessage:
        """Post as the bot (default) or as `user`; validates like Slack does."""
        if not channel:
            raise WorkspaceError("channel_not_found")
        if not text and not blocks:
            raise WorkspaceError("no_text")
        if len(text) > MAX_TEXT:
            raise WorkspaceError("msg_too_long", f"{len(text)} chars > {MAX_TEXT}")
        check_blocks(blocks or [])
        author = user or self.bot_user_id
        message = StoredMessage(
            channel=channel,
            ts=self.next_ts(),
            text=text,
            blocks=list(blocks or []),
            user=author,
            bot_id=self.bot_id if author == self.bot_user_id else None,
            thread_ts=thread_ts or None,
            metadata=metadata,
        )
        self._messages[channel][message.ts] = message
        self._emit("message_posted", channel, message.ts, message=message)
        return message

    # ------------------------------------------------------------------ streams

    def start_stream(
        self,
        channel: str,
        *,
        thread_ts: str | None,
        recipient_user_id: str | None = None,
        recipient_team_id: str | None = None,
        task_display_mode: str | None = None,
        chunks: Any = None,
        markdown_text: str = "",
    ) -> StoredMessage:
        """Open a streamed reply in a thread (`chat.startStream`), as the bot."""
        if self.refuse_streaming:
            raise WorkspaceError(self.refuse_streaming)
        if not channel:
            raise WorkspaceError("channel_not_found")
        if not thread_ts:
            raise WorkspaceError("invalid_arguments", "thread_ts is required")
        mode = task_display_mode or "timeline"
        if mode not in DISPLAY_MODES:
            raise WorkspaceError("invalid_arguments", f"task_display_mode {mode!r}")
        if self.channel_type(channel) != "im" and not (recipient_user_id and recipient_team_id):
            raise WorkspaceError(
                "invalid_arguments", "recipient_user_id and recipient_team_id are required"
            )
        stream = StreamState(mode=mode, recipient=recipient_user_id or "")
        self._apply(stream, chunks, markdown_text)
        message = StoredMessage(
            channel=channel,
            ts=self.next_ts(),
            text=stream.markdown,
            blocks=stream_blocks(stream),
            user=self.bot_user_id,
            bot_id=self.bot_id,
            thread_ts=thread_ts,
            streaming=True,
            stream=stream.to_dict(),
        )
        self._messages[channel][message.ts] = message
        self._emit("message_posted", channel, message.ts, message=message)
        return message

    def append_stream(
        self, channel: str, ts: str, *, chunks: Any = None, markdown_text: str = ""
    ) -> StoredMessage:
        """Add chunks to an open stream (`chat.appendStream`)."""
        message, stream = self._open_stream(channel, ts)
        self._apply(stream, chunks, markdown_text)
        self._show(message, stream)
        self._emit("message_updated", channel, ts, message=message)
        return message

    def stop_stream(
        self,
        channel: str,
        ts: str,
        *,
        chunks: Any = None,
        markdown_text: str = "",
        blocks: list[dict[str, Any]] | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> StoredMessage:
        """End a stream (`chat.stopStream`), with its last chunks and final blocks."""
        message, stream = self._open_stream(channel, ts)
        check_blocks(blocks or [])
        self._apply(stream, chunks, markdown_text)
        message.streaming = False
        self._show(message, stream, blocks or [])
        if metadata:
            message.metadata = metadata
        self._emit("message_updated", channel, ts, message=message)
        return message

    def _stored(self, channel: str, ts: str) -> StoredMessage:
        """The message a Web API call names, or its `message_not_found` error."""
        message = self._messages.get(channel, {}).get(ts)
        if message is None:
            raise WorkspaceError("message_not_found", f"{channel}/{ts}")
        return message

    def _open_stream(self, channel: str, ts: str) -> tuple[StoredMessage, StreamState]:
        message = self._stored(channel, ts)
        if not message.streaming or message.stream is None:
            raise WorkspaceError("message_not_in_streaming_state")
        return message, StreamState.from_dict(message.stream)

    @staticmethod
    def _apply(stream: StreamState, chunks: Any, markdown_text: str) -> None:
        try:
            apply_chunks(stream, check_chunks(chunks), markdown_text or "")
        except ChunkError as exc:
            raise WorkspaceError("invalid_chunks", str(exc)) from exc

    @staticmethod
    def _show(
        message: StoredMessage, stream: StreamState, final: list[dict[str, Any]] | None = None
    ) -> None:
        blocks = stream_blocks(stream) + list(final or [])
        if len(blocks) > MAX_BLOCKS:
            raise WorkspaceError("invalid_blocks", f"{len(blocks)} blocks > {MAX_BLOCKS}")
        message.stream = stream.to_dict()
        message.text = stream.markdown
        message.blocks = blocks  # a stream growing is not an edit: `edits` stays

    def post_user_message(
        self, channel: str, user: str, text: str, *, thread_ts: str | None = None
    ) -> StoredMessage:
        """A human posts (the message an `app_mention` or `message` event is about)."""
        if user not in self.users:
            self.add_user(user)
        return self.post_message(channel, text=text, user=user, thread_ts=thread_ts)

    def update_message(
        self,
        channel: str,
        ts: str,
        *,
        text: str | None = None,
        blocks: list[dict[str, Any]] | None = None,
        user: str | None = None,
    ) -> StoredMessage:
        """Edit a message in place; only its author (the bot by default) may."""
        message = self._stored(channel, ts)
        if message.user != (user or self.bot_user_id):
            raise WorkspaceError("cant_update_message")
        if text is not None and len(text) > MAX_TEXT:
            raise WorkspaceError("msg_too_long")
        if blocks is not None:
            check_blocks(blocks)
            message.blocks = list(blocks)
        if text is not None:
            message.text = text
        message.edits += 1
        self._emit("message_updated", channel, ts, message=message)
        return message

    def post_ephemeral(
        self,
        channel: str,
        user: str,
        *,
        text: str = "",
        blocks: list[dict[str, Any]] | None = None,
        thread_ts: str | None = None,
        sender: str | None = None,
    ) -> EphemeralMessage:
        """A message only `user` sees."""
        if not user:
            raise WorkspaceError("user_not_in_channel")
        if not text and not blocks:
            raise WorkspaceError("no_text")
        check_blocks(blocks or [])
        message = EphemeralMessage(
            channel=channel,
            user=user,
            ts=self.next_ts(),
            text=text,
            blocks=list(blocks or []),
            thread_ts=thread_ts,
            sender=sender,
        )
        self._ephemeral.append(message)
        self._emit("ephemeral_posted", channel, message.ts, message=message)
        return message

    def delete_message(self, channel: str, ts: str) -> StoredMessage:
        """Remove a message (a `response_url` `delete_original`, say)."""
        message = self._messages.get(channel, {}).pop(ts, None)
        if message is None:
            raise WorkspaceError("message_not_found", f"{channel}/{ts}")
        self._emit("message_deleted", channel, ts, message=message)
        return message

    def update_ephemeral(
        self, ts: str, *, text: str | None = None, blocks: list[dict[str, Any]] | None = None
    ) -> EphemeralMessage:
        """Replace an ephemeral message's content (`replace_original` on one)."""
        try:
            message = self.ephemeral(ts)
        except KeyError:
            raise WorkspaceError("message_not_found", ts) from None
        if blocks is not None:
            check_blocks(blocks)
            message.blocks = list(blocks)
        if text is not None:
            message.text = text
        self._emit("ephemeral_updated", message.channel, ts, message=message)
        return message

    def add_reaction(self, channel: str, ts: str, name: str, user: str | None = None) -> None:
        """Add an emoji reaction (by the bot unless `user`); twice is `already_reacted`."""
        message = self._messages.get(channel, {}).get(ts)
        if message is None:
            raise WorkspaceError("message_not_found")
        users = message.reactions.setdefault(name, [])
        who = user or self.bot_user_id
        if who in users:
            raise WorkspaceError("already_reacted")
        users.append(who)
        self._emit("reaction_added", channel, ts, name=name, user=who, message=message)

    def has_message(self, channel: str, ts: str) -> bool:
        """Whether `ts` is a message of `channel` (replies included)."""
        return ts in self._messages.get(channel, {})

    def message(self, channel: str, ts: str) -> StoredMessage:
        """The current state of one message; `KeyError` if there is none."""
        try:
            return self._messages[channel][ts]
        except KeyError:
            raise KeyError(f"no message {ts} in {channel}") from None

    def messages(self, channel: str) -> list[StoredMessage]:
        """Top-level messages of a channel (not thread replies), oldest first."""
        stored = self._messages.get(channel, {}).values()
        return sorted((m for m in stored if not m.is_reply), key=lambda m: m.ts)

    def all_messages(self, channel: str | None = None) -> list[StoredMessage]:
        """Every message (replies included), of one channel or all, oldest first."""
        channels = [channel] if channel is not None else list(self._messages)
        found = [m for c in channels for m in self._messages.get(c, {}).values()]
        return sorted(found, key=lambda m: m.ts)

    def thread(self, channel: str, ts: str) -> list[StoredMessage]:
        """The parent (when stored) and its replies, oldest first."""
        stored = self._messages.get(channel, {}).values()
        return sorted((m for m in stored if m.ts == ts or m.thread_ts == ts), key=lambda m: m.ts)

    def ephemerals(
        self, *, channel: str | None = None, user: str | None = None
    ) -> list[EphemeralMessage]:
        """Ephemeral messages posted so far, optionally for one channel and/or user."""
        return [
            e
            for e in self._ephemeral
            if (channel is None or e.channel == channel) and (user is None or e.user == user)
        ]

    def ephemeral(self, ts: str) -> EphemeralMessage:
        """One ephemeral message by its ts; `KeyError` if there is none."""
        for message in self._ephemeral:
            if message.ts == ts:
                return message
        raise KeyError(f"no ephemeral message {ts}")

    def permalink(self, channel: str, ts: str) -> str:
        """A message's permalink (thread replies carry `thread_ts` and `cid`)."""
        message = self._messages.get(channel, {}).get(ts)
        if message is None:
            raise WorkspaceError("message_not_found")
        link = f"https://fake-slack.local/archives/{channel}/p{ts.replace('.', '')}"
        if message.is_reply:
            link += f"?thread_ts={message.thread_ts}&cid={channel}"
        return link

    # ------------------------------------------------------------------ views

    def issue_trigger(self, user: str) -> str:
        """A fresh trigger id for an interaction by `user`; `views.open` learns who from it."""
        trigger_id = f"{uuid.uuid4().int % 10**12}.{uuid.uuid4().hex[:12]}"
        self._triggers[trigger_id] = user
        return trigger_id

    def open_view(
        self, trigger_id: str, view: dict[str, Any], user: str | None = None
    ) -> StoredView:
        """Open a modal; a trigger id works once, like Slack's."""
        if not trigger_id:
            raise WorkspaceError("invalid_arguments", "trigger_id is required")
        if trigger_id in self._used_triggers:
            raise WorkspaceError("exchanged_trigger_id")
        self._check_view(view)
        self._used_triggers.add(trigger_id)
        stored = StoredView(
            id=f"V{next(self._view_counter):08d}",
            view=dict(view),
            trigger_id=trigger_id,
            hash=uuid.uuid4().hex[:16],
            user=user or self._triggers.get(trigger_id),
            external_id=view.get("external_id"),
        )
        self._views[stored.id] = stored
        self._emit("view_opened", None, None, view=stored)
        return stored

    def update_view(
        self,
        view: dict[str, Any],
        *,
        view_id: str | None = None,
        external_id: str | None = None,
        hash: str | None = None,
    ) -> StoredView:
        """Replace an open view's content (`hash` guards against a stale update)."""
        stored = self._views.get(view_id or "")
        if stored is None and external_id:
            stored = next((v for v in self._views.values() if v.external_id == external_id), None)
        if stored is None:
            raise WorkspaceError("not_found")
        if hash is not None and hash != stored.hash:
            raise WorkspaceError("hash_conflict")
        self._check_view(view)
        stored.view = dict(view)
        stored.hash = uuid.uuid4().hex[:16]
        self._emit("view_updated", None, None, view=stored)
        return stored

    def close_view(self, view_id: str) -> StoredView:
        """The user closed or submitted the modal: it disappears from their screen."""
        stored = self._views.get(view_id)
        if stored is None:
            raise WorkspaceError("not_found")
        stored.closed = True
        self._emit("view_closed", None, None, view=stored)
        return stored

    def view(self, view_id: str) -> StoredView:
        """One view by id; `KeyError` if there is none."""
        try:
            return self._views[view_id]
        except KeyError:
            raise KeyError(f"no view {view_id}") from None

    def views(self) -> list[StoredView]:
        """Every view opened so far (closed ones included), oldest first."""
        return list(self._views.values())

    @staticmethod
    def _check_view(view: Any) -> None:
        if not isinstance(view, dict) or view.get("type") not in {"modal", "home"}:
            raise WorkspaceError("invalid_arguments", "view.type must be modal or home")
        blocks = view.get("blocks", [])
        if not isinstance(blocks, list) or len(blocks) > 100:
            raise WorkspaceError("invalid_arguments", "a view holds at most 100 blocks")
        for raw in (b for b in blocks if isinstance(b, dict)):
            try:
                parsed = Block.parse(raw)
                if parsed is not None:
                    parsed.to_dict()
            except (SlackObjectFormationError, TypeError, KeyError, AttributeError) as exc:
                raise WorkspaceError("invalid_arguments", str(exc)) from exc

    def user_info(self, user_id: str) -> dict[str, Any]:
        """A stored user, or a synthesised one for any plausible user id."""
        if user_id in self.users:
            return self.users[user_id]
        if user_id[:1] in {"U", "W"} and user_id.isalnum():
            return self.add_user(user_id)
        raise WorkspaceError("user_not_found")

    # ------------------------------------------------------------------ persistence

    def reset(self) -> None:
        """Forget every message, ephemeral and view (users and channels stay)."""
        self._messages.clear()
        self._ephemeral.clear()
        self._views.clear()
        self._emit("reset", None, None)

    def to_dict(self) -> dict[str, Any]:
        """Everything worth keeping across a restart, as JSON-ready data.

        Open modals, ephemeral messages and trigger ids are left out: like Slack's, they
        do not outlive the client session that showed them.
        """
        return {
            "version": FORMAT_VERSION,
            "team": {"id": self.team_id, "name": self.team_name},
            "bot": {
                "user_id": self.bot_user_id,
                "bot_id": self.bot_id,
                "app_id": self.app_id,
                "name": self.bot_name,
            },
            "users": list(self.users.values()),
            "channels": list(self.channels.values()),
            "messages": [asdict(m) for m in self.all_messages()],
            "latest_ts": self.latest_ts,
        }

    def load_dict(self, data: dict[str, Any]) -> None:
        """Replace this workspace's users, channels and history with saved data."""
        if data.get("version") != FORMAT_VERSION:
            raise ValueError(f"unsupported workspace file version {data.get('version')!r}")
        for user in data.get("users", []):
            self.users[str(user["id"])] = user
        for channel in data.get("channels", []):
            self.channels[str(channel["id"])] = channel
        self._messages.clear()
        for raw in data.get("messages", []):
            message = _from_dict(StoredMessage, raw)
            self._messages[message.channel][message.ts] = message
            self._seen_ts(message.ts)
        self._seen_ts(str(data.get("latest_ts", "")))  # no ts is handed out twice
        self._ephemeral = []  # Slack drops ephemeral messages on a restart or reload
        for raw in data.get("ephemerals", []):  # written by older versions: only their ts
            self._seen_ts(str(raw.get("ts", "")))

    def save(self, path: Path) -> None:
        """Write the workspace atomically (a crash mid-write leaves the old file intact)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(self.to_dict(), ensure_ascii=False), encoding="utf-8")
        os.replace(tmp, path)

    def load(self, path: Path) -> bool:
        """Load a saved workspace if `path` exists; returns whether it did."""
        if not path.exists():
            return False
        self.load_dict(json.loads(path.read_text(encoding="utf-8")))
        return True


class AutoSaver:
    """Saves a workspace to `path` shortly after every change (debounced), and on close."""

    def __init__(self, workspace: SlackWorkspace, path: Path, *, delay: float = 0.2) -> None:
        self.workspace = workspace
        self.path = path
        self.delay = delay
        self.saves = 0
        self._handle: asyncio.TimerHandle | None = None
        self._unsubscribe = workspace.subscribe(self._changed)

    def _changed(self, event: WorkspaceEvent) -> None:
        if event.kind.startswith("view_"):
            return  # views are not persisted
        if self._handle is None:
            loop = asyncio.get_running_loop()
            self._handle = loop.call_later(self.delay, self.flush)

    def flush(self) -> None:
        """Write now (and cancel the pending debounced write)."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        try:
            self.workspace.save(self.path)
            self.saves += 1
        except OSError:
            log.exception("could not save the simulator workspace to %s", self.path)

    def close(self) -> None:
        """Stop watching and write the final state."""
        self._unsubscribe()
        self.flush()
