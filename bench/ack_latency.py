"""Ack latency: how fast GRACE answers Slack's HTTP requests, next to a bare Bolt app.

    python -m bench.ack_latency [--events 200] [--rounds 3] [--warmup 5]
                                [--backend sqlite|postgresql|both] [--one-process]

Slack wants every event acknowledged within 3 s, and GRACE stores each event in its
durable inbox before it acks (so an acked question survives a crash). This sends bursts
of N concurrent, correctly signed `app_mention` events (distinct event ids and threads)
to two servers, built the same way (aiohttp on 127.0.0.1:0):

- bare: a slack_bolt `AsyncApp` with the same signing secret and a no-op `app_mention`
  listener (Bolt's defaults), behind `to_bolt_request` / `to_aiohttp_response`, in this
  process;
- GRACE as `grace serve` runs it: the front (`bot.slack.front.start_front`: signature,
  inbox write, ack) in this process, and its worker child process (inbox, agent runs,
  outbox, sweeper) — on a temporary data dir with the sample knowledge base ingested and
  the offline model, on SQLite or a throw-away PostgreSQL (`tests.databases`); every
  event starts a real agent run. `--one-process` runs the whole bot in this process
  instead (`grace serve --one-process`), for comparison.

Each round sends burst A, then, as soon as A is acked, burst B — for GRACE while A's
agent runs are still working (their number is printed), so B shows whether the agent's
work starves the ack. It prints p50/p95/p99 of the time until each HTTP response per
burst, the CPU time the apps' event loop thread and GRACE's worker used during the burst, the ratio
GRACE/bare in the same round, the pooled ratios, and a verdict on the target "GRACE's
p99 within 1.25x of the bare app's" from the median over rounds of the same-round p99
ratio (one stall of either app in one round does not decide it). It also prints the
inbox write the ack waits for (p50/p99) and how late this process's event loop ran
during GRACE's bursts (its lag, p50/p99/max). Slack's Web API (the fake) runs in a
process of its own — Slack is not on GRACE's machine — and the event sender in its own
thread and event loop. It is a benchmark: the exit code is 0 whatever the numbers.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import logging
import math
import multiprocessing
import os
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator, Coroutine, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Protocol, TypeVar

import aiohttp
from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from agent.knowledge.ingest import SAMPLE_KB_DIR, ingest_paths
from bot.service.settings import LLMSettings, Settings
from bot.service.wiring import build_services
from bot.simulator.requests import (
    JSON_CONTENT_TYPE,
    app_mention_envelope,
    json_body,
    signed_headers,
)
from bot.simulator.webapi import FakeSlack
from bot.slack.compose import Bot, create_bot
from bot.slack.front import FrontRuntime, start_front
from bot.slack.runners import http_app
from storage.inbox import InboxItem, SqlInbox
from storage.run_store import SqlRunStore
from tests.databases import Cluster, fresh_database
from tests.faults.helpers import unsettled

SECRET = "bench-signing-secret-0123456789abcdef"
BOT_TOKEN = "xoxb-bench-0001"
QUESTION = "How many vacation days do new employees get?"
TARGET_RATIO = 1.25
EVENTS_PATH = "/slack/events"
BURSTS = ("A", "B")
"""Per round: burst A, then burst B as soon as A is acked (GRACE: while A's runs work)."""
BACKENDS = ("sqlite", "postgresql")
SETTLE_TIMEOUT_S = 600.0
LAG_TICK_S = 0.005

T = TypeVar("T")
_threads = itertools.count(1)
"""Every event gets a thread (message ts) of its own, across bursts and rounds: the inbox
refuses the same message twice, whatever its event id."""


# --------------------------------------------------------------------------- Slack's side


def _fake_slack_process(conn: Connection) -> None:
    """The fake Slack Web API, in a process of its own until told to stop."""

    async def main() -> None:
        async with FakeSlack() as fake:
            conn.send(fake.base_url)
            await asyncio.to_thread(conn.recv)

    asyncio.run(main())


class SlackSide:
    """The fake Slack Web API (its own process: the worker's hundreds of calls per burst
    must not load the front's process, as Slack's servers do not) and the event sender
    (its own thread and event loop in this process)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="slack", daemon=True)
        context = multiprocessing.get_context("spawn")
        self._conn, child = context.Pipe()
        self.process = context.Process(target=_fake_slack_process, args=(child,), daemon=True)
        self.base_url = ""

    async def __aenter__(self) -> SlackSide:
        self.thread.start()
        self.process.start()
        self.base_url = await asyncio.to_thread(self._conn.recv)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._conn.send("stop")
        await asyncio.to_thread(self.process.join, 10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)
        self.loop.close()

    async def call(self, work: Coroutine[Any, Any, T]) -> T:
        """Run `work` on the sender's loop; the caller's loop keeps serving meanwhile."""
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(work, self.loop))


@dataclass
class Request:
    body: str
    headers: dict[str, str]


def mention_requests(count: int, prefix: str) -> list[Request]:
    """`count` signed app_mention events, each in its own thread with its own event id,
    asked by as many people (a burst is a workspace, not one person: GRACE caps runs per
    person per minute)."""
    requests = []
    for n in range(count):
        thread = next(_threads)
        envelope = app_mention_envelope(
            text=QUESTION,
            user=f"U{thread:09d}",
            ts=f"{1_700_000_000 + thread}.000100",
            event_id=f"Ev{prefix}{n:06d}",
        )
        body = json_body(envelope)
        requests.append(Request(body, signed_headers(SECRET, body, content_type=JSON_CONTENT_TYPE)))
    return requests


async def blast(url: str, requests: Sequence[Request]) -> tuple[list[float], list[int]]:
    """Send all requests at once; per request, seconds until its response was read."""
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def one(request: Request) -> tuple[float, int]:
            started = time.perf_counter()
            async with session.post(
                url, data=request.body.encode(), headers=request.headers
            ) as response:
                await response.read()
                return time.perf_counter() - started, response.status

        results = await asyncio.gather(*(one(r) for r in requests))
    return [r[0] for r in results], [r[1] for r in results]


# --------------------------------------------------------------------------- the apps


def bare_endpoint(base_url: str) -> web.Application:
    """A bare Bolt app (no-op listener, Bolt's defaults) served like ours."""
    app = AsyncApp(client=AsyncWebClient(token=BOT_TOKEN, base_url=base_url), signing_secret=SECRET)

    @app.event("app_mention")
    async def noop(body: dict[str, Any]) -> None:
        return None

    async def slack_events(request: web.Request) -> web.Response:
        bolt_response = await app.async_dispatch(await to_bolt_request(request))
        return await to_aiohttp_response(bolt_response)

    web_app = web.Application()
    web_app.router.add_post(EVENTS_PATH, slack_events)
    return web_app


@dataclass
class Server:
    runner: web.AppRunner
    url: str

    @classmethod
    async def start(cls, web_app: web.Application) -> Server:
        runner = web.AppRunner(web_app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = int(runner.addresses[0][1])
        return cls(runner, f"http://127.0.0.1:{port}{EVENTS_PATH}")

    async def stop(self) -> None:
        await self.runner.cleanup()


def bot_settings(data_dir: Path, base_url: str, database_url: str | None) -> Settings:
    return Settings(
        _env_file=None,  # type: ignore[call-arg]
        data_dir=data_dir,
        database_url=database_url,
        slack_bot_token=BOT_TOKEN,
        slack_signing_secret=SECRET,
        slack_api_url=base_url,
        llm=LLMSettings(provider="offline"),
        log_format="text",
        log_level="WARNING",
    )


def worker_env(data_dir: Path, base_url: str, database_url: str | None) -> dict[str, str]:
    """The worker process's environment: the same settings as `bot_settings`, read as
    `grace serve`'s worker reads them (nothing else GRACE_*/SLACK_* from ours)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("GRACE_", "SLACK_")) and k not in ("GOOGLE_API_KEY", "QDRANT_URL")
    }
    env.update(
        GRACE_DATA_DIR=str(data_dir),
        SLACK_BOT_TOKEN=BOT_TOKEN,
        SLACK_SIGNING_SECRET=SECRET,
        SLACK_API_URL=base_url,
        GRACE_LLM__PROVIDER="offline",
        GRACE_LOG_FORMAT="text",
        GRACE_LOG_LEVEL="WARNING",
    )
    if database_url is not None:
        env["GRACE_DATABASE_URL"] = database_url
    return env


class Grace(Protocol):
    """GRACE under test, whichever layout."""

    url: str
    inbox: SqlInbox

    async def busy(self) -> int: ...
    async def idle(self) -> None: ...
    def worker_cpu(self) -> float: ...
    async def outcomes(self, expected: int) -> str: ...
    async def close(self) -> None: ...


def _outcomes(counts: Counter[str]) -> str:
    return ", ".join(f"{status} {n}" for status, n in counts.most_common()) or "none"


@dataclass
class OneProcess:
    """`grace serve --one-process`: the whole bot on this process's loop."""

    bot: Bot
    server: Server

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def inbox(self) -> SqlInbox:
        return self.bot.services.inbox

    async def busy(self) -> int:
        return len(self.bot.deps.tasks)

    async def idle(self) -> None:
        await self.bot.deps.tasks.idle()

    def worker_cpu(self) -> float:
        return 0.0

    async def outcomes(self, expected: int) -> str:
        runs = await self.bot.services.store.runs.list_runs(limit=expected + 100)
        return _outcomes(Counter(r.status.value for r in runs))

    async def close(self) -> None:
        await self.server.stop()
        await self.bot.close()


@dataclass
class TwoProcesses:
    """`grace serve`: the front in this process, the worker in its child."""

    runtime: FrontRuntime
    url: str = ""

    def __post_init__(self) -> None:
        self.url = f"http://127.0.0.1:{self.runtime.port}{EVENTS_PATH}"

    @property
    def inbox(self) -> SqlInbox:
        return self.runtime.front.inbox

    async def _counts(self) -> tuple[int, int, int]:
        return await unsettled(self.runtime.front.engine)

    async def busy(self) -> int:
        """Requests not taken in yet plus runs not finished (the worker's work)."""
        waiting, unfinished, _ = await self._counts()
        return waiting + unfinished

    async def idle(self) -> None:
        """Until the inbox is empty, every run final and the outbox delivered."""
        deadline = time.monotonic() + SETTLE_TIMEOUT_S
        while any(await self._counts()):
            if time.monotonic() > deadline:
                raise TimeoutError("GRACE's worker did not settle")
            await asyncio.sleep(0.2)

    def worker_cpu(self) -> float:
        """CPU seconds the worker process used so far (Linux /proc)."""
        pid = self.runtime.front.worker.pid
        try:
            with open(f"/proc/{pid}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[-1].split()
        except (OSError, TypeError):
            return math.nan
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    async def outcomes(self, expected: int) -> str:
        runs = await SqlRunStore(self.runtime.front.engine).runs.list_runs(limit=expected + 100)
        return _outcomes(Counter(r.status.value for r in runs))

    async def close(self) -> None:
        await self.runtime.stop(5.0)


async def start_grace(
    data_dir: Path, base_url: str, database_url: str | None, *, one_process: bool
) -> Grace:
    """GRACE on a data dir with the sample knowledge base ingested (before the worker
    opens it: one process at a time)."""
    settings = bot_settings(data_dir, base_url, database_url)
    services = await build_services(settings)
    await ingest_paths(services.knowledge_base, [SAMPLE_KB_DIR])
    if one_process:
        bot = await create_bot(settings, services=services)
        return OneProcess(bot, await Server.start(http_app(bot)))
    await services.close()
    env = worker_env(data_dir, base_url, database_url)
    return TwoProcesses(await start_front(settings, port=0, host="127.0.0.1", env=env))


@asynccontextmanager
async def database(backend: str, cluster: Cluster | None) -> AsyncIterator[str | None]:
    """None (the data dir's SQLite file) or a new PostgreSQL database, dropped after."""
    if backend == "sqlite":
        yield None
        return
    assert cluster is not None
    async with fresh_database(cluster.start()) as url:
        yield url


def time_inbox_writes(inbox: SqlInbox) -> list[tuple[int, float]]:
    """Record (rows, seconds) of each `SqlInbox.add`: the write the ack waits for."""
    writes: list[tuple[int, float]] = []
    original = inbox.add

    async def timed(items: Sequence[InboxItem], **kwargs: Any) -> list[int | None]:
        started = time.perf_counter()
        try:
            return await original(items, **kwargs)
        finally:
            writes.append((len(items), time.perf_counter() - started))

    inbox.add = timed  # type: ignore[method-assign]
    return writes


class LoopLag:
    """How late this process's event loop runs a timer while it is on: the time a ready
    request waits for the loop (the front's, and the bare app's: they share it)."""

    def __init__(self) -> None:
        self.samples: list[float] = []
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._tick())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def _tick(self) -> None:
        while True:
            began = time.perf_counter()
            await asyncio.sleep(LAG_TICK_S)
            self.samples.append(max(0.0, time.perf_counter() - began - LAG_TICK_S))


# --------------------------------------------------------------------------- measuring


def percentile(values: Sequence[float], pct: float) -> float:
    """Nearest-rank percentile; NaN for no values (nothing was measured)."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = min(len(ordered), max(1, math.ceil(pct / 100 * len(ordered))))
    return ordered[rank - 1]


@dataclass
class Burst:
    app: str
    round: int
    burst: str
    latencies: list[float]
    statuses: list[int]
    busy: int = 0
    """GRACE's work in hand when the burst was sent (runs working, requests waiting)."""
    cpu: float = 0.0
    """CPU seconds this process's main thread (the apps' event loop: the front, or the
    bare app) used until the burst's last response — not the sender's thread, nor the
    database driver's; less sensitive than wall time to other work on the machine."""
    worker_cpu: float = 0.0
    """CPU seconds GRACE's worker process used meanwhile (0 in one process)."""
    lag: list[float] = field(default_factory=list)

    def pct(self, p: float) -> float:
        return percentile(self.latencies, p)

    @property
    def errors(self) -> int:
        return sum(1 for s in self.statuses if s != 200)


@dataclass
class Backend:
    name: str
    layout: str
    bursts: list[Burst] = field(default_factory=list)
    writes: list[tuple[int, float]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def find(self, app: str, round_: int, burst: str) -> Burst:
        return next(b for b in self.bursts if (b.app, b.round, b.burst) == (app, round_, burst))

    def pooled(self, app: str, burst: str) -> list[float]:
        return [x for b in self.bursts if (b.app, b.burst) == (app, burst) for x in b.latencies]


async def rounds_on(
    slack: SlackSide, backend: str, cluster: Cluster | None, args: argparse.Namespace
) -> Backend:
    found = Backend(backend, "one process" if args.one_process else "front + worker process")
    base_url = slack.base_url
    bare = await Server.start(bare_endpoint(base_url))
    with tempfile.TemporaryDirectory(prefix="grace-bench-") as tmp:
        async with database(backend, cluster) as url:
            grace = await start_grace(
                Path(tmp) / "grace", base_url, url, one_process=args.one_process
            )
            found.writes = time_inbox_writes(grace.inbox)
            try:
                for app, target in (("bare", bare.url), ("GRACE", grace.url)):
                    for request in mention_requests(args.warmup, f"W{app}"):
                        await slack.call(blast(target, [request]))
                await grace.idle()
                found.writes.clear()
                for round_ in range(1, args.rounds + 1):
                    # bare first on odd rounds, GRACE first on even ones
                    order = [("bare", bare.url), ("GRACE", grace.url)]
                    for app, target in order if round_ % 2 else order[::-1]:
                        for burst in BURSTS:
                            busy = await grace.busy() if app == "GRACE" else 0
                            requests = mention_requests(args.events, f"{app[0]}{round_}{burst}")
                            lag = LoopLag()
                            lag.start()
                            cpu, wcpu = time.thread_time(), grace.worker_cpu()
                            latencies, statuses = await slack.call(blast(target, requests))
                            cpu = time.thread_time() - cpu
                            wcpu = grace.worker_cpu() - wcpu
                            await lag.stop()
                            found.bursts.append(
                                Burst(
                                    app,
                                    round_,
                                    burst,
                                    latencies,
                                    statuses,
                                    busy,
                                    cpu,
                                    wcpu,
                                    lag.samples,
                                )
                            )
                        if app == "GRACE":
                            started = time.perf_counter()
                            await grace.idle()
                            found.notes.append(
                                f"round {round_}: GRACE's runs finished "
                                f"{time.perf_counter() - started:.1f} s after burst B's last ack"
                            )
                expected = args.warmup + 2 * args.events * args.rounds
                found.notes.append(f"{expected} events -> runs {await grace.outcomes(expected)}")
            finally:
                await grace.close()
    await bare.stop()
    return found


def ms(seconds: float) -> str:
    return f"{seconds * 1000:7.1f}"


def report(found: Backend, events: int) -> bool:
    """Print the table; True when GRACE met the target on both bursts."""
    print(
        f"\n== {found.name}, GRACE as {found.layout}: {events} concurrent signed "
        "app_mention events per burst =="
    )
    print(
        f"{'round':>5} {'burst':>5} {'app':<6} {'busy':>5} {'p50':>7} {'p95':>7} {'p99':>7} "
        f"{'max':>7} {'cpu':>6} {'wcpu':>6} {'lag99':>6} {'non-200':>7}   {'p50 x':>6} {'p99 x':>6}"
    )
    rounds = sorted({b.round for b in found.bursts})
    for round_ in rounds:
        for burst in BURSTS:
            bare = found.find("bare", round_, burst)
            for b in (bare, found.find("GRACE", round_, burst)):
                ratios = ""
                if b.app == "GRACE":
                    ratios = f"   {b.pct(50) / bare.pct(50):5.2f}x {b.pct(99) / bare.pct(99):5.2f}x"
                print(
                    f"{round_:>5} {burst:>5} {b.app:<6} {b.busy:>5} {ms(b.pct(50))} "
                    f"{ms(b.pct(95))} {ms(b.pct(99))} {ms(max(b.latencies))} {b.cpu * 1000:6.0f} "
                    f"{b.worker_cpu * 1000:6.0f} {percentile(b.lag, 99) * 1000:6.1f} "
                    f"{b.errors:>7}"
                    f"{ratios}"
                )
    met = True
    print("over all rounds: pooled latencies (ms); verdict on the median of the rounds' p99 ratios")
    for burst in BURSTS:
        bare, ours = found.pooled("bare", burst), found.pooled("GRACE", burst)
        r50 = percentile(ours, 50) / percentile(bare, 50)
        r99 = percentile(ours, 99) / percentile(bare, 99)
        per_round = [
            found.find("GRACE", r, burst).pct(99) / found.find("bare", r, burst).pct(99)
            for r in rounds
        ]
        typical = statistics.median(per_round)
        errors = sum(b.errors for b in found.bursts if b.app == "GRACE" and b.burst == burst)
        ok = typical <= TARGET_RATIO and errors == 0
        met = met and ok
        print(
            f"  burst {burst}: bare p50/p95/p99 {ms(percentile(bare, 50))} "
            f"{ms(percentile(bare, 95))} {ms(percentile(bare, 99))} | GRACE "
            f"{ms(percentile(ours, 50))} {ms(percentile(ours, 95))} {ms(percentile(ours, 99))}"
            f" | pooled p50 {r50:.2f}x p99 {r99:.2f}x | rounds' p99 "
            + " ".join(f"{x:.2f}x" for x in per_round)
            + f", median {typical:.2f}x -> {'PASS' if ok else 'FAIL'}"
        )
        for app in ("bare", "GRACE"):
            lag = [x for b in found.bursts if (b.app, b.burst) == (app, burst) for x in b.lag]
            print(
                f"    {app:<5} event-loop lag during burst {burst}: p50 "
                f"{percentile(lag, 50) * 1000:.1f} ms, p99 {percentile(lag, 99) * 1000:.1f} ms, "
                f"max {max(lag, default=math.nan) * 1000:.1f} ms"
            )
    sizes = [n for n, _ in found.writes]
    seconds = [s for _, s in found.writes]
    print(
        f"inbox writes before the ack: {len(found.writes)} batches of "
        f"{min(sizes, default=0)}-{max(sizes, default=0)} rows, "
        f"p50 {percentile(seconds, 50) * 1000:.1f} ms, p99 {percentile(seconds, 99) * 1000:.1f} ms"
    )
    for note in found.notes:
        print(f"  {note}")
    slow = sum(1 for b in found.bursts if b.app == "GRACE" for x in b.latencies if x >= 3.0)
    print(f"Slack's 3 s ack deadline: {slow} of GRACE's acks missed it")
    return met


async def run(args: argparse.Namespace) -> None:
    backends = BACKENDS if args.backend == "both" else (args.backend,)
    cluster = Cluster() if "postgresql" in backends else None
    verdicts: dict[str, bool] = {}
    try:
        async with SlackSide() as slack:
            for backend in backends:
                found = await rounds_on(slack, backend, cluster, args)
                verdicts[backend] = report(found, args.events)
    finally:
        if cluster is not None:
            cluster.stop()
    print(
        f"\ntarget: GRACE's p99 within {TARGET_RATIO:.2f}x of the bare app's, bursts A and B: "
        + ", ".join(f"{k} {'PASS' if v else 'FAIL'}" for k, v in verdicts.items())
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--events", type=int, default=200, help="concurrent events per burst")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of bursts A and B")
    parser.add_argument("--warmup", type=int, default=5, help="sequential events first")
    parser.add_argument("--backend", choices=(*BACKENDS, "both"), default="both")
    parser.add_argument(
        "--one-process",
        action="store_true",
        help="the whole bot in this process (grace serve --one-process), for comparison",
    )
    args = parser.parse_args(argv)
    if args.events < 1 or args.rounds < 1:
        parser.error("--events and --rounds must be at least 1")
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    asyncio.run(run(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
