"""`grace dev`: the real bot against a local Slack simulator, in one process.

Starts `SlackSimulator` (Web API, Socket Mode, a web page) on 127.0.0.1, then the real
bot from `create_bot` connected to it over Socket Mode with fake tokens — the same code
path as production Socket Mode, just another Slack. Embedded defaults: the offline model
(unless a Gemini key is configured), local Qdrant with the sample knowledge base ingested
when the collection is empty, SQLite — all under the data dir, with the simulator's
channel history in `<data dir>/simulator.json`. Paused runs live in the database, so a
restart keeps them answerable (button values and message ts survive).

`--workspaces 2` simulates installing to many workspaces (issue 21): the simulator holds
a second workspace, answers `oauth.v2.access` and shows Slack's authorize page, and the
bot runs in OAuth mode (the simulator's client id and secret, a Fernet key kept in the
data dir, the same database) with its install pages on the next port; each workspace's
questions are answered with the token its install gave.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from aiohttp import web
from pydantic import SecretStr

from agent.errors import InvalidInputError
from agent.knowledge.ingest import SAMPLE_KB_DIR, ingest_paths
from agent.ports import (
    Evaluation,
    EvaluationRequest,
    LanguageModel,
    LLMReply,
    PlanDraft,
    PlanRequest,
    ReasoningRequest,
)
from bot.service.settings import Settings
from bot.service.wiring import Services, build_models, build_services
from bot.simulator.oauth import FakeOAuth
from bot.simulator.server import PEOPLE, SECOND_PEOPLE, SlackSimulator, two_workspaces
from bot.simulator.socket_mode import SLACK_RETRY_DELAYS
from bot.slack import installs
from bot.slack.compose import Bot, create_bot
from bot.slack.runners import BotRuntime, start_bot, stop_on_signals
from storage.sealing import new_key

log = logging.getLogger(__name__)

DEV_BOT_TOKEN = "xoxb-dev"
DEV_APP_TOKEN = "xapp-dev"
STATE_FILE = "simulator.json"
TEAMS_STATE_FILE = "simulator-workspaces.json"
"""The two-workspace simulator's history: apart from the one-workspace one."""
KEY_FILE = "dev-encryption.key"
"""The Fernet key `grace dev --workspaces 2` seals the installations' tokens with."""


class PacedModel:
    """A language model that waits `pace` seconds before each call, answers unchanged.

    The offline model answers a whole run in a fraction of a second, so in `grace dev`
    the first thing anyone sees is the final state; `--pace 0.8` lets a person watch the
    plan message move step by step.
    """

    def __init__(self, model: LanguageModel, pace: float) -> None:
        self._model = model
        self.pace = pace

    @property
    def name(self) -> str:
        return self._model.name

    async def plan(self, request: PlanRequest) -> LLMReply[PlanDraft]:
        await asyncio.sleep(self.pace)
        return await self._model.plan(request)

    async def reason(self, request: ReasoningRequest) -> LLMReply[str]:
        await asyncio.sleep(self.pace)
        return await self._model.reason(request)

    async def evaluate(self, request: EvaluationRequest) -> LLMReply[Evaluation]:
        await asyncio.sleep(self.pace)
        return await self._model.evaluate(request)


def dev_settings(settings: Settings, api_url: str) -> Settings:
    """The user's settings with Slack pointed at the simulator (no signing secret needed)."""
    return settings.model_copy(
        update={
            "slack_bot_token": SecretStr(DEV_BOT_TOKEN),
            "slack_app_token": SecretStr(DEV_APP_TOKEN),
            "slack_signing_secret": None,
            "slack_api_url": api_url,
        }
    )


