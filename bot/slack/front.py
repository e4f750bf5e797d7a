"""`grace serve`'s front process: the Slack endpoint, and nothing that can keep it busy.

The ack path is the front's whole job: read the request, check Slack's signature, store
the event in the durable inbox (one batched INSERT, committed before the ack) and answer.
The messages that start or answer runs — `app_mention`, `message`, and
`assistant_thread_started` — are taken here, by the same listeners as in one process
(bot/slack/listeners/events.py and assistant.py), which only check and store; a mention,
most of a burst, without Bolt's dispatch (bot/slack/mentions.py). The body is parsed
once, by the guard. Each stored
row is claimed by the worker process's owner id and handed to it at once over their
socket (`WorkerProcess.take`); the worker (bot/slack/worker.py) processes the inbox, drives
the runs, delivers the outbox and sweeps. Every other request — slash commands, clicks,
modals, the Home tab, OAuth pages, `/healthz` — is forwarded as it came to the worker's
own endpoint on 127.0.0.1 (a form, once its signature is checked, unparsed: the worker's
guard checks its body), which runs the full bot as `grace serve --one-process` does
(those requests need the knowledge base, which only one process may open).

Why a process and not a thread or a second event loop: a burst of 200 runs working in
the same interpreter delayed the next burst's acks (one GIL; measured in
docs/benchmarks.md).
"""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp import web
from multidict import CIMultiDict
from slack_bolt.adapter.aiohttp import to_aiohttp_response
from slack_bolt.async_app import AsyncApp
from slack_bolt.authorization import AuthorizeResult
from slack_sdk.web.async_client import AsyncWebClient
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.service.channels import ChannelService
from bot.service.settings import Settings
from bot.service.tasks import TaskRunner
from bot.service.worker_process import Ready, WorkerFailed, WorkerProcess
from bot.slack import http_guard, inbound
from bot.slack.app import bolt_app, make_slack_client
from bot.slack.identity import resolve_identity
from bot.slack.installs import build_oauth, sealer_of
from bot.slack.intake import Intake
from bot.slack.listeners import assistant, events
from bot.slack.mentions import MentionTaker
from bot.slack.runners import admitted_request, bolt_request_of, malformed
from storage.channel_settings import SqlChannelSettings
from storage.db import WriteGate, WriteHealth, make_engine, migrate
from storage.inbox import SqlInbox

log = logging.getLogger(__name__)

FRONT_EVENTS = frozenset({"app_mention", "message", "assistant_thread_started"})
"""Events the front stores itself; their listeners only check and store."""
HOP_BY_HOP = frozenset(
    {"host", "connection", "keep-alive", "transfer-encoding", "content-length", "upgrade"}
)
FORWARD_TIMEOUT_S = 30.0
"""OAuth pages, `/healthz` and other paths: how long the worker may take to answer."""
EVENTS_FORWARD_TIMEOUT_S = 2.5
"""A forwarded `/slack/events` request (a slash command, a click): Slack gives up on
it after 3 s, so a worker that has not answered by now gets a 503 in time."""


def event_type(body: Mapping[str, Any]) -> str | None:
    """The Events API event's type, None for anything else."""
    if body.get("type") != "event_callback":
        return None
    event = body.get("event")
    kind = event.get("type") if isinstance(event, dict) else None
    return kind if isinstance(kind, str) else None


@dataclass
class Front:
    """The front's parts: its own engine (one connection pool for the inbox writes), the
    intake that stores and hands over, the Bolt app with the storing listeners, and what
    takes mentions."""

    settings: Settings
    engine: AsyncEngine
    inbox: SqlInbox
    intake: Intake
    app: AsyncApp
    worker: WorkerProcess
    mentions: MentionTaker | AsyncApp
    """What takes `app_mention` events: with the bot's identity fixed (one workspace),
    no Bolt app at all (`MentionTaker`); in OAuth mode, whose requests Bolt authorizes
    per workspace, a Bolt app with the same listeners as `app` but without the assistant
    pane's middleware (which lets mentions through unchanged, after matching each of its
    listeners against them)."""
    forwarding: aiohttp.ClientSession = field(init=False)

    def __post_init__(self) -> None:
        self.forwarding = aiohttp.ClientSession(auto_decompress=False)

    def worker_ready(self, ready: Ready) -> None:
        """A (new) worker: rows stored from now on are claimed by it."""
        self.intake.owner = ready.owner

    async def close(self) -> None:
        await self.intake.close()
        await self.forwarding.close()
        await self.engine.dispose()

    async def forward(
        self,
        method: str,
        path: str,
        headers: Mapping[str, str],
        body: bytes,
        *,
        answer_within: float = FORWARD_TIMEOUT_S,
    ) -> web.StreamResponse:
        """The worker's answer to this request within `answer_within` seconds, or 503 (no
        worker, or no answer in time)."""
        ready = self.worker.ready
        if ready is None:
            return _unavailable("worker restarting")
        sent = {k: v for k, v in headers.items() if k.lower() not in HOP_BY_HOP}
        try:
            async with self.forwarding.request(
                method,
                f"http://127.0.0.1:{ready.port}{path}",
                data=body,
                headers=sent,
                allow_redirects=False,
                timeout=aiohttp.ClientTimeout(total=answer_within),
            ) as answer:
                payload = await answer.read()
                kept = CIMultiDict(
                    (k, v) for k, v in answer.headers.items() if k.lower() not in HOP_BY_HOP
                )
                return web.Response(status=answer.status, body=payload, headers=kept)
        except (aiohttp.ClientError, TimeoutError):
            log.warning("the worker process did not answer a forwarded request")
            return _unavailable("worker unavailable")


