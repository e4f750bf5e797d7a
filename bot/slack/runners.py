"""Running the bot (built by `bot.slack.compose`): HTTP mode (Events API, interactivity
and slash commands on one endpoint, plus `/healthz`) or Socket Mode when
`SLACK_APP_TOKEN` is set. `grace serve` in HTTP mode splits the bot in two processes
(bot/slack/front.py); `serve_one_process` is the whole bot in one.

On start-up a runner recovers runs a dead process left RUNNING and starts the expiry
sweeper (`start_bot`, shared by `serve` and `grace dev`); on shutdown it waits for
in-flight runs.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from dataclasses import dataclass

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response
from slack_bolt.adapter.socket_mode.aiohttp import AsyncSocketModeHandler
from slack_bolt.request.async_request import AsyncBoltRequest

from bot.service.knowledge_sync import sync_forever
from bot.service.settings import Settings
from bot.service.sweeper import sweep_forever
from bot.service.teams import forget_uninstalled_forever
from bot.slack import http_guard, inbound, installs
from bot.slack.compose import Bot, create_bot
from bot.slack.reminders import remind_forever

log = logging.getLogger(__name__)


async def checked_request(
    request: web.Request, secret: str, *, max_body_bytes: int
) -> AsyncBoltRequest | web.Response:
    """A Slack request that passed the guard (size, signature, body) and parses as one,
    or the response that refuses it — the same check in front of either layout's Bolt."""
    admitted = await admitted_request(request, secret, max_body_bytes=max_body_bytes)
    if isinstance(admitted, web.Response):
        return admitted
    return bolt_request_of(admitted, request)


async def admitted_request(
    request: web.Request, secret: str, *, max_body_bytes: int, check_forms: bool = True
) -> http_guard.Accepted | web.Response:
    """What the guard accepted (bot/slack/http_guard.py), or the response refusing it."""
    admitted = await http_guard.admit(
        request, secret, max_body_bytes=max_body_bytes, check_forms=check_forms
    )
    if isinstance(admitted, http_guard.Refusal):
        # No body, no traceback: a flood of junk must not flood the logs either.
        log.debug("refused a request: %s", admitted.reason)
        return admitted.response()
    return admitted


def bolt_request_of(
    admitted: http_guard.Accepted, request: web.Request
) -> AsyncBoltRequest | web.Response:
    """The Bolt request for what the guard accepted (its JSON not parsed again), or a 400
    for a body that is not a well-formed Slack request."""
    bolt_request, problem = inbound.parse(
        admitted, query=request.query_string, headers=request.headers
    )
    if bolt_request is None:
        return malformed(problem)
    return bolt_request


def malformed(problem: str) -> web.Response:
    """The 400 for a signed body that is not a well-formed Slack request."""
    log.warning("malformed Slack request: %s", problem)
    return web.json_response({"error": f"malformed request: {problem}"}, status=400)


def http_app(bot: Bot) -> web.Application:
    """`POST /slack/events` (HTTP mode only: it needs the signing secret) and `/healthz`."""
    settings = bot.deps.settings
    secret = settings.slack_signing_secret

    async def slack_events(request: web.Request) -> web.Response:
        assert secret is not None
        bolt_request = await checked_request(
            request, secret.get_secret_value(), max_body_bytes=settings.slack.max_body_bytes
        )
        if isinstance(bolt_request, web.Response):
            return bolt_request
        bolt_response = await bot.app.async_dispatch(bolt_request)
        return await to_aiohttp_response(bolt_response)

    async def healthz(request: web.Request) -> web.Response:
        # Degraded while the database does not take writes (they are being retried);
        # a short reason only, never exception text (it can carry SQL or run ids).
        reason = bot.services.store.health.problem()
        if reason is None:
            try:
                await bot.services.store.runs.list_runs(limit=1)
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
    installs.add_routes(web_app, bot.app)  # OAuth mode: /slack/install, /slack/oauth_redirect
    return web_app


SOCKET_CLOSE_S = 10.0
"""How long a stop waits for the Socket Mode client to close: slack_sdk's aiohttp client
can wait on its own reconnect or monitor tasks, and Ctrl-C must still stop the bot."""


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
            try:
                await asyncio.wait_for(self.socket_handler.close_async(), SOCKET_CLOSE_S)
            except TimeoutError:
                log.warning(
                    "the Socket Mode connection did not close within %.0f s; stopping anyway",
                    SOCKET_CLOSE_S,
                )
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
    """The expiry/recovery sweep, every few seconds the inbox and outbox: requests and
    deliveries left behind (a retry timer lost with its process, a failed step), and
    when configured the scheduled knowledge sync."""

    async def inbox_and_outbox() -> None:
        while True:
            await asyncio.sleep(inbox_interval)
            try:
                await bot.intake.resume()
                await bot.deps.publisher.resume()
            except Exception:  # a database fault: the next pass tries again
                log.exception("inbox/outbox sweep failed")

    jobs = [
        sweep_forever(bot.services, sweep_interval),
        inbox_and_outbox(),
        remind_forever(bot.deps, sweep_interval),  # escalations' experts, once
    ]
    installations = bot.deps.installations
    if installations is not None:  # OAuth mode: uninstalled teams' data, once it is due
        days = bot.services.settings.slack.uninstalled_retention_days
        jobs.append(forget_uninstalled_forever(installations, days, sweep_interval))
    minutes = bot.services.settings.knowledge.sync_interval_minutes
    if minutes > 0:  # GRACE_KNOWLEDGE__SYNC_INTERVAL_MINUTES: `grace sync` on a schedule
        jobs.append(sync_forever(bot.services, minutes))
    await asyncio.gather(*jobs)


def stop_on_signals() -> asyncio.Event:
    """An event set by Ctrl-C (SIGINT) or SIGTERM: what runners wait on."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    return stop


async def serve(
    settings: Settings,
    *,
    port: int | None = None,
    host: str = "0.0.0.0",
    one_process: bool = False,
) -> int:
    """`grace serve`: in HTTP mode a front process that only checks, stores and acks, and
    a worker child process for everything else (bot/slack/front.py); in Socket Mode, or
    with `one_process`, the whole bot in this process."""
    bound = settings.slack.port if port is None else port
    if not one_process and settings.slack_app_token is None:
        from bot.slack.front import serve_front

        return await serve_front(settings, port=bound, host=host, stop=stop_on_signals())
    return await serve_one_process(settings, port=bound, host=host)


async def serve_one_process(settings: Settings, *, port: int, host: str) -> int:
    """The whole bot in this process: endpoint, agent, outbox and sweeper on one loop."""
    bot = await create_bot(settings)
    stop = stop_on_signals()
    runner = web.AppRunner(http_app(bot))
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    bound = int(runner.addresses[0][1])  # `--port 0`: the port the system picked
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
        bound,
        runtime.recovered,
    )
    print(f"GRACE is up ({mode}) on port {bound}", flush=True)
    try:
        await stop.wait()
    finally:
        await runner.cleanup()
        await runtime.stop(settings.slack.shutdown_grace_seconds)
    return 0