def oauth_dev_settings(
    settings: Settings, api_url: str, oauth: FakeOAuth, redirect_uri: str
) -> Settings:
    """The user's settings in OAuth mode against the simulator: its client, the dev
    database, a Fernet key generated once into the data dir."""
    key_path = settings.data_dir / KEY_FILE
    if not key_path.exists():
        key_path.write_text(new_key())
        key_path.chmod(0o600)
    return settings.model_copy(
        update={
            "slack_bot_token": None,
            "slack_app_token": SecretStr(DEV_APP_TOKEN),
            "slack_signing_secret": None,
            "slack_api_url": api_url,
            "slack_client_id": oauth.client_id,
            "slack_client_secret": SecretStr(oauth.client_secret),
            "slack_redirect_uri": redirect_uri,
            "encryption_key": SecretStr(key_path.read_text().strip()),
        }
    )


async def ensure_sample_kb(services: Services) -> int:
    """Ingest the shipped sample KB when the default collection is empty; chunks added."""
    kb = services.knowledge_base
    if await kb.count(kb.default_collection) > 0:
        await kb.warn_if_stale(kb.default_collection)  # at start-up, not at the first question
        return 0
    reports = await ingest_paths(kb, [SAMPLE_KB_DIR], collection=kb.default_collection)
    return sum(r.chunks for r in reports)


@dataclass
class DevEnvironment:
    """A running `grace dev`: the simulator and the bot connected to it."""

    simulator: SlackSimulator
    runtime: BotRuntime
    settings: Settings
    ingested: int
    install_url: str | None = None
    """`--workspaces 2`: GRACE's own "Add to Slack" page."""

    @property
    def bot(self) -> Bot:
        """The real GRACE bot (services, deps, Bolt app)."""
        return self.runtime.bot

    @property
    def state_path(self) -> Path:
        """Where the simulator keeps its channel history."""
        return self.settings.data_dir / STATE_FILE


@contextlib.asynccontextmanager
async def dev_environment(
    settings: Settings,
    *,
    port: int = 3000,
    host: str = "127.0.0.1",
    ack_timeout: float = 3.0,
    retry_delays: tuple[float, ...] = SLACK_RETRY_DELAYS,
    ping_interval: float = 10.0,
    pace: float = 0.0,
    refuse_streaming: bool = False,
    workspaces: int = 1,
) -> AsyncIterator[DevEnvironment]:
    """Start the simulator, then the bot over Socket Mode; stop both on exit.

    `pace` > 0 wraps the model in `PacedModel` (seconds to wait before each call);
    `refuse_streaming` makes the simulated workspace refuse `chat.startStream` (as a
    workspace without streaming does), so the plan is the edited message. `workspaces`
    2: two workspaces and the bot in OAuth mode, installed from the page (see above).
    """
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    many = workspaces > 1
    simulator = SlackSimulator(
        two_workspaces() if many else None,
        state_path=settings.data_dir / (TEAMS_STATE_FILE if many else STATE_FILE),
        host=host,
        port=port,
        ack_timeout=ack_timeout,
        retry_delays=retry_delays,
    )
    if refuse_streaming:
        simulator.workspace.refuse_streaming = "feature_not_enabled"
    install_site: socket.socket | None = None
    install_url: str | None = None
    oauth = FakeOAuth()
    if many:  # GRACE's install pages listen beside the simulator (the next port)
        try:
            install_site = socket.create_server((host, port + 1 if port else 0))
        except OSError as exc:
            raise InvalidInputError(
                f"Port {port + 1} (GRACE's install pages, beside the simulator's {port}) is "
                f"unavailable: {exc.strerror}. Pick another --port."
            ) from exc
        origin = f"http://{public_host(host)}:{install_site.getsockname()[1]}"
        install_url = origin + installs.INSTALL_PATH
        simulator.enable_installs(oauth, install_url)
    try:
        await simulator.start()
    except BaseException:
        if install_site is not None:
            install_site.close()
        raise
    async with contextlib.AsyncExitStack() as stack:
        stack.push_async_callback(simulator.stop)
        if install_site is not None:
            stack.callback(install_site.close)
            assert install_url is not None
            redirect = install_url.replace(installs.INSTALL_PATH, installs.REDIRECT_PATH)
            bot_settings = oauth_dev_settings(settings, simulator.base_url, oauth, redirect)
        else:
            bot_settings = dev_settings(settings, simulator.base_url)
        paced = PacedModel(build_models(bot_settings)[0], pace) if pace > 0 else None
        services = await build_services(bot_settings, llm=paced)
        try:
            ingested = await ensure_sample_kb(services)
            bot = await create_bot(bot_settings, services=services)
        except BaseException:
            await services.close()
            raise
        try:
            runtime = await start_bot(bot, app_token=DEV_APP_TOKEN, ping_interval=ping_interval)
        except BaseException:
            await bot.close()
            raise
        stack.push_async_callback(runtime.stop)
        if install_site is not None:
            stack.push_async_callback(await serve_installs(bot, install_site))
        await simulator.socket_mode.wait_connected(limit=30)
        yield DevEnvironment(
            simulator=simulator,
            runtime=runtime,
            settings=bot_settings,
            ingested=ingested,
            install_url=install_url,
        )