def _unavailable(reason: str) -> web.Response:
    return web.json_response({"ok": False, "status": "degraded", "reason": reason}, status=503)


async def create_front(
    settings: Settings, worker: WorkerProcess, gate: WriteGate | None = None
) -> Front:
    """The front's parts, storing for the worker's owner id as it is once they are
    built (a worker restarted meanwhile included); the inbox writes raise `gate`, which
    the worker's writes yield to."""
    url = settings.resolved_database_url
    await migrate(url)  # the worker did it already: one read
    engine = make_engine(url)
    try:
        health = WriteHealth()
        identity: AuthorizeResult | None = None
        if settings.oauth_mode:
            oauth = build_oauth(settings, engine, sealer=sealer_of(settings), health=health)
            client: AsyncWebClient = oauth.client
            oauth_settings = oauth.settings
        else:
            assert settings.slack_bot_token is not None  # the worker checked
            client = make_slack_client(
                settings.slack_bot_token.get_secret_value(), base_url=settings.slack_api_url
            )
            identity = await resolve_identity(
                client, wait_seconds=settings.slack.auth_timeout_seconds
            )
            oauth_settings = None
        inbox = SqlInbox(engine, health=health, first=gate)
        ready = worker.ready  # None while it restarts: its `Ready` names the owner
        intake = Intake(
            inbox=inbox,
            tasks=TaskRunner(1),
            processors={},
            owner=ready.owner if ready is not None else None,
            handed_to=worker.take,
        )
        channels = ChannelService(
            SqlChannelSettings(engine, health=health),
            settings,
            shared_thresholds=lambda: settings.confidence.thresholds,
        )
        bots = settings.slack.allowed_bots

        def register(app: AsyncApp) -> None:
            assistant.register(app, intake, bots)  # as in one process: assistant first
            events.register(app, intake, bots, channels)

        def register_mentions(app: AsyncApp) -> None:
            events.register(app, intake, bots, channels)

        secret = settings.slack_signing_secret
        assert secret is not None  # HTTP mode

        def app_with(listeners: Callable[[AsyncApp], None]) -> AsyncApp:
            return bolt_app(
                listeners,
                client=client,
                signing_secret=secret.get_secret_value(),
                identity=identity,
                oauth_settings=oauth_settings,
                signature_checked=True,  # front_http_app: the guard, then Bolt
            )

        mentions: MentionTaker | AsyncApp = (
            MentionTaker(intake, identity, bots)
            if identity is not None
            else app_with(register_mentions)
        )
        app = app_with(register)
    except BaseException:
        await engine.dispose()
        raise
    return Front(settings, engine, inbox, intake, app, worker, mentions=mentions)


def front_http_app(front: Front) -> web.Application:
    """`POST /slack/events`: the messages above stored here, the rest forwarded; every
    other path (`/healthz`, OAuth) forwarded to the worker."""
    settings = front.settings
    secret = settings.slack_signing_secret
    assert secret is not None
    limit = settings.slack.max_body_bytes

    async def slack_events(request: web.Request) -> web.StreamResponse:
        # Forms (slash commands, clicks) are forwarded unparsed: the worker's guard checks
        # their bodies. A JSON body is parsed here once and handed on.
        admitted = await admitted_request(
            request, secret.get_secret_value(), max_body_bytes=limit, check_forms=False
        )
        if isinstance(admitted, web.Response):
            return admitted
        body = admitted.json if admitted.parsed else None
        kind = event_type(body) if isinstance(body, dict) else None
        if kind not in FRONT_EVENTS:
            return await front.forward(
                request.method,
                request.path_qs,
                request.headers,
                admitted.raw,
                answer_within=EVENTS_FORWARD_TIMEOUT_S,
            )
        assert isinstance(body, dict)
        mentions = front.mentions
        if kind == "app_mention" and isinstance(mentions, MentionTaker):
            problem = inbound.request_problem(body)  # as `bolt_request_of` would refuse it
            return malformed(problem) if problem else await mentions.take(body)
        bolt_request = bolt_request_of(admitted, request)
        if isinstance(bolt_request, web.Response):
            return bolt_request
        app = mentions if kind == "app_mention" and isinstance(mentions, AsyncApp) else front.app
        return await to_aiohttp_response(await app.async_dispatch(bolt_request))

    async def healthz(request: web.Request) -> web.StreamResponse:
        if front.inbox.health.problem() is not None:  # the front's own inbox writes
            return _unavailable("database unavailable")
        return await front.forward("GET", request.path_qs, request.headers, b"")

    async def elsewhere(request: web.Request) -> web.StreamResponse:
        body = await http_guard.read_limited(request, limit)
        if body is None:
            return web.json_response({"error": "request body too large"}, status=413)
        return await front.forward(request.method, request.path_qs, request.headers, body)

    web_app = web.Application()
    web_app.on_response_prepare.append(http_guard.drop_server_header)
    web_app.router.add_post("/slack/events", slack_events)
    web_app.router.add_get("/healthz", healthz)
    web_app.router.add_route("*", "/{tail:.*}", elsewhere)
    return web_app


