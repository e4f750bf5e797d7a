"""Fixtures for the Slack simulator tests.

- `SocketClient` — slack_sdk's own aiohttp `SocketModeClient`, pointed at a simulator,
  recording every message and envelope, with a switchable acknowledgement policy.
- `Page` — what the simulator's web page does, over its HTTP API (`/sim/...`).
- `dev` — a running `grace dev` (simulator + the real GRACE bot over Socket Mode) on a
  temporary data dir.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.socket_mode.aiohttp import SocketModeClient
from slack_sdk.socket_mode.async_client import AsyncBaseSocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.socket_mode.response import SocketModeResponse
from slack_sdk.web.async_client import AsyncWebClient

from bot.service.settings import LLMSettings, Settings, SlackSettings
from bot.simulator.server import SlackSimulator
from bot.simulator.workspace import DEFAULT_CHANNEL_ID, StoredMessage
from bot.slack.dev import DevEnvironment, dev_environment

ALICE = "U0ALICE"
BOB = "U0BOB"
CHANNEL = DEFAULT_CHANNEL_ID
EDIT_INTERVAL = 0.05

VACATION_Q = "How many vacation days do new employees get?"
COMPARE_Q = "Why do multiple teams share an office day and how do I claim the remote work stipend?"
"""A complex question (plan approval) with one weak part (a confirmation), then answered."""


async def until(check: Callable[[], Any], *, limit: float = 15.0, what: str = "condition") -> Any:
    """Poll `check` (sync or async) until it returns something truthy; return that."""
    deadline = time.monotonic() + limit
    while True:
        value = check()
        if asyncio.iscoroutine(value):
            value = await value
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


# --------------------------------------------------------------------------- slack_sdk client


class SocketClient:
    """slack_sdk's `SocketModeClient` on a simulator, with an ack policy for tests."""

    def __init__(self, simulator: SlackSimulator, *, ping_interval: float = 0.5) -> None:
        self.web = AsyncWebClient(base_url=simulator.base_url)
        self.client = SocketModeClient(
            app_token="xapp-test", web_client=self.web, ping_interval=ping_interval
        )
        self.messages: list[dict[str, Any]] = []
        self.requests: list[SocketModeRequest] = []
        self.should_ack: Callable[[SocketModeRequest], bool] = lambda request: True
        self.ack_payload: Callable[[SocketModeRequest], dict[str, Any] | None] = lambda request: (
            None
        )
        self.client.message_listeners.append(self._on_message)
        self.client.socket_mode_request_listeners.append(self._on_request)

    async def _on_message(
        self, client: AsyncBaseSocketModeClient, message: dict[str, Any], raw: str | None
    ) -> None:
        self.messages.append(message)

    async def _on_request(self, client: AsyncBaseSocketModeClient, req: SocketModeRequest) -> None:
        self.requests.append(req)
        if self.should_ack(req):
            response = SocketModeResponse(
                envelope_id=req.envelope_id, payload=self.ack_payload(req)
            )
            await client.send_socket_mode_response(response)

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        """Received messages (hello, disconnect, envelopes) of one `type`."""
        return [m for m in self.messages if m.get("type") == kind]

    def events(self, event_type: str | None = None) -> list[SocketModeRequest]:
        """Received `events_api` envelopes, optionally of one event type."""
        return [
            r
            for r in self.requests
            if r.type == "events_api"
            and (event_type is None or r.payload.get("event", {}).get("type") == event_type)
        ]

    async def close(self) -> None:
        """Close the client (its WebSocket and HTTP session)."""
        await self.client.close()


@pytest.fixture
async def simulator() -> AsyncIterator[SlackSimulator]:
    """A simulator with short ack timeouts and retry delays (Slack: 3 s; 0 s, 1 min, 5 min)."""
    sim = SlackSimulator(ack_timeout=0.4, retry_delays=(0.0, 0.05, 0.05))
    await sim.start()
    yield sim
    await sim.stop()


@pytest.fixture
async def socket_client(simulator: SlackSimulator) -> AsyncIterator[SocketClient]:
    """A connected slack_sdk Socket Mode client (it has received `hello`)."""
    client = SocketClient(simulator)
    await client.client.connect()
    await until(lambda: client.of_type("hello"), what="hello")
    yield client
    await client.close()


# --------------------------------------------------------------------------- the page


