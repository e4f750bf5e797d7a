"""Running the bot: HTTP mode (Events API, interactivity and slash commands on one
endpoint, plus `/healthz`) or Socket Mode when `SLACK_APP_TOKEN` is set.

On start-up a runner recovers runs a dead process left RUNNING and starts the expiry
sweeper (`start_bot`, shared by `serve` and `grace dev`); on shutdown it waits for
in-flight runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from dataclasses import dataclass

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response
from slack_bolt.adapter.socket_mode.aiohttp import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp

from agent.errors import InvalidInputError
from bot import http_guard, inbound
from bot.app import build_app, make_slack_client
from bot.conversation import register_processors
from bot.deps import BotDeps
from bot.identity import resolve_identity
from bot.intake import Intake
from bot.plan_stream import PlanStreamer, StreamChoices
from bot.settings import Settings
from bot.slack_io import SlackPublisher
from bot.sweeper import adopt_abandoned, sweep_forever
from bot.tasks import TaskRunner
from bot.wiring import Services, build_services

log = logging.getLogger(__name__)


@dataclass
class Bot:
    services: Services
    deps: BotDeps
    app: AsyncApp

    async def recover(self) -> int:
        """Take over runs whose worker died (at-least-once for the interrupted step) and
        drive them on in the background; runs another live replica drives are left alone.
        Then process what a dead process left in the inbox, and deliver what it left in
        the outbox."""
        adopted = await adopt_abandoned(self.services)
        for state in adopted:
            self.deps.tasks.spawn(
                self.services.orchestrator.run_adopted(state), name=f"recover {state.run_id}"
            )
        left = await self.deps.intake.resume()
        undelivered = await self.deps.publisher.resume()
        if left or undelivered:
            log.warning(
                "resumed %d Slack requests and %d undelivered runs left by an earlier process",
                left,
                undelivered,
            )
        return len(adopted)

    async def close(self, grace: float | None = None) -> None:
        """Wait for in-flight work — at most `grace` seconds, then stop it — hand the
        runs this process still holds to the next one, and close."""
        await self.deps.intake.flush()
        if grace is None:
            await self.deps.tasks.idle()
        else:
            stopped = await self.deps.tasks.shutdown(grace)
            if stopped:
                log.warning("stopped %d tasks still running after %.0f s", stopped, grace)
        released = await self.services.orchestrator.release_leases()
        if released:
            log.warning("handed %d unfinished runs to the next process", len(released))
        # Deliver what is scheduled (answers that are ready should not wait for the next
        # process), but never wait out a long outage: the outbox keeps the rest.
        limit = 60.0 if grace is None else min(10.0, max(grace, 1.0))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.deps.publisher.drain(), timeout=limit)
        await self.deps.publisher.close()  # what is left stays in the outbox
        await self.deps.intake.close()
        await self.services.close()


async def create_bot(settings: Settings, *, services: Services | None = None) -> Bot:
    """Wire the Slack app to the agent. Raises `InvalidInputError` for missing tokens, and
    a `GraceError` when Slack cannot tell who the bot is (asked once, here)."""
    if settings.slack_bot_token is None:
        raise InvalidInputError(
            "SLACK_BOT_TOKEN is not set. Create the app from manifest.yml, install it to "
            "your workspace and export its Bot User OAuth Token (xoxb-…)."
        )
    if settings.slack_app_token is None and settings.slack_signing_secret is None:
        raise InvalidInputError(
            "Set SLACK_SIGNING_SECRET for HTTP mode (Basic Information → Signing Secret), "
            "or SLACK_APP_TOKEN (xapp-…) for Socket Mode."
        )
    client = make_slack_client(
        settings.slack_bot_token.get_secret_value(), base_url=settings.slack_api_url
    )
    identity = await resolve_identity(client, wait_seconds=settings.slack.auth_timeout_seconds)
    services = services or await build_services(settings)
    delivery_client = make_slack_client(
        settings.slack_bot_token.get_secret_value(),
        base_url=settings.slack_api_url,
        timeout=settings.slack.request_timeout_seconds,
        retries=False,
    )
    publisher = SlackPublisher(
        client=delivery_client,
        store=services.store,
        deliveries=services.deliveries,
        delivery_deadline=settings.slack.delivery_deadline_seconds,
        streams=PlanStreamer(
            client=delivery_client,
            display=settings.slack.plan_display,
            choices=StreamChoices(services.store),
        ),
    )
    services.orchestrator.observers.append(publisher)
    tasks = TaskRunner(settings.slack.max_concurrent_runs)
    tasks.acks.watch(services.engine)
    intake = Intake(inbox=services.inbox, tasks=tasks)
    deps = BotDeps(
        settings=settings,
        orchestrator=services.orchestrator,
        store=services.store,
        ledger=services.ledger,
        publisher=publisher,
        intake=intake,
        tasks=tasks,
    )
    register_processors(deps)
    secret = settings.slack_signing_secret
    app = build_app(
        deps,
        client=client,
        signing_secret=secret.get_secret_value() if secret else None,
        identity=identity,
    )
    return Bot(services=services, deps=deps, app=app)


def http_app(bot: Bot) -> web.Application:
    """`POST /slack/events` (HTTP mode only: it needs the signing secret) and `/healthz`."""
    settings = bot.deps.settings
    secret = settings.slack_signing_secret

    async def slack_events(request: web.Request) -> web.Response:
        with bot.deps.tasks.acks.ack():  # agent runs wait between steps meanwhile
            return await acknowledge(request)

    async def acknowledge(request: web.Request) -> web.Response:
        assert secret is not None
        admitted = await http_guard.admit(
            request, secret.get_secret_value(), max_body_bytes=settings.slack.max_body_bytes
        )
        if isinstance(admitted, http_guard.Refusal):
            # No body, no traceback: a flood of junk must not flood the logs either.
            log.debug("refused a request: %s", admitted.reason)
            return admitted.response()
        bolt_request, problem = inbound.parse(
            admitted.text, query=request.query_string, headers=request.headers
        )
        if bolt_request is None:
            log.warning("malformed Slack request: %s", problem)
            return web.json_response({"error": f"malformed request: {problem}"}, status=400)
        bolt_response = await bot.app.async_dispatch(bolt_request)
        return await to_aiohttp_response(bolt_response)

    async def healthz(request: web.Request) -> web.Response:
        # Degraded while the database does not take writes (they are being retried);
        # a short reason only, never exception text (it can carry SQL or run ids).
        reason = bot.services.store.health.problem()
        if reason is None:
            try:
                await bot.services.store.list_runs(limit=1)
            except Exception:
                log.exception("health check: reading the database failed")
                reason = "database unavailable"
        if reason is None:
            try:
                await bot.services.knowledge_base.collections()
            except Exception:
                log.exception("health check: the knowledge base failed")
                reason = "knowledge base unavailable"
        if reason is not None:
            return web.json_response(
                {"ok": False, "status": "degraded", "reason": reason}, status=503
            )
        return web.json_response({"ok": True, "model": bot.services.llm.name})

    web_app = web.Application()
    web_app.on_response_prepare.append(http_guard.drop_server_header)
    if secret is not None:
        # Without a signing secret Bolt cannot verify requests (Socket Mode): no endpoint.
        web_app.router.add_post("/slack/events", slack_events)
    web_app.router.add_get("/healthz", healthz)
    return web_app


@dataclass
class BotRuntime:
    """A started bot: runs recovered, the expiry sweeper running, and in Socket Mode the
    connection to Slack. `stop()` undoes it all and waits for in-flight runs."""

    bot: Bot
    recovered: int
    sweeper: asyncio.Task[None]
    socket_handler: AsyncSocketModeHandler | None = None

    @property
    def mode(self) -> str:
        """How Slack reaches this bot, for the start-up line."""
        return "Socket Mode" if self.socket_handler is not None else "HTTP mode"

    async def stop(self, grace: float | None = None) -> None:
        """Sweeper, then the socket (no new work), then the bot (waits for runs, at most
        `grace` seconds when given)."""
        self.sweeper.cancel()
        await asyncio.gather(self.sweeper, return_exceptions=True)
        if self.socket_handler is not None:
            await self.socket_handler.close_async()
        await self.bot.close(grace)


async def start_bot(
    bot: Bot,
    *,
    app_token: str | None = None,
    sweep_interval: float = 60.0,
    ping_interval: float = 10.0,
) -> BotRuntime:
    """What every runner does once the bot is built (`serve` and `grace dev` share it):
    resume runs a dead process left RUNNING, start the expiry sweeper and, with an
    app-level token, connect over Socket Mode (to `settings.slack_api_url`'s Slack)."""
    recovered = await bot.recover()
    sweeper = asyncio.create_task(_upkeep(bot, sweep_interval), name="sweeper")
    runtime = BotRuntime(bot=bot, recovered=recovered, sweeper=sweeper)
    if app_token is not None:
        runtime.socket_handler = AsyncSocketModeHandler(
            bot.app, app_token, ping_interval=ping_interval
        )
        try:
            await runtime.socket_handler.connect_async()
        except BaseException:  # the caller still owns the bot: undo only what we started
            sweeper.cancel()
            await asyncio.gather(sweeper, return_exceptions=True)
            await runtime.socket_handler.close_async()
            raise
    return runtime


async def _upkeep(bot: Bot, sweep_interval: float, inbox_interval: float = 5.0) -> None:
    """The expiry/recovery sweep, and every few seconds the inbox and outbox: requests
    and deliveries left behind (a retry timer lost with its process, a failed step)."""

    async def inbox_and_outbox() -> None:
        while True:
            await asyncio.sleep(inbox_interval)
            try:
                await bot.deps.intake.resume()
                await bot.deps.publisher.resume()
            except Exception:  # a database fault: the next pass tries again
                log.exception("inbox/outbox sweep failed")

    await asyncio.gather(sweep_forever(bot.services, sweep_interval), inbox_and_outbox())


def stop_on_signals() -> asyncio.Event:
    """An event set by Ctrl-C (SIGINT) or SIGTERM: what runners wait on."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    return stop


async def serve(settings: Settings, *, port: int | None = None, host: str = "0.0.0.0") -> int:
    bot = await create_bot(settings)
    stop = stop_on_signals()
    runner = web.AppRunner(http_app(bot))
    await runner.setup()
    site = web.TCPSite(runner, host, port or settings.slack.port)
    await site.start()
    app_token = settings.slack_app_token
    try:
        runtime = await start_bot(
            bot, app_token=app_token.get_secret_value() if app_token else None
        )
    except BaseException:
        await runner.cleanup()
        await bot.close()
        raise
    mode = runtime.mode if app_token is not None else "HTTP mode, POST /slack/events"
    log.info(
        "GRACE is up (%s); health on :%s/healthz; %d runs recovered",
        mode,
        port or settings.slack.port,
        runtime.recovered,
    )
    print(f"GRACE is up ({mode}) on port {port or settings.slack.port}", flush=True)
    try:
        await stop.wait()
    finally:
        await runner.cleanup()
        await runtime.stop(settings.slack.shutdown_grace_seconds)
    return 0