@dataclass
class FrontRuntime:
    """A started front: its worker ready, its endpoint bound."""

    front: Front
    runner: web.AppRunner
    port: int

    async def stop(self, grace: float) -> int | None:
        """Stop taking requests, hand over what was stored, stop the worker (it finishes
        or hands over its runs within `grace`); the worker's exit code."""
        self.front.worker.stopping()  # before the drain: a worker exiting now stays gone
        await self.runner.cleanup()
        await self.front.intake.flush()
        code = await self.front.worker.stop(grace)
        await self.front.close()
        return code


async def start_front(
    settings: Settings,
    *,
    port: int,
    host: str = "0.0.0.0",
    env: Mapping[str, str] | None = None,
    access_log: bool = True,
    stop: asyncio.Event | None = None,
) -> FrontRuntime:
    """Start the worker process (with `env`, default ours: it reads the same settings),
    wait until it is ready, then build the front and bind its endpoint. `WorkerFailed`
    when the worker exits at start-up (it said why, in one line). `stop` is the stop
    signal: from the moment it is set, a worker that exits is not replaced."""
    gate = WriteGate.create()  # the worker's writes yield to the front's inbox writes
    worker = WorkerProcess(env, gate=gate, stopping=stop)
    fronts: list[Front] = []

    def worker_ready(ready: Ready) -> None:  # registered first: no `Ready` goes unheard
        for front in fronts:
            front.worker_ready(ready)

    worker.on_ready.append(worker_ready)
    await worker.start()
    try:
        front = await create_front(settings, worker, gate)
    except BaseException:
        await worker.stop(0)
        raise
    fronts.append(front)  # no await since its intake read the worker's owner
    runner = web.AppRunner(front_http_app(front), **({} if access_log else {"access_log": None}))
    try:
        await runner.setup()
        site = web.TCPSite(runner, host, port)
        await site.start()
    except BaseException:
        await runner.cleanup()
        await worker.stop(0)
        await front.close()
        raise
    freeze_start_up_objects()
    return FrontRuntime(front, runner, int(runner.addresses[0][1]))


def freeze_start_up_objects() -> None:
    """Leave every object alive now — the imported modules, settings, Bolt apps, pools —
    out of the garbage collector's full collections from now on (`gc.freeze`): they
    live as long as the process, and scanning them (about 120,000 objects after the
    imports alone, 27 ms on this machine; up to 100 ms in the benchmark's process)
    paused the event loop, and every ack in flight, a few times per burst of requests."""
    gc.collect()
    gc.freeze()


async def serve_front(settings: Settings, *, port: int, host: str, stop: asyncio.Event) -> int:
    """`grace serve` (HTTP mode): the front here, the worker in a child process, until
    `stop` is set (SIGTERM, Ctrl-C) or the worker keeps failing (exit 1)."""
    try:
        runtime = await start_front(settings, port=port, host=host, stop=stop)
    except WorkerFailed as exc:
        return exc.code or 1
    log.info(
        "GRACE is up (HTTP mode, POST /slack/events); health on :%s/healthz; worker pid %s",
        runtime.port,
        runtime.front.worker.pid,
    )
    print(f"GRACE is up (HTTP mode, POST /slack/events) on port {runtime.port}", flush=True)
    failed = runtime.front.worker.failed
    waits = [asyncio.create_task(stop.wait()), asyncio.create_task(failed.wait())]
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in waits:
            task.cancel()
        code = await runtime.stop(settings.slack.shutdown_grace_seconds)
    if failed.is_set():
        return 1
    if code not in (0, None):
        log.error("the worker process exited with %s on shutdown", code)
    return 0
