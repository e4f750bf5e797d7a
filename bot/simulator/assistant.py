"""The assistant pane of the fake Slack (Agents & AI Apps).

- `assistant.threads.setStatus` / `setTitle` / `setSuggestedPrompts`, validated as Slack
  does, kept per thread; Slack clears a thread's status when the app replies in it, and
  so does this.
- `open_thread`: a person opens the pane — a new thread in their DM with the app (its
  root posted by the app, as Slack's "New Assistant Thread" is) — and the app is told
  with an `assistant_thread_started` event.
- For the page: `GET /sim/assistant/state`, `POST /sim/assistant/open {user}`; each change
  is a workspace event of kind `assistant_updated` (the page then re-reads the state).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from aiohttp import web

from bot.simulator.panes import body_of, no_person, person
from bot.simulator.requests import event_envelope
from bot.simulator.workspace import (
    SlackWorkspace,
    StoredMessage,
    WorkspaceError,
    WorkspaceEvent,
)

MAX_PROMPTS = 4
ROOT_TEXT = "New assistant thread"
UPDATED = "assistant_updated"


@dataclass
class AssistantThread:
    """What the pane shows above and below one assistant thread."""

    channel: str
    thread_ts: str
    user: str = ""
    title: str = ""
    status: str = ""
    prompts: list[dict[str, str]] = field(default_factory=list)
    prompts_title: str = ""


def _required(params: dict[str, Any], name: str) -> str:
    value = params.get(name)
    if not isinstance(value, str) or not value:
        raise WorkspaceError("invalid_arguments", f"{name} is required")
    return value


class AssistantPane:
    """The assistant threads of a workspace and the Web API methods that change them."""

    def __init__(self, workspace: SlackWorkspace) -> None:
        self.workspace = workspace
        self.threads: dict[tuple[str, str], AssistantThread] = {}
        self.dm_prompts: dict[str, dict[str, Any]] = {}
        """DM channel → `{"title", "prompts"}` set without a thread (the agent view)."""
        self._unsubscribe = workspace.subscribe(self._on_change)

    def handlers(self) -> dict[str, Any]:
        """Web API method → handler (see `webapi.Handler`)."""
        return {
            "assistant.threads.setStatus": self._set_status,
            "assistant.threads.setTitle": self._set_title,
            "assistant.threads.setSuggestedPrompts": self._set_prompts,
        }

    # ------------------------------------------------------------------ state

    def thread(self, channel: str, thread_ts: str) -> AssistantThread:
        """The thread's pane state (an empty one for a thread nobody has set up)."""
        return self.threads.setdefault(
            (channel, thread_ts), AssistantThread(channel=channel, thread_ts=thread_ts)
        )

    def _changed(self, thread: AssistantThread) -> None:
        self.workspace._emit(UPDATED, thread.channel, thread.thread_ts, thread=asdict(thread))

    def _on_change(self, event: WorkspaceEvent) -> None:
        """The app replied in a thread: Slack hides its status line."""
        message = event.data.get("message")
        if event.kind != "message_posted" or not isinstance(message, StoredMessage):
            return
        if not message.bot_id or not message.thread_ts:
            return
        known = self.threads.get((message.channel, message.thread_ts))
        if known is not None and known.status:
            known.status = ""
            self._changed(known)

    def dm_of(self, user: str) -> str:
        """The DM channel between `user` and the app (registered when missing)."""
        for channel_id, channel in self.workspace.channels.items():
            if channel.get("is_im") and channel.get("user") == user:
                return channel_id
        channel_id = "D" + user[1:]
        self.workspace.add_channel(channel_id, self.workspace.bot_name, is_im=True, user=user)
        return channel_id

    def open_thread(self, user: str) -> AssistantThread:
        """`user` opens the pane: a new thread in their DM with the app."""
        channel = self.dm_of(user)
        root = self.workspace.post_message(channel, text=ROOT_TEXT)
        thread = self.thread(channel, root.ts)
        thread.user = user
        self._changed(thread)
        return thread

    def started_envelope(
        self, thread: AssistantThread, context_channel: str | None = None
    ) -> dict[str, Any]:
        """The `assistant_thread_started` event_callback Slack sends once `thread.user`
        opened the pane on `thread` (viewing `context_channel`, if any)."""
        ws = self.workspace
        team = ws.team_of_user(thread.user)  # `grace dev --workspaces 2`: the person's own
        context: dict[str, Any] = {"team_id": team, "enterprise_id": None}
        if context_channel:
            context["channel_id"] = context_channel
        event = {
            "type": "assistant_thread_started",
            "assistant_thread": {
                "user_id": thread.user,
                "context": context,
                "channel_id": thread.channel,
                "thread_ts": thread.thread_ts,
            },
            "event_ts": thread.thread_ts,
        }
        return event_envelope(event, team_id=team, api_app_id=ws.app_id, bot_user_id=ws.bot_user_id)

    def root(self, thread: AssistantThread) -> dict[str, Any]:
        """The thread's root message as the page shows messages."""
        message = self.workspace.message(thread.channel, thread.thread_ts)
        return {**asdict(message), "is_reply": False, "ephemeral": False}

    def to_json(self) -> list[dict[str, Any]]:
        return [asdict(t) for t in self.threads.values()]

    # ------------------------------------------------------------------ Web API

    def _target(self, params: dict[str, Any]) -> AssistantThread:
        channel = _required(params, "channel_id")
        thread_ts = _required(params, "thread_ts")
        if self.workspace.channel_type(channel) != "im":
            raise WorkspaceError("invalid_channel", "assistant threads live in a DM with the app")
        if not self.workspace.has_message(channel, thread_ts):
            raise WorkspaceError("thread_not_found", f"{channel}/{thread_ts}")
        return self.thread(channel, thread_ts)

    def _set_status(self, params: dict[str, Any], call: object) -> dict[str, Any]:
        status = params.get("status")
        if not isinstance(status, str):
            raise WorkspaceError("invalid_arguments", 'status is required ("" clears it)')
        thread = self._target(params)
        thread.status = status
        self._changed(thread)
        return {}

    def _set_title(self, params: dict[str, Any], call: object) -> dict[str, Any]:
        title = _required(params, "title")
        thread = self._target(params)
        thread.title = title
        self._changed(thread)
        return {}

    def _set_prompts(self, params: dict[str, Any], call: object) -> dict[str, Any]:
        prompts = params.get("prompts")
        if not isinstance(prompts, list) or not 1 <= len(prompts) <= MAX_PROMPTS:
            raise WorkspaceError("invalid_arguments", f"1 to {MAX_PROMPTS} prompts")
        for prompt in prompts:
            if not isinstance(prompt, dict) or not all(
                isinstance(prompt.get(k), str) and prompt.get(k) for k in ("title", "message")
            ):
                raise WorkspaceError("invalid_arguments", "each prompt needs title and message")
        title = params.get("title")
        if not params.get("thread_ts"):  # an agent app: the prompts of the whole DM
            channel = _required(params, "channel_id")
            if self.workspace.channel_type(channel) != "im":
                raise WorkspaceError("invalid_channel", "suggested prompts live in a DM")
            chosen = [{"title": p["title"], "message": p["message"]} for p in prompts]
            self.dm_prompts[channel] = {
                "title": title if isinstance(title, str) else "",
                "prompts": chosen,
            }
            return {}
        thread = self._target(params)
        thread.prompts = [{"title": p["title"], "message": p["message"]} for p in prompts]
        thread.prompts_title = title if isinstance(title, str) else ""
        self._changed(thread)
        return {}

    # ------------------------------------------------------------------ the page

    def add_routes(
        self, app: web.Application, send_event: Callable[[dict[str, Any]], object]
    ) -> None:
        """`GET /sim/assistant/state`, `POST /sim/assistant/open`; `send_event` delivers
        an Events API envelope to the app (over Socket Mode in the simulator)."""

        async def state(request: web.Request) -> web.Response:
            return web.json_response({"threads": self.to_json()})

        async def open_pane(request: web.Request) -> web.Response:
            user = person(self.workspace, await body_of(request))
            if user is None:
                return no_person()
            thread = self.open_thread(user)
            send_event(self.started_envelope(thread))
            return web.json_response(
                {"ok": True, "thread": asdict(thread), "message": self.root(thread)}
            )

        app.router.add_get("/sim/assistant/state", state)
        app.router.add_post("/sim/assistant/open", open_pane)