class Page:
    """The simulator's page, as HTTP calls (what simulator.js sends)."""

    def __init__(self, origin: str, http: aiohttp.ClientSession) -> None:
        self.origin = origin
        self.http = http

    async def get(self, path: str) -> tuple[int, Any]:
        """(status, JSON or text) of a GET."""
        async with self.http.get(self.origin + path) as response:
            if response.content_type == "application/json":
                return response.status, await response.json()
            return response.status, await response.text()

    async def post(self, path: str, body: Any) -> tuple[int, dict[str, Any]]:
        """(status, JSON) of a JSON POST."""
        async with self.http.post(self.origin + path, json=body) as response:
            return response.status, await response.json()

    async def state(self, user: str = ALICE) -> dict[str, Any]:
        """What the page loads for `user`."""
        status, data = await self.get(f"/sim/state?user={user}")
        assert status == 200
        return data

    async def say(
        self, user: str, text: str, *, thread_ts: str | None = None, channel: str = CHANNEL
    ) -> dict[str, Any]:
        """Type `text` in the composer (channel, or a thread's) and send it."""
        status, data = await self.post(
            "/sim/messages",
            {"user": user, "channel": channel, "text": text, "thread_ts": thread_ts},
        )
        assert status == 200 and data["ok"], data
        return data

    async def click(
        self, user: str, message: StoredMessage, action_id: str, *, value: str | None = None
    ) -> dict[str, Any]:
        """`user` clicks the button `action_id` on `message`."""
        body = {
            "user": user,
            "channel": message.channel,
            "message_ts": message.ts,
            "action_id": action_id,
        }
        if value is not None:
            body["value"] = value
        status, data = await self.post("/sim/actions", body)
        assert status == 200, data
        return data

    async def command(self, user: str, text: str, *, channel: str = CHANNEL) -> dict[str, Any]:
        """`user` runs a slash command (`/grace status`)."""
        status, data = await self.post(
            "/sim/commands", {"user": user, "channel": channel, "text": text}
        )
        assert status == 200, data
        return data


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    """A browser stand-in: one HTTP session per test."""
    async with aiohttp.ClientSession() as session:
        yield session


# --------------------------------------------------------------------------- grace dev


def dev_test_settings(data_dir: Path) -> Settings:
    """Embedded defaults, explicitly: offline model, local Qdrant and SQLite in `data_dir`.
    The plan is the edited message here (these tests read the thread message by message);
    the streamed plan in `grace dev`: tests/browser/test_plan_stream_page.py."""
    return Settings(
        data_dir=data_dir,
        database_url=None,
        google_api_key=None,
        qdrant_url=None,
        slack_bot_token=None,
        slack_signing_secret=None,
        slack_app_token=None,
        slack_api_url=None,
        approvers=[],
        log_format="text",
        llm=LLMSettings(provider="offline"),
        slack=SlackSettings(plan_display="message"),
    )


@contextlib.asynccontextmanager
async def start_dev(data_dir: Path, *, workspaces: int = 1) -> AsyncIterator[DevEnvironment]:
    """`grace dev` (`--workspaces N`) on `data_dir`, tuned for tests (fast pings and plan
    edits)."""
    settings = dev_test_settings(data_dir)
    async with dev_environment(settings, port=0, ping_interval=1.0, workspaces=workspaces) as env:
        env.bot.deps.publisher._min_interval = EDIT_INTERVAL
        yield env


@pytest.fixture
async def dev(tmp_path: Path) -> AsyncIterator[DevEnvironment]:
    """A running `grace dev`: simulator + the real GRACE bot over Socket Mode."""
    async with start_dev(tmp_path / "grace") as env:
        yield env


@pytest.fixture
def page(dev: DevEnvironment, http: aiohttp.ClientSession) -> Page:
    """The page of the running `grace dev`."""
    return Page(dev.simulator.origin, http)


async def refusals(calls: Iterable[Awaitable[Any]]) -> list[str]:
    """Await the Web API calls in turn; the Slack error of each refused one, in order."""
    errors: list[str] = []
    for call in calls:
        try:
            await call
        except SlackApiError as exc:
            errors.append(str(exc.response["error"]))
    return errors


async def settle(env: DevEnvironment) -> None:
    """Wait for the bot's work after acks and for the simulator's deliveries."""
    bot = env.bot
    for _ in range(100):
        await env.simulator.socket_mode.idle()
        await bot.deps.tasks.idle()
        await bot.deps.publisher.drain()
        if len(bot.deps.tasks) == 0 and not env.simulator.socket_mode.pending():
            return
    raise AssertionError("the bot never became idle")
