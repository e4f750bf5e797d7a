"""Slack's side of an app's traffic: what happens in the workspace becomes envelopes.

- Every message posted or edited becomes a `message` event (and a user's `<@bot>`
  mention outside a DM also an `app_mention`), as Slack sends them to an app subscribed
  to `app_mention` and `message.*` — the bot's own messages included, as in Slack.
- What people do in the client — click a button, submit or close a modal, run a slash
  command — becomes an `interactive` or `slash_commands` envelope; the ack's payload
  is applied as Slack applies it: a slash command's text/blocks show as an ephemeral
  message (or in the channel with `response_type: in_channel`), a modal's
  `response_action: errors` keeps it open with the errors, `update` replaces it.
- `response_url`s point at `/hooks/{token}` on the simulator, so Bolt's `respond()`
  works too. An interaction the app never acks is reported to the user by Slackbot.
"""

from __future__ import annotations

import logging
import re
import uuid
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from bot.simulator.requests import (
    block_actions_payload,
    event_envelope,
    slash_command_form,
    view_submission_payload,
)
from bot.simulator.socket_mode import (
    EVENTS_API,
    INTERACTIVE,
    SLASH_COMMANDS,
    Delivery,
    SocketModeServer,
)
from bot.simulator.workspace import (
    SLACKBOT_USER_ID,
    EphemeralMessage,
    SlackWorkspace,
    StoredMessage,
    WorkspaceError,
    WorkspaceEvent,
)

log = logging.getLogger(__name__)

KNOWN_COMMANDS = frozenset({"/grace"})
MAX_HOOKS = 1000
_AT_NAME = re.compile(r"(?<![\w<@])@([A-Za-z][\w.-]*)")
_HASH_CHANNEL = re.compile(r"(?<![\w<#&])#([a-z0-9][\w-]*)")


@dataclass
class HookContext:
    """Where a `response_url` answer goes."""

    channel: str
    user: str
    message_ts: str | None = None
    thread_ts: str | None = None
    ephemeral: bool = False


@dataclass
class InteractionResult:
    """What a click, a slash command or a modal submission led to, for the page."""

    ok: bool
    delivery: Delivery | None = None
    error: str | None = None
    errors: dict[str, str] = field(default_factory=dict)
    """A modal's field errors (`response_action: errors`), by block id."""
    view_closed: bool = False
    posted: list[str] = field(default_factory=list)
    """ts of the messages (ephemeral or not) the ack's payload produced."""

    def to_json(self) -> dict[str, Any]:
        """The page's view of it."""
        data: dict[str, Any] = {
            "ok": self.ok,
            "error": self.error,
            "errors": self.errors,
            "view_closed": self.view_closed,
            "posted": self.posted,
        }
        if self.delivery is not None:
            data["acked"] = self.delivery.acked
            data["attempts"] = self.delivery.attempts
            data["ack_payload"] = self.delivery.ack_payload
        return data


def _feedback_choices(element: dict[str, Any]) -> list[dict[str, Any]]:
    """A `feedback_buttons` element as the two clicks it offers (👍 then 👎)."""
    choices = []
    for key in ("positive_button", "negative_button"):
        button = element.get(key)
        if isinstance(button, dict):
            choices.append(
                {
                    "type": "feedback_buttons",
                    "action_id": element.get("action_id"),
                    "value": button.get("value", ""),
                    "text": button.get("text") or {},
                }
            )
    return choices


def find_button(
    blocks: list[dict[str, Any]], action_id: str, value: str | None = None
) -> tuple[str, dict[str, Any]] | None:
    """(block_id, element) of the button `action_id` (and `value`, when given) in blocks.

    A `feedback_buttons` element (in `context_actions`) counts as two buttons sharing one
    action id, told apart by their values.
    """
    for block in blocks:
        candidates: list[Any] = []
        if block.get("type") == "actions":
            candidates = list(block.get("elements", []))
        elif block.get("type") == "context_actions":
            for element in block.get("elements", []):
                if isinstance(element, dict) and element.get("type") == "feedback_buttons":
                    candidates.extend(_feedback_choices(element))
                else:
                    candidates.append(element)
        elif isinstance(block.get("accessory"), dict):
            candidates = [block["accessory"]]
        for element in candidates:
            if not isinstance(element, dict) or element.get("action_id") != action_id:
                continue
            if value is not None and element.get("value") != value:
                continue
            return str(block.get("block_id", "")), element
    return None


