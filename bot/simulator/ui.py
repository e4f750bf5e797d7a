"""The simulator's web page and the JSON / Server-Sent Events endpoints it uses.

Endpoints (all JSON unless noted; `user` is a Slack user id such as `U0ALICE`):

- `GET /` — the page (static HTML/CSS/JS from `bot/static/`, no build step).
- `GET /sim/state?user=U…` — team, bot, users, channels, every message, the user's
  ephemeral messages and open modals, the Socket Mode connection count, the event `seq`
  and `latest_ts` (the page shows only ephemerals and modals newer than its first load,
  as a Slack client drops them on a reload).
- `GET /favicon.ico` — the tab icon.
- `GET /sim/events` — Server-Sent Events: one JSON object per change
  (`{"seq", "kind", ...}`; kinds: `message_posted`, `message_updated`,
  `message_deleted`, `ephemeral_posted`, `ephemeral_updated`, `reaction_added`,
  `view_opened`, `view_updated`, `view_closed`, `home_published`, `reset`, `connection`,
  `delivery_failed`). The stream starts with a `hello` carrying the current `seq`.
- `POST /sim/messages` `{user, channel, text, thread_ts?, raw?}` — post as `user`
  (`@alice` → `<@U0ALICE>` unless `raw`); text starting with `/` runs the command.
- `POST /sim/commands` `{user, channel, text: "/grace status", thread_ts?}`.
- `POST /sim/actions` `{user, channel, message_ts, action_id, value?}` — a button click.
- `POST /sim/views/{view_id}/submit` `{user, values: {block_id: {action_id: text}}}`;
  `POST /sim/views/{view_id}/close` `{user}`.
- `POST /sim/reset` — forget all messages (for tests); `GET /sim/deliveries` — recent
  Socket Mode deliveries and connections (for debugging).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import asdict
from importlib import resources
from typing import Any

from aiohttp import web

from bot.simulator.relay import InteractionResult, Relay
from bot.simulator.socket_mode import Delivery, SocketModeServer
from bot.simulator.workspace import (
    EphemeralMessage,
    SlackWorkspace,
    StoredMessage,
    StoredView,
    WorkspaceError,
    WorkspaceEvent,
)

log = logging.getLogger(__name__)

STATIC_FILES = {
    "simulator.css": "text/css",
    "simulator.js": "application/javascript",
    "home.js": "application/javascript",
    "assistant.js": "application/javascript",
    "sessions.js": "application/javascript",
    "simulator.html": "text/html",
    "favicon.svg": "image/svg+xml",
}
KEEPALIVE_SECONDS = 15.0
STREAM_QUEUE = 2000


def message_json(message: StoredMessage) -> dict[str, Any]:
    """A channel message for the page."""
    return {**asdict(message), "is_reply": message.is_reply, "ephemeral": False}


def ephemeral_json(message: EphemeralMessage) -> dict[str, Any]:
    """An ephemeral message for the page (only its `user` is shown it)."""
    return {**asdict(message), "ephemeral": True}


def view_json(view: StoredView) -> dict[str, Any]:
    """A modal for the page."""
    return {
        "id": view.id,
        "user": view.user,
        "closed": view.closed,
        "hash": view.hash,
        "view": view.view,
    }


def delivery_json(delivery: Delivery) -> dict[str, Any]:
    """A Socket Mode delivery for the page's status line and for debugging."""
    return {
        "type": delivery.type,
        "acked": delivery.acked,
        "error": delivery.error,
        "attempts": delivery.attempts,
        "summary": delivery.summary(),
    }


def _static(name: str) -> bytes:
    return (resources.files("bot") / "static" / name).read_bytes()


