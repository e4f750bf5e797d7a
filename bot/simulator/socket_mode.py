"""Slack's Socket Mode, server side: `apps.connections.open` and the WebSocket.

What an unmodified Socket Mode client (slack_sdk's, hence Bolt's) sees:

- `apps.connections.open` (app-level `xapp-` token) returns
  `ws://HOST:PORT/socket-mode/link/?ticket=…`; the WebSocket starts with a `hello`.
- Payloads arrive as envelopes `{"envelope_id", "type", "payload",
  "accepts_response_payload", "retry_attempt", "retry_reason"}` of type `events_api`,
  `interactive` or `slash_commands`; the app acks each with `{"envelope_id", "payload"?}`
  within `ack_timeout` (Slack: 3 s).
- An `events_api` envelope that is not acked is redelivered (new envelope id,
  `retry_attempt` 1, 2, 3, `retry_reason` "timeout") after `retry_delays` (Slack:
  immediately, 1 min, 5 min); events wait for a connection when none is open. An
  interaction that is not acked is not retried (Slack doesn't either): the `Delivery`
  ends with `error="not_acked"` (or `"not_connected"`), subscribers are told, and the
  caller shows the user Slack's error.
- With several connections each envelope goes to one of them (round robin). The server
  can drop connections (`drop_connections`, a WebSocket close) or ask clients to
  reconnect (`request_refresh`, a `disconnect` message), as Slack does.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web

from bot.simulator.webapi import RecordedCall
from bot.simulator.workspace import SlackWorkspace, Subscribers, WorkspaceEvent

log = logging.getLogger(__name__)

LINK_PATH = "/socket-mode/link/"
SLACK_RETRY_DELAYS = (0.0, 60.0, 300.0)
"""Slack's schedule for redelivering an unacknowledged event."""

MAX_DELIVERIES_KEPT = 5000
EVENTS_API = "events_api"
INTERACTIVE = "interactive"
SLASH_COMMANDS = "slash_commands"


@dataclass
class Delivery:
    """One payload to get to the app: its envelopes (attempts) and how it ended."""

    type: str
    payload: dict[str, Any]
    accepts_response_payload: bool
    envelope_ids: list[str] = field(default_factory=list)
    acked: bool = False
    ack_payload: dict[str, Any] | None = None
    error: str | None = None
    """None while pending or once acked; `not_acked` or `not_connected` when it failed."""
    done: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def attempts(self) -> int:
        """How many envelopes were sent for it (1 + retries)."""
        return len(self.envelope_ids)

    async def wait(self, limit: float | None = None) -> Delivery:
        """Until it is acked or has failed for good (at most `limit` seconds)."""
        await asyncio.wait_for(self.done.wait(), limit)
        return self

    def summary(self) -> str:
        """A line for logs and the page: what it was and what happened."""
        what = self.type
        if self.type == EVENTS_API:
            event = self.payload.get("event", {})
            what = f"{event.get('type', 'event')} event"
        elif self.type == INTERACTIVE:
            what = str(self.payload.get("type", "interaction"))
        elif self.type == SLASH_COMMANDS:
            what = f"{self.payload.get('command', '')} {self.payload.get('text', '')}".strip()
        state = "acked" if self.acked else (self.error or "pending")
        return f"{what}: {state} after {self.attempts} attempt(s)"


@dataclass
class Connection:
    """One open Socket Mode WebSocket."""

    id: str
    ws: web.WebSocketResponse
    ticket: str
    opened_at: float = field(default_factory=time.time)