class Relay:
    """Turns workspace changes and people's actions into Socket Mode envelopes."""

    def __init__(
        self,
        workspace: SlackWorkspace,
        socket: SocketModeServer,
        *,
        origin: Callable[[], str],
    ) -> None:
        self.workspace = workspace
        self.socket = socket
        self._origin = origin
        self._hooks: OrderedDict[str, HookContext] = OrderedDict()
        self._unsubscribe = workspace.subscribe(self._on_change)

    def add_routes(self, app: web.Application) -> None:
        """Mount the `response_url` endpoint."""
        app.router.add_post("/hooks/{token}", self._hook)

    def close(self) -> None:
        """Stop turning workspace changes into events."""
        self._unsubscribe()

    # ------------------------------------------------------------------ text

    def format_outgoing(self, text: str) -> str:
        """What a Slack client sends for typed text: `& < >` escaped, `@alice` → `<@U…>`."""
        escaped = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        by_name = {
            str(u.get("name", "")).lower(): uid
            for uid, u in self.workspace.users.items()
            if u.get("name")
        }
        channels = {
            str(c.get("name", "")).lower(): cid for cid, c in self.workspace.channels.items()
        }

        def user_ref(match: re.Match[str]) -> str:
            name = match.group(1).rstrip(".")
            tail = match.group(1)[len(name) :]
            if name.lower() in ("here", "channel", "everyone"):
                return f"<!{name.lower()}>{tail}"
            uid = by_name.get(name.lower())
            return f"<@{uid}>{tail}" if uid else match.group(0)

        def channel_ref(match: re.Match[str]) -> str:
            cid = channels.get(match.group(1).lower())
            return f"<#{cid}|{match.group(1)}>" if cid else match.group(0)

        return _HASH_CHANNEL.sub(channel_ref, _AT_NAME.sub(user_ref, escaped))

    def _user_name(self, user: str) -> str:
        return str(self.workspace.users.get(user, {}).get("name") or f"user-{user.lower()}")

    def _channel_name(self, channel: str) -> str:
        return str(self.workspace.channels.get(channel, {}).get("name") or channel.lower())

    # ------------------------------------------------------------------ events

    def _on_change(self, event: WorkspaceEvent) -> None:
        message = event.data.get("message")
        if not isinstance(message, StoredMessage):
            return
        if event.kind == "message_posted":
            self._message_events(message)
        elif event.kind == "message_updated":
            self._changed_event(message)

    def _envelope(self, event: dict[str, Any]) -> dict[str, Any]:
        ws = self.workspace
        return event_envelope(
            event,
            team_id=ws.team_of(event.get("channel")),
            api_app_id=ws.app_id,
            bot_user_id=ws.bot_user_id,
        )

    def _message_events(self, message: StoredMessage) -> None:
        ws = self.workspace
        channel_type = ws.channel_type(message.channel)
        event: dict[str, Any] = {
            "type": "message",
            "user": message.user,
            "text": message.text,
            "ts": message.ts,
            "channel": message.channel,
            "channel_type": channel_type,
            "team": ws.team_of(message.channel),
            "event_ts": message.ts,
        }
        if message.blocks:
            event["blocks"] = message.blocks
        if message.bot_id:
            event["bot_id"] = message.bot_id
            event["app_id"] = ws.app_id
        else:
            event["client_msg_id"] = str(uuid.uuid4())
        if message.thread_ts:
            event["thread_ts"] = message.thread_ts
            if message.is_reply and ws.has_message(message.channel, message.thread_ts):
                event["parent_user_id"] = ws.message(message.channel, message.thread_ts).user
        self.socket.send(EVENTS_API, self._envelope(event))
        mentioned = f"<@{ws.bot_user_id}>" in message.text
        if mentioned and not message.bot_id and channel_type != "im":
            mention = {
                k: v for k, v in event.items() if k not in ("channel_type", "parent_user_id")
            }
            mention["type"] = "app_mention"
            self.socket.send(EVENTS_API, self._envelope(mention))

    def _changed_event(self, message: StoredMessage) -> None:
        ws = self.workspace
        stamp = ws.next_ts()
        event = {
            "type": "message",
            "subtype": "message_changed",
            "hidden": True,
            "channel": message.channel,
            "channel_type": ws.channel_type(message.channel),
            "ts": stamp,
            "event_ts": stamp,
            "message": message.to_api(),
        }
        self.socket.send(EVENTS_API, self._envelope(event))

    # ------------------------------------------------------------------ people's actions

    def post(
        self, user: str, channel: str, text: str, *, thread_ts: str | None = None
    ) -> StoredMessage:
        """`user` posts `text` (already in Slack's format); events follow by subscription."""
        self.workspace.channel_info(channel)
        if thread_ts and not self.workspace.has_message(channel, thread_ts):
            raise WorkspaceError("thread_not_found", f"{channel}/{thread_ts}")
        return self.workspace.post_user_message(channel, user, text, thread_ts=thread_ts)

    def _hook_url(self, context: HookContext) -> str:
        token = uuid.uuid4().hex
        self._hooks[token] = context
        while len(self._hooks) > MAX_HOOKS:
            self._hooks.popitem(last=False)
        return f"{self._origin()}/hooks/{token}"

    def _slackbot(self, user: str, channel: str, text: str, thread_ts: str | None) -> str:
        """Slack reporting a problem to one person (only they see it)."""
        message = self.workspace.post_ephemeral(
            channel, user, text=text, thread_ts=thread_ts, sender=SLACKBOT_USER_ID
        )
        return message.ts

    async def click(
        self,
        user: str,
        channel: str,
        message_ts: str,
        action_id: str,
        *,
        value: str | None = None,
    ) -> InteractionResult:
        """`user` clicks a button on a message (or on one of their ephemeral messages)."""
        ws = self.workspace
        thread_ts: str | None
        message_api: dict[str, Any] | None
        if ws.has_message(channel, message_ts):
            stored = ws.message(channel, message_ts)
            blocks, thread_ts, ephemeral = stored.blocks, stored.thread_ts, False
            message_api = stored.to_api()
            if thread_ts is None and ws.thread(channel, message_ts)[1:]:
                message_api["thread_ts"] = message_ts  # a thread parent says so
        else:
            try:
                eph: EphemeralMessage = ws.ephemeral(message_ts)
            except KeyError:
                return InteractionResult(ok=False, error="message_not_found")
            if eph.user != user:
                return InteractionResult(ok=False, error="message_not_found")
            blocks, thread_ts, ephemeral, message_api = eph.blocks, eph.thread_ts, True, None
        found = find_button(blocks, action_id, value)
        if found is None:
            return InteractionResult(ok=False, error="action_not_found")
        block_id, element = found
        payload = block_actions_payload(
            action_id=action_id,
            value=str(element.get("value", "")),
            user=user,
            channel=channel,
            message_ts=message_ts,
            thread_ts=thread_ts,
            block_id=block_id,
            text=str((element.get("text") or {}).get("text", "")),
            message=message_api,
            team_id=ws.team_of(channel),
            api_app_id=ws.app_id,
            trigger_id=ws.issue_trigger(user),
            response_url=self._hook_url(
                HookContext(channel, user, message_ts, thread_ts, ephemeral=ephemeral)
            ),
            is_ephemeral=ephemeral,
            style=element.get("style"),
            element_type=str(element.get("type") or "button"),
            user_name=self._user_name(user),
            channel_name=self._channel_name(channel),
        )
        delivery = await self.socket.send(INTERACTIVE, payload).wait()
        result = InteractionResult(ok=delivery.acked, delivery=delivery, error=delivery.error)
        if not delivery.acked:
            label = (element.get("text") or {}).get("text", action_id)
            result.posted.append(
                self._slackbot(
                    user,
                    channel,
                    f"⚠️ {ws.bot_name} did not respond to “{label}” ({delivery.error}).",
                    thread_ts,
                )
            )
        return result

    async def command(
        self, user: str, channel: str, text: str, *, thread_ts: str | None = None
    ) -> InteractionResult:
        """`user` runs a slash command (`/grace status`) in `channel`."""
        ws = self.workspace
        command, _, args = text.strip().partition(" ")
        if command not in KNOWN_COMMANDS:
            ts = self._slackbot(
                user, channel, f"{command} is not a valid command. Try /grace.", thread_ts
            )
            return InteractionResult(ok=False, error="unknown_command", posted=[ts])
        hook = HookContext(channel, user, None, thread_ts)
        form = slash_command_form(
            text=args.strip(),
            command=command,
            user=user,
            channel=channel,
            team_id=ws.team_of(channel),
            api_app_id=ws.app_id,
            trigger_id=ws.issue_trigger(user),
            response_url=self._hook_url(hook),
            user_name=self._user_name(user),
            channel_name=self._channel_name(channel),
        )
        delivery = await self.socket.send(
            SLASH_COMMANDS, dict(form), accepts_response_payload=True
        ).wait()
        result = InteractionResult(ok=delivery.acked, delivery=delivery, error=delivery.error)
        if not delivery.acked:
            error = "dispatch_failed" if delivery.error == "not_connected" else "operation_timeout"
            result.posted.append(
                self._slackbot(
                    user, channel, f"{command} failed with the error “{error}”", thread_ts
                )
            )
            return result
        body = delivery.ack_payload or {}
        if body.get("text") or body.get("blocks"):
            result.posted.extend(self.respond(hook, body))
        return result

    async def submit_view(
        self, user: str, view_id: str, values: dict[str, dict[str, str]]
    ) -> InteractionResult:
        """`user` submits the modal `view_id` with typed `values` ({block: {action: text}})."""
        ws = self.workspace
        try:
            stored = ws.view(view_id)
        except KeyError:
            return InteractionResult(ok=False, error="view_not_found")
        if stored.closed or (stored.user is not None and stored.user != user):
            return InteractionResult(ok=False, error="view_not_found")
        view = stored.view
        payload = view_submission_payload(
            callback_id=str(view.get("callback_id", "")),
            values=values,
            private_metadata=str(view.get("private_metadata", "")),
            user=user,
            team_id=ws.team_of_user(user),
            api_app_id=ws.app_id,
            view_id=stored.id,
            view=stored.to_api(ws.team_id, ws.app_id, ws.bot_id),
            trigger_id=ws.issue_trigger(user),
            user_name=self._user_name(user),
        )
        delivery = await self.socket.send(
            INTERACTIVE, payload, accepts_response_payload=True
        ).wait()
        result = InteractionResult(ok=delivery.acked, delivery=delivery, error=delivery.error)
        if not delivery.acked:
            result.errors = {"": f"{ws.bot_name} did not respond ({delivery.error}). Try again."}
            return result
        body = delivery.ack_payload or {}
        action = body.get("response_action")
        if action == "errors":
            raw = body.get("errors") or {}
            result.errors = {str(k): str(v) for k, v in raw.items()}
            result.ok = False
            result.error = "validation_errors"
        elif action in ("update", "push") and isinstance(body.get("view"), dict):
            ws.update_view(body["view"], view_id=stored.id)
        else:
            ws.close_view(stored.id)
            result.view_closed = True
        return result

    async def close_view(self, user: str, view_id: str) -> InteractionResult:
        """`user` dismisses a modal; the app hears of it when it asked (`notify_on_close`)."""
        ws = self.workspace
        try:
            stored = ws.view(view_id)
        except KeyError:
            return InteractionResult(ok=False, error="view_not_found")
        if stored.closed:
            return InteractionResult(ok=True, view_closed=True)
        ws.close_view(view_id)
        result = InteractionResult(ok=True, view_closed=True)
        if stored.view.get("notify_on_close"):
            payload = {
                "type": "view_closed",
                "team": {"id": ws.team_of_user(user), "domain": "fake"},
                "user": {
                    "id": user,
                    "username": self._user_name(user),
                    "team_id": ws.team_of_user(user),
                },
                "api_app_id": ws.app_id,
                "view": stored.to_api(ws.team_id, ws.app_id, ws.bot_id),
                "is_cleared": False,
            }
            result.delivery = await self.socket.send(INTERACTIVE, payload).wait()
        return result

    # ------------------------------------------------------------------ response_url

    def respond(self, hook: HookContext, body: dict[str, Any]) -> list[str]:
        """Apply a slash-command ack or `response_url` body; returns the ts it posted."""
        ws = self.workspace
        text = str(body.get("text") or "")
        blocks = body.get("blocks") if isinstance(body.get("blocks"), list) else None
        thread_ts = str(body.get("thread_ts") or hook.thread_ts or "") or None
        if body.get("delete_original") and hook.message_ts:
            if hook.ephemeral:
                ws.update_ephemeral(hook.message_ts, text="(deleted)", blocks=[])
            else:
                ws.delete_message(hook.channel, hook.message_ts)
            return []
        if body.get("replace_original") and hook.message_ts:
            if hook.ephemeral:
                ws.update_ephemeral(hook.message_ts, text=text, blocks=blocks)
            else:
                ws.update_message(hook.channel, hook.message_ts, text=text, blocks=blocks)
            return [hook.message_ts]
        if not text and not blocks:
            return []
        if body.get("response_type") == "in_channel":
            posted = ws.post_message(hook.channel, text=text, blocks=blocks, thread_ts=thread_ts)
            return [posted.ts]
        eph = ws.post_ephemeral(
            hook.channel, hook.user, text=text, blocks=blocks, thread_ts=thread_ts
        )
        return [eph.ts]

    async def _hook(self, request: web.Request) -> web.Response:
        context = self._hooks.get(request.match_info["token"])
        if context is None:
            return web.Response(status=404, text="expired_url")
        try:
            body = await request.json()
        except ValueError:
            return web.Response(status=400, text="invalid_payload")
        if not isinstance(body, dict):
            return web.Response(status=400, text="invalid_payload")
        try:
            self.respond(context, body)
        except WorkspaceError as exc:
            return web.Response(status=400, text=exc.error)
        return web.Response(text="ok")