class SimulatorUI:
    """Serves the page and relays every change to it as Server-Sent Events."""

    def __init__(self, workspace: SlackWorkspace, socket: SocketModeServer, relay: Relay) -> None:
        self.workspace = workspace
        self.socket = socket
        self.relay = relay
        self.seq = 0
        self.workspaces: Callable[[], list[dict[str, Any]]] | None = None
        """Many-workspace mode (`SlackSimulator.enable_installs`): each workspace, whether
        the app is installed there, and where to install it."""
        self._streams: set[asyncio.Queue[bytes | None]] = set()
        self._unsubscribe = [
            workspace.subscribe(self._on_workspace),
            socket.subscribe(self._on_socket),
        ]

    def add_routes(self, app: web.Application) -> None:
        """Mount the page, its static files and its API."""
        app.router.add_get("/", self._index)
        app.router.add_get("/static/{name}", self._static_file)
        app.router.add_get("/favicon.ico", self._favicon)
        app.router.add_get("/sim/state", self._state)
        app.router.add_get("/sim/events", self._events)
        app.router.add_get("/sim/deliveries", self._deliveries)
        app.router.add_post("/sim/messages", self._post_message)
        app.router.add_post("/sim/commands", self._command)
        app.router.add_post("/sim/actions", self._action)
        app.router.add_post("/sim/views/{view_id}/submit", self._submit_view)
        app.router.add_post("/sim/views/{view_id}/close", self._close_view)
        app.router.add_post("/sim/reset", self._reset)
        app.on_shutdown.append(self._on_shutdown)

    def close(self) -> None:
        """End every open event stream (the server is stopping)."""
        for queue in list(self._streams):
            with contextlib.suppress(asyncio.QueueFull):
                queue.put_nowait(None)

    async def _on_shutdown(self, app: web.Application) -> None:
        self.close()

    # ------------------------------------------------------------------ live updates

    def _broadcast(self, data: dict[str, Any]) -> None:
        self.seq += 1
        data = {"seq": self.seq, **data}
        chunk = f"id: {self.seq}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()
        for queue in list(self._streams):
            try:
                queue.put_nowait(chunk)
            except asyncio.QueueFull:  # a stalled page: drop it, it reconnects and reloads
                self._streams.discard(queue)
                with contextlib.suppress(asyncio.QueueFull):
                    queue.put_nowait(None)

    def workspaces_changed(self) -> None:
        """Tell the pages that an install changed the workspaces' state (`workspaces`)."""
        if self.workspaces is not None:
            self._broadcast({"kind": "workspaces", "workspaces": self.workspaces()})

    def _on_workspace(self, event: WorkspaceEvent) -> None:
        data: dict[str, Any] = {"kind": event.kind, "channel": event.channel, "ts": event.ts}
        message = event.data.get("message")
        if isinstance(message, StoredMessage):
            data["message"] = message_json(message)
        elif isinstance(message, EphemeralMessage):
            data["message"] = ephemeral_json(message)
        view = event.data.get("view")
        if isinstance(view, StoredView):
            data["view"] = view_json(view)
        if isinstance(event.data.get("thread"), dict):  # assistant_updated, session_updated
            data["thread"] = event.data["thread"]
        if isinstance(event.data.get("home"), dict):  # home_published
            data["home"] = event.data["home"]
        self._broadcast(data)

    def _on_socket(self, event: WorkspaceEvent) -> None:
        if event.kind in ("connection_opened", "connection_closed"):
            self._broadcast({"kind": "connection", "connections": len(self.socket.connections)})
        elif event.kind == "delivery_failed":
            delivery = event.data.get("delivery")
            if isinstance(delivery, Delivery):
                self._broadcast({"kind": "delivery_failed", "delivery": delivery_json(delivery)})

    async def _events(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(
            headers={
                "Content-Type": "text/event-stream",
                "Cache-Control": "no-cache",
                "X-Accel-Buffering": "no",
            }
        )
        await response.prepare(request)
        queue: asyncio.Queue[bytes | None] = asyncio.Queue(maxsize=STREAM_QUEUE)
        self._streams.add(queue)
        hello = {"seq": self.seq, "kind": "hello", "connections": len(self.socket.connections)}
        try:
            await response.write(f"retry: 1000\ndata: {json.dumps(hello)}\n\n".encode())
            while True:
                try:
                    chunk = await asyncio.wait_for(queue.get(), KEEPALIVE_SECONDS)
                except TimeoutError:
                    await response.write(b": keep-alive\n\n")
                    continue
                if chunk is None:
                    break
                await response.write(chunk)
        except (ConnectionResetError, ConnectionError):
            pass
        finally:
            self._streams.discard(queue)
        return response

    # ------------------------------------------------------------------ pages

    async def _index(self, request: web.Request) -> web.Response:
        return web.Response(
            body=_static("simulator.html"),
            content_type="text/html",
            charset="utf-8",
            headers={"Cache-Control": "no-cache"},
        )

    async def _favicon(self, request: web.Request) -> web.Response:
        """The tab icon (browsers ask for it even when the page names another)."""
        return web.Response(
            body=_static("favicon.svg"),
            content_type="image/svg+xml",
            headers={"Cache-Control": "max-age=86400"},
        )

    async def _static_file(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        if name not in STATIC_FILES:
            raise web.HTTPNotFound()
        return web.Response(
            body=_static(name),
            content_type=STATIC_FILES[name],
            charset="utf-8",
            headers={"Cache-Control": "no-cache"},
        )

    # ------------------------------------------------------------------ API

    def _people(self) -> list[dict[str, Any]]:
        return [
            {
                "id": uid,
                "name": u.get("name"),
                "real_name": u.get("real_name"),
                "is_bot": bool(u.get("is_bot")),
                "team_id": u.get("team_id"),
            }
            for uid, u in self.workspace.users.items()
        ]

    async def _state(self, request: web.Request) -> web.Response:
        ws = self.workspace
        user = request.query.get("user") or None
        views = [v for v in ws.views() if not v.closed and (user is None or v.user in (None, user))]
        return web.json_response(
            {
                "seq": self.seq,
                "team": {"id": ws.team_id, "name": ws.team_name},
                "bot": {
                    "user_id": ws.bot_user_id,
                    "bot_id": ws.bot_id,
                    "app_id": ws.app_id,
                    "name": ws.bot_name,
                },
                "users": self._people(),
                "channels": list(ws.channels.values()),
                "messages": [message_json(m) for m in ws.all_messages()],
                "ephemerals": [ephemeral_json(e) for e in ws.ephemerals(user=user)],
                "views": [view_json(v) for v in views],
                "connections": len(self.socket.connections),
                "latest_ts": ws.latest_ts,
                "workspaces": self.workspaces() if self.workspaces is not None else [],
            }
        )

    async def _deliveries(self, request: web.Request) -> web.Response:
        recent = list(self.socket.deliveries)[-100:]
        return web.json_response(
            {
                "connections": len(self.socket.connections),
                "opened": self.socket.opened,
                "deliveries": [delivery_json(d) for d in recent],
            }
        )

    @staticmethod
    async def _body(request: web.Request) -> dict[str, Any]:
        try:
            body = await request.json()
        except ValueError:
            raise web.HTTPBadRequest(
                text=json.dumps({"ok": False, "error": "invalid_json"}),
                content_type="application/json",
            ) from None
        if not isinstance(body, dict):
            raise web.HTTPBadRequest(
                text=json.dumps({"ok": False, "error": "invalid_json"}),
                content_type="application/json",
            )
        return body

    def _user(self, body: dict[str, Any]) -> str:
        user = str(body.get("user") or "")
        if user not in self.workspace.users or self.workspace.users[user].get("is_bot"):
            raise WorkspaceError("user_not_found", f"unknown person {user!r}")
        return user

    @staticmethod
    def _error(exc: WorkspaceError) -> web.Response:
        return web.json_response(
            {"ok": False, "error": exc.error, "detail": exc.detail}, status=400
        )

    @staticmethod
    def _result(result: InteractionResult) -> web.Response:
        return web.json_response(result.to_json())

    async def _post_message(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        try:
            user = self._user(body)
            channel = str(body.get("channel") or "")
            text = str(body.get("text") or "")
            thread_ts = str(body.get("thread_ts") or "") or None
            if not text.strip():
                raise WorkspaceError("no_text")
            if text.lstrip().startswith("/"):
                result = await self.relay.command(user, channel, text, thread_ts=thread_ts)
                return web.json_response({**result.to_json(), "command": True})
            formatted = text if body.get("raw") else self.relay.format_outgoing(text)
            message = self.relay.post(user, channel, formatted, thread_ts=thread_ts)
        except WorkspaceError as exc:
            return self._error(exc)
        return web.json_response({"ok": True, "message": message_json(message)})

    async def _interaction(
        self,
        request: web.Request,
        act: Callable[[str, dict[str, Any]], Awaitable[InteractionResult]],
    ) -> web.Response:
        """`act(user, body)` for the person the JSON body names; an unknown person or a
        refused interaction is a 400 with the workspace's error."""
        body = await self._body(request)
        try:
            result = await act(self._user(body), body)
        except WorkspaceError as exc:
            return self._error(exc)
        return self._result(result)

    async def _command(self, request: web.Request) -> web.Response:
        async def command(user: str, body: dict[str, Any]) -> InteractionResult:
            channel = str(body.get("channel") or "")
            self.workspace.channel_info(channel)
            thread_ts = str(body.get("thread_ts") or "") or None
            return await self.relay.command(
                user, channel, str(body.get("text") or ""), thread_ts=thread_ts
            )

        return await self._interaction(request, command)

    async def _action(self, request: web.Request) -> web.Response:
        async def click(user: str, body: dict[str, Any]) -> InteractionResult:
            value = body.get("value")
            return await self.relay.click(
                user,
                str(body.get("channel") or ""),
                str(body.get("message_ts") or ""),
                str(body.get("action_id") or ""),
                value=str(value) if value is not None else None,
            )

        return await self._interaction(request, click)

    async def _submit_view(self, request: web.Request) -> web.Response:
        async def submit(user: str, body: dict[str, Any]) -> InteractionResult:
            raw = body.get("values") or {}
            values = {
                str(block): {str(action): str(text) for action, text in actions.items()}
                for block, actions in raw.items()
                if isinstance(actions, dict)
            }
            return await self.relay.submit_view(user, request.match_info["view_id"], values)

        return await self._interaction(request, submit)

    async def _close_view(self, request: web.Request) -> web.Response:
        async def close(user: str, _: dict[str, Any]) -> InteractionResult:
            return await self.relay.close_view(user, request.match_info["view_id"])

        return await self._interaction(request, close)

    async def _reset(self, request: web.Request) -> web.Response:
        self.workspace.reset()
        return web.json_response({"ok": True})