def public_host(host: str) -> str:
    """The host a browser on this machine reaches a server listening on `host` at."""
    return "127.0.0.1" if host in ("0.0.0.0", "") else host


async def serve_installs(bot: Bot, sock: socket.socket) -> Callable[[], Awaitable[None]]:
    """GRACE's `/slack/install` and `/slack/oauth_redirect` (the very routes of `grace
    serve`) on `sock`; returns what stops them."""
    web_app = web.Application()
    installs.add_routes(web_app, bot.app)
    runner = web.AppRunner(web_app, access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    await web.SockSite(runner, sock).start()
    return runner.cleanup


def pace_note(env: DevEnvironment) -> str:
    """` (paced: 0.8 s per call)` when the model is slowed down."""
    llm = env.bot.services.llm
    return f" (paced: {llm.pace:g} s per call)" if isinstance(llm, PacedModel) else ""


def banner(env: DevEnvironment) -> str:
    """What `grace dev` prints once everything is up."""
    people = ", ".join(f"{name} ({uid})" for uid, name in PEOPLE)
    lines = [
        f"GRACE dev: open {env.simulator.url}",
        f"  Slack simulator: Web API {env.simulator.base_url}, Socket Mode connected",
        f"  model: {env.bot.services.llm.name}{pace_note(env)} · "
        f"data: {env.settings.data_dir.resolve()}",
        f"  people: {people} · try “@grace How many vacation days do new employees get?”",
        "  Ctrl-C to stop; history and paused runs are kept for the next start.",
    ]
    if env.install_url is not None:
        others = ", ".join(f"{name} ({uid})" for uid, name in SECOND_PEOPLE)
        lines[4:4] = [
            f"  second workspace: {others}",
            f"  OAuth mode: Add to Slack on the page installs GRACE ({env.install_url})",
        ]
    if env.ingested:
        lines.insert(2, f"  ingested the sample knowledge base ({env.ingested} chunks)")
    if env.runtime.recovered:
        lines.insert(2, f"  resumed {env.runtime.recovered} interrupted run(s)")
    return "\n".join(lines)


async def run_dev(
    settings: Settings,
    *,
    port: int = 3000,
    host: str = "127.0.0.1",
    stop: asyncio.Event | None = None,
    pace: float = 0.0,
    refuse_streaming: bool = False,
    workspaces: int = 1,
) -> int:
    """`grace dev`: run until Ctrl-C (or `stop` is set)."""
    stop = stop or stop_on_signals()
    try:
        async with dev_environment(
            settings,
            port=port,
            host=host,
            pace=pace,
            refuse_streaming=refuse_streaming,
            workspaces=workspaces,
        ) as env:
            print(banner(env), flush=True)
            await stop.wait()
            print("GRACE dev: stopping…", flush=True)
    except OSError as exc:
        if exc.errno in (98, 48):  # EADDRINUSE on Linux / macOS
            raise InvalidInputError(
                f"Port {port} is in use: stop what runs there or pick another with --port."
            ) from exc
        raise
    return 0