class SocketModeServer:
    """Socket Mode over a workspace: connection tickets, the WebSocket, acks, retries."""

    def __init__(
        self,
        workspace: SlackWorkspace,
        *,
        ack_timeout: float = 3.0,
        retry_delays: tuple[float, ...] = SLACK_RETRY_DELAYS,
    ) -> None:
        self.workspace = workspace
        self.ack_timeout = ack_timeout
        self.retry_delays = retry_delays
        self.connections: list[Connection] = []
        self.deliveries: deque[Delivery] = deque(maxlen=MAX_DELIVERIES_KEPT)
        self.opened = 0
        """Connections accepted so far (a reconnect makes it grow)."""
        self.received: list[dict[str, Any]] = []
        """Every message a client sent (acks), in order."""
        self._tickets: set[str] = set()
        self._waiting: dict[str, asyncio.Future[dict[str, Any] | None]] = {}
        self._connected = asyncio.Event()
        self._round_robin = itertools.count()
        self._tasks: set[asyncio.Task[None]] = set()
        self._subscribers = Subscribers(log, "socket mode")

    # ------------------------------------------------------------------ wiring

    def add_routes(self, app: web.Application) -> None:
        """Mount the WebSocket endpoint; close connections when the server shuts down."""
        app.router.add_get(LINK_PATH, self._websocket)
        app.on_shutdown.append(self._on_shutdown)

    def connections_open(self, params: dict[str, Any], call: RecordedCall) -> dict[str, Any]:
        """`apps.connections.open`: a one-connection WebSocket URL on the caller's host."""
        host = call.headers.get("Host") or "127.0.0.1"
        ticket = uuid.uuid4().hex
        self._tickets.add(ticket)
        app_id = self.workspace.app_id
        return {"url": f"ws://{host}{LINK_PATH}?ticket={ticket}&app_id={app_id}"}

    def subscribe(self, callback: Callable[[WorkspaceEvent], None]) -> Callable[[], None]:
        """Be told about connections and failed deliveries; returns the unsubscriber."""
        return self._subscribers.subscribe(callback)

    def _emit(self, kind: str, **data: Any) -> None:
        self._subscribers.emit(WorkspaceEvent(kind=kind, channel=None, ts=None, data=data))

    # ------------------------------------------------------------------ connections

    @property
    def connected(self) -> bool:
        """Whether at least one client is connected (and was sent `hello`)."""
        return bool(self.connections)

    async def wait_connected(self, limit: float = 10.0) -> None:
        """Until an app connects (raises `TimeoutError` after `limit` seconds)."""
        await asyncio.wait_for(self._connected.wait(), limit)

    async def _websocket(self, request: web.Request) -> web.StreamResponse:
        ticket = request.query.get("ticket", "")
        if ticket not in self._tickets:
            raise web.HTTPUnauthorized(text="invalid or missing ticket: call apps.connections.open")
        ws = web.WebSocketResponse(autoping=True)
        await ws.prepare(request)
        connection = Connection(id=uuid.uuid4().hex[:12], ws=ws, ticket=ticket)
        self.connections.append(connection)
        self.opened += 1
        await ws.send_json(
            {
                "type": "hello",
                "num_connections": len(self.connections),
                "debug_info": {
                    "host": "applink-simulator",
                    "build_number": 1,
                    "approximate_connection_time": 18060,
                },
                "connection_info": {"app_id": self.workspace.app_id},
            }
        )
        self._connected.set()
        self._emit("connection_opened", connections=len(self.connections), id=connection.id)
        try:
            async for message in ws:
                if message.type == WSMsgType.TEXT:
                    self._on_client_message(connection, message.data)
        finally:
            with contextlib.suppress(ValueError):
                self.connections.remove(connection)
            if not self.connections:
                self._connected.clear()
            self._emit("connection_closed", connections=len(self.connections), id=connection.id)
        return ws

    def _on_client_message(self, connection: Connection, raw: str) -> None:
        try:
            message = json.loads(raw)
        except json.JSONDecodeError:
            log.warning("socket mode client %s sent non-JSON: %.200s", connection.id, raw)
            return
        if not isinstance(message, dict):
            return
        self.received.append(message)
        envelope_id = message.get("envelope_id")
        future = self._waiting.get(str(envelope_id)) if envelope_id else None
        if future is None:
            log.info("ack for an unknown or expired envelope %s", envelope_id)
            return
        if not future.done():
            payload = message.get("payload")
            future.set_result(payload if isinstance(payload, dict) else None)

    async def drop_connections(self, *, code: int = 1001) -> int:
        """Close every connection from the server side (clients should reconnect)."""
        dropped = list(self.connections)
        for connection in dropped:
            await connection.ws.close(code=code, message=b"server dropped the connection")
        return len(dropped)

    async def request_refresh(self, reason: str = "refresh_requested") -> int:
        """Send Slack's `disconnect` message: clients open a new connection and drop this one."""
        message = {"type": "disconnect", "reason": reason, "debug_info": {"host": "applink-sim"}}
        sent = 0
        for connection in list(self.connections):
            with contextlib.suppress(ConnectionError, RuntimeError):
                await connection.ws.send_json(message)
                sent += 1
        return sent

    async def _on_shutdown(self, app: web.Application) -> None:
        await self.close()

    async def close(self) -> None:
        """Stop redelivering and close every connection (the server is going away)."""
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.drop_connections(code=1001)

    # ------------------------------------------------------------------ deliveries

    def send(
        self,
        type: str,
        payload: dict[str, Any],
        *,
        accepts_response_payload: bool = False,
    ) -> Delivery:
        """Start delivering `payload`; `await delivery.wait()` for the ack (or the failure)."""
        delivery = Delivery(
            type=type, payload=payload, accepts_response_payload=accepts_response_payload
        )
        self.deliveries.append(delivery)
        task = asyncio.get_running_loop().create_task(self._deliver(delivery))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return delivery

    def pending(self) -> list[Delivery]:
        """Deliveries neither acked nor failed yet."""
        return [d for d in self.deliveries if not d.done.is_set()]

    def failed(self) -> list[Delivery]:
        """Deliveries that ended without an ack."""
        return [d for d in self.deliveries if d.done.is_set() and not d.acked]

    async def idle(self, limit: float = 10.0) -> None:
        """Until every delivery started so far has been acked or has failed."""
        deadline = time.monotonic() + limit
        while pending := self.pending():
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"{len(pending)} deliveries still pending")
            await asyncio.wait_for(pending[0].done.wait(), left)

    async def _deliver(self, delivery: Delivery) -> None:
        try:
            if delivery.type == EVENTS_API:
                await self._deliver_event(delivery)
            else:
                await self._deliver_interaction(delivery)
        finally:
            delivery.done.set()
            if not delivery.acked:
                log.warning("socket mode delivery failed: %s", delivery.summary())
                self._emit("delivery_failed", delivery=delivery)

    async def _deliver_event(self, delivery: Delivery) -> None:
        for attempt in range(len(self.retry_delays) + 1):
            if attempt:
                await asyncio.sleep(self.retry_delays[attempt - 1])
            await self._connected.wait()  # events wait for the app to (re)connect
            if await self._attempt(delivery, attempt, "timeout" if attempt else ""):
                return
        delivery.error = "not_acked"

    async def _deliver_interaction(self, delivery: Delivery) -> None:
        if not self.connections:
            delivery.error = "not_connected"
            return
        if not await self._attempt(delivery, 0, ""):
            delivery.error = "not_acked" if delivery.envelope_ids else "not_connected"

    def _pick(self) -> Connection | None:
        live = [c for c in self.connections if not c.ws.closed]
        if not live:
            return None
        return live[next(self._round_robin) % len(live)]

    async def _attempt(self, delivery: Delivery, attempt: int, reason: str) -> bool:
        """Send one envelope and wait for its ack; True when acked."""
        connection = self._pick()
        if connection is None:
            return False
        envelope_id = str(uuid.uuid4())
        envelope: dict[str, Any] = {
            "envelope_id": envelope_id,
            "type": delivery.type,
            "payload": delivery.payload,
            "accepts_response_payload": delivery.accepts_response_payload,
        }
        if delivery.type == EVENTS_API:
            envelope["retry_attempt"] = attempt
            envelope["retry_reason"] = reason
        future: asyncio.Future[dict[str, Any] | None] = asyncio.get_running_loop().create_future()
        self._waiting[envelope_id] = future
        try:
            try:
                await connection.ws.send_json(envelope)
            except (ConnectionError, RuntimeError) as exc:
                log.info("could not send envelope on %s: %s", connection.id, exc)
                return False
            delivery.envelope_ids.append(envelope_id)
            try:
                payload = await asyncio.wait_for(future, self.ack_timeout)
            except TimeoutError:
                return False
        finally:
            self._waiting.pop(envelope_id, None)
        delivery.acked = True
        delivery.ack_payload = payload
        return True
