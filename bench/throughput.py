"""Throughput: answers per minute and time to answer, one process and two replicas.

    python -m bench.throughput [--questions 120] [--quick] [--runs-per-process 4]
                               [--model-delay 0.3] [--postgres-url URL]
                               [--scenarios sqlite,pg1,pg2]

Each scenario runs real `grace serve` processes in HTTP mode, as Slack would drive them:
the bench signs `app_mention` events and POSTs them to `/slack/events`; the replicas post
their answers to a local fake Slack Web API (`bot/simulator/webapi.py`) and ask a fake
Gemini server (`tests/fakes/fake_gemini.py`) through the real google-genai client
(`GRACE_LLM__PROVIDER=gemini`, `GRACE_LLM__BASE_URL`), which answers every
generateContent call after `--model-delay` seconds (a plan, an answer, an evaluation:
three calls per question; embeddings are answered at once).

- sqlite: one process, its own SQLite file (the default);
- pg1: one replica on PostgreSQL;
- pg2: two replicas on one PostgreSQL database, questions split between them.

Every process gets the same budget: `--runs-per-process` agent runs at once
(`GRACE_SLACK__MAX_CONCURRENT_RUNS`) and its own copy of one knowledge base (Qdrant local
mode allows one process per directory). After one warm-up question per process, people
ask: `--in-flight` per process (default twice the runs budget, so every process stays
busy without a backlog that grows), each asking again once answered, until
`--questions` are asked. Throughput is answers / (last answer − first question), and
the time to answer is from a question's POST to the message carrying 👍/👎 in its
thread. CPU seconds per answer are the replicas' own (`/proc/PID/stat`, measured over
the burst), next to the bench's own (the fakes and the sender); peak RSS is each
process's high-water mark (`VmHWM`, start-up included); `load` is the machine's 1-minute
load average as the burst ended (other work on the machine slows every figure).

PostgreSQL: `--postgres-url` or `GRACE_TEST_POSTGRES_URL` (an admin URL such as
`postgresql+asyncpg://postgres@127.0.0.1:5432/postgres`; each scenario creates and drops
its own database on it); without either, a throw-away cluster is started with `initdb`
and `pg_ctl` in a temporary directory on a free port (as the `nobody` user when run as
root, since `initdb` refuses root) and removed at the end.

Target: two replicas ≥ 1.7× the answers per minute of one. On a 2-core machine the
replicas and the bench (fake Slack, fake Gemini, the sender) share the cores. It is a
benchmark: the exit code is 0 whatever the numbers.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

from bot.simulator.requests import JSON_CONTENT_TYPE, app_mention_envelope, signed_headers
from bot.simulator.requests import json_body as slack_json
from bot.simulator.webapi import FakeSlack
from bot.simulator.workspace import WorkspaceEvent
from tests.bot.conftest import has_feedback_buttons
from tests.databases import Cluster, fresh_database
from tests.fakes.fake_gemini import (
    GENERATE,
    CannedResponse,
    FakeGemini,
    RecordedRequest,
    generate_body,
    sample_from_schema,
)
from tests.fakes.fake_gemini import json_body as gemini_json
from tests.fakes.vacation_run import (
    ANSWER,
    EVALUATION,
    QUESTION,
    SEARCH_QUERY,
    plan_for,
)
from tests.faults.helpers import free_port, start_server

ROOT = Path(__file__).resolve().parent.parent

SECRET = "bench-signing-secret-0123456789abcdef"
API_KEY = "bench-gemini-key"
TARGET_SPEEDUP = 1.7
PLAN = plan_for(SEARCH_QUERY)
SCENARIOS = {"sqlite": (1, False), "pg1": (1, True), "pg2": (2, True)}
"""name → (replicas, on PostgreSQL)."""


# --------------------------------------------------------------------------- the fake model


def slow_model(delay: float) -> Any:
    """A generateContent responder: the plan, the answer or the evaluation, after `delay`."""

    def respond(request: RecordedRequest) -> CannedResponse:
        config = request.generation_config
        schema = config.get("responseSchema") or config.get("responseJsonSchema")
        if not schema:
            return CannedResponse(generate_body(ANSWER), delay=delay)
        fields = schema.get("properties", {}) if isinstance(schema, dict) else {}
        if "steps" in fields:
            data: Any = PLAN
        elif "self_eval" in fields:
            data = EVALUATION
        else:
            data = sample_from_schema(schema)
        return CannedResponse(gemini_json(data), delay=delay)

    return respond


# --------------------------------------------------------------------------- replicas


def proc_cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


# --------------------------------------------------------------------------- Slack's side


class Answers:
    """When each thread got its answer (the message with 👍/👎), seen from fake Slack."""

    def __init__(self, fake: FakeSlack) -> None:
        self.sent: dict[str, float] = {}
        self.answered: dict[str, float] = {}
        self._events: dict[str, asyncio.Event] = {}
        fake.workspace.subscribe(self._changed)

    def _changed(self, event: WorkspaceEvent) -> None:
        message = event.data.get("message")
        thread = getattr(message, "thread_ts", None)
        if thread in self.sent and thread not in self.answered and has_feedback_buttons(message):
            self.answered[thread] = time.monotonic()
            self._events[thread].set()

    async def wait(self, thread: str, seconds: float) -> None:
        """Until the thread has its answer, or `seconds` pass."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._events[thread].wait(), seconds)

    def expect(self, thread: str) -> None:
        self.sent[thread] = time.monotonic()
        self._events[thread] = asyncio.Event()

    def clear(self) -> None:
        self.sent.clear()
        self.answered.clear()


_ts_counter = iter(range(1, 10**9))


def next_thread_ts() -> str:
    return f"{int(time.time())}.{next(_ts_counter):06d}"


SLACK_RETRIES = 3
PATIENCE_S = 180.0
"""How long one simulated person waits for an answer before asking the next question."""


async def ask(http: aiohttp.ClientSession, url: str, answers: Answers) -> tuple[str, int]:
    """POST one signed app_mention (its own thread and event id) as Slack would, retrying
    what is not acknowledged (`X-Slack-Retry-Num`); the thread, and how many deliveries
    were refused."""
    ts = next_thread_ts()
    envelope = app_mention_envelope(text=QUESTION, ts=ts, event_id=f"Ev{uuid.uuid4().hex[:12]}")
    body = slack_json(envelope)
    answers.expect(ts)
    refused = 0
    for attempt in range(SLACK_RETRIES + 1):
        headers = signed_headers(
            SECRET, body, content_type=JSON_CONTENT_TYPE, retry_num=attempt or None
        )
        try:
            async with http.post(
                url, data=body.encode(), headers=headers, timeout=aiohttp.ClientTimeout(total=3)
            ) as response:
                await response.read()
                if response.status == 200:
                    return ts, refused
        except (aiohttp.ClientError, TimeoutError):
            pass  # Slack counts a response later than 3 s as not acknowledged
        refused += 1
        await asyncio.sleep(1.0)  # Slack: at once, 1 min, 5 min; compressed here
    return ts, refused


async def keep_asking(
    http: aiohttp.ClientSession, url: str, answers: Answers, tickets: Iterator[int]
) -> int:
    """One person at a time: ask, wait for the answer, ask again, while tickets last."""
    refused = 0
    for _ in tickets:
        thread, count = await ask(http, url, answers)
        refused += count
        await answers.wait(thread, PATIENCE_S)
    return refused


# --------------------------------------------------------------------------- one scenario


@dataclass
class Outcome:
    name: str
    replicas: int
    questions: int
    answered: int
    seconds: float
    latencies: list[float] = field(default_factory=list)
    cpu: float = 0.0
    bench_cpu: float = 0.0
    """The bench's own CPU over the burst: fake Slack, fake Gemini, the sender, Postgres
    not included."""
    refused: int = 0
    """Deliveries not acknowledged within 3 s with a 200 (each retried, as Slack does)."""
    peak_rss_mb: list[float] = field(default_factory=list)
    load: float = 0.0
    """The 1-minute load average when the burst ended."""

    @property
    def per_minute(self) -> float:
        return self.answered / self.seconds * 60 if self.seconds else 0.0

    @property
    def cores(self) -> float:
        """Cores the replicas kept busy on average: near the machine's share for them, the
        replicas were short of CPU rather than of runs."""
        return self.cpu / self.seconds if self.seconds else 0.0

    def pct(self, q: float) -> float:
        if not self.latencies:
            return float("nan")
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]

    def line(self) -> str:
        rss = "/".join(f"{r:.0f}" for r in self.peak_rss_mb)
        answered = self.answered or float("nan")
        return (
            f"{self.name:<8} {self.answered:>4}/{self.questions:<4} {self.per_minute:8.1f}"
            f" {self.pct(50):7.2f} {self.pct(99):7.2f} {self.cpu / answered:10.3f}"
            f" {self.bench_cpu / answered:10.3f} {self.cores:6.2f} {rss:>12} {self.load:6.1f}"
            f" {self.refused:>7}"
        )


def replica_env(
    data_dir: Path, slack_url: str, gemini_url: str, runs: int, database_url: str | None
) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("GRACE_", "GOOGLE_", "QDRANT_", "SLACK_"))
    }
    env.update(
        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        GRACE_DATA_DIR=str(data_dir),
        GRACE_LOG_LEVEL="WARNING",
        GRACE_LOG_FORMAT="json",
        GRACE_LLM__PROVIDER="gemini",
        GRACE_LLM__BASE_URL=gemini_url,
        GOOGLE_API_KEY=API_KEY,
        SLACK_BOT_TOKEN="xoxb-bench-0001",
        SLACK_SIGNING_SECRET=SECRET,
        SLACK_API_URL=slack_url,
        GRACE_SLACK__MAX_CONCURRENT_RUNS=str(runs),
    )
    if database_url:
        env["GRACE_DATABASE_URL"] = database_url
    return env


async def run_scenario(
    name: str,
    *,
    replicas: int,
    database_url: str | None,
    template: Path,
    work: Path,
    gemini: FakeGemini,
    questions: int,
    runs: int,
    in_flight: int,
    logs: Path,
) -> Outcome:
    async with FakeSlack() as slack:
        answers = Answers(slack)
        envs = []
        for n in range(replicas):
            data_dir = work / f"{name}-{n}"
            shutil.copytree(template, data_dir)
            envs.append(replica_env(data_dir, slack.base_url, gemini.base_url, runs, database_url))
        servers = await asyncio.gather(
            *(
                start_server(env, free_port(), logs / f"{name}-{n}.log")
                for n, env in enumerate(envs)
            )
        )
        try:
            connector = aiohttp.TCPConnector(limit=0)
            async with aiohttp.ClientSession(connector=connector) as http:
                warm_up = await asyncio.gather(
                    *(ask(http, f"{s.base}/slack/events", answers) for s in servers)
                )
                await asyncio.gather(*(answers.wait(t, PATIENCE_S) for t, _ in warm_up))
                answers.clear()
                tickets = iter(range(questions))
                cpu_before = [proc_cpu_seconds(s.process.pid) for s in servers]
                bench_before = time.process_time()
                started = time.monotonic()
                refused = await asyncio.gather(
                    *(
                        keep_asking(
                            http, f"{servers[n % replicas].base}/slack/events", answers, tickets
                        )
                        for n in range(in_flight * replicas)
                    )
                )
                bench_cpu = time.process_time() - bench_before
            cpu = sum(
                proc_cpu_seconds(s.process.pid) - b
                for s, b in zip(servers, cpu_before, strict=True)
            )
            peaks = [proc_peak_rss_mb(s.process.pid) for s in servers]
        finally:
            await asyncio.gather(*(s.stop() for s in servers))
    last = max(answers.answered.values(), default=started)
    latencies = [answers.answered[t] - answers.sent[t] for t in answers.answered]
    return Outcome(
        name=name,
        replicas=replicas,
        questions=questions,
        answered=len(answers.answered),
        seconds=last - started,
        latencies=latencies,
        cpu=cpu,
        bench_cpu=bench_cpu,
        refused=sum(refused),
        peak_rss_mb=peaks,
        load=os.getloadavg()[0],
    )


# --------------------------------------------------------------------------- main


async def build_template(work: Path, gemini: FakeGemini) -> Path:
    """One knowledge base (the shipped sample, Gemini embeddings from the fake)."""
    template = work / "template"
    env = replica_env(template, "http://127.0.0.1:9/api/", gemini.base_url, 1, None)
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", "ingest", "--sample",
        env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    _out, err = await asyncio.wait_for(process.communicate(), timeout=600)
    if process.returncode != 0:
        raise RuntimeError(f"grace ingest --sample failed:\n{err.decode()[-3000:]}")
    for name in ("grace.db", "grace.db-wal", "grace.db-shm"):  # each scenario its own runs
        (template / name).unlink(missing_ok=True)
    return template


async def run(args: argparse.Namespace, postgres_url: str | None) -> list[Outcome]:
    outcomes = []
    with tempfile.TemporaryDirectory(prefix="grace-throughput-") as tmp:
        work = Path(tmp)
        async with FakeGemini() as gemini:
            template = await build_template(work, gemini)
            gemini.set_responder(GENERATE, slow_model(args.model_delay))
            for name in args.scenarios:
                replicas, on_postgres = SCENARIOS[name]
                print(f"  running {name} ({replicas} process(es))…", file=sys.stderr, flush=True)
                async with contextlib.AsyncExitStack() as stack:
                    url = None
                    if on_postgres:
                        assert postgres_url is not None
                        url = await stack.enter_async_context(fresh_database(postgres_url))
                    outcomes.append(
                        await run_scenario(
                            name,
                            replicas=replicas,
                            database_url=url,
                            template=template,
                            work=work,
                            gemini=gemini,
                            questions=args.questions,
                            runs=args.runs_per_process,
                            in_flight=args.in_flight or 2 * args.runs_per_process,
                            logs=args.logs or work,
                        )
                    )
                gemini.reset()
    return outcomes


def report(outcomes: Sequence[Outcome], args: argparse.Namespace) -> None:
    print(
        f"\n{args.questions} questions, {args.in_flight or 2 * args.runs_per_process} in "
        f"flight and {args.runs_per_process} runs at once per process; each model call takes "
        f"{args.model_delay * 1000:.0f} ms; "
        f"{os.cpu_count()} cores\n"
    )
    print(
        f"{'':<8} {'answered':>9} {'per min':>8} {'p50 s':>7} {'p99 s':>7}"
        f" {'CPU s/ans':>10} {'bench CPU':>10} {'cores':>6} {'peak RSS MB':>12} {'load':>6}"
        f" {'refused':>7}"
    )
    for outcome in outcomes:
        print(outcome.line())
    by_name = {o.name: o for o in outcomes}
    if "pg1" in by_name and "pg2" in by_name and by_name["pg1"].per_minute:
        speedup = by_name["pg2"].per_minute / by_name["pg1"].per_minute
        verdict = "PASS" if speedup >= TARGET_SPEEDUP else "FAIL"
        print(
            f"\ntwo replicas / one replica (PostgreSQL): {speedup:.2f}x   "
            f"target >= {TARGET_SPEEDUP}x   {verdict}"
        )
    refused = sum(o.refused for o in outcomes)
    if refused:
        print(
            f"{refused} delivery(ies) were not acknowledged in 3 s with a 200 and were "
            "redelivered (--logs DIR keeps the replicas' logs)"
        )
    missing = sum(o.questions - o.answered for o in outcomes)
    if missing:
        print(f"{missing} question(s) got no answer in time (see the replicas' logs)")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=120)
    parser.add_argument("--quick", action="store_true", help="30 questions")
    parser.add_argument("--runs-per-process", type=int, default=4)
    parser.add_argument("--model-delay", type=float, default=0.3)
    parser.add_argument(
        "--in-flight",
        type=int,
        help="questions waiting for an answer at any time, per process (2 × runs)",
    )
    parser.add_argument("--postgres-url", default=os.environ.get("GRACE_TEST_POSTGRES_URL"))
    parser.add_argument("--scenarios", default="sqlite,pg1,pg2")
    parser.add_argument("--logs", type=Path, help="keep the replicas' logs in this directory")
    args = parser.parse_args(argv)
    if args.logs is not None:
        args.logs.mkdir(parents=True, exist_ok=True)
    if args.quick:
        args.questions = 30
    args.scenarios = [s.strip() for s in args.scenarios.split(",") if s.strip()]
    unknown = set(args.scenarios) - set(SCENARIOS)
    if unknown:
        parser.error(f"unknown scenario(s) {sorted(unknown)}; pick from {sorted(SCENARIOS)}")
    needs_postgres = any(SCENARIOS[s][1] for s in args.scenarios)
    with contextlib.ExitStack() as stack:
        url = args.postgres_url
        if needs_postgres and not url:
            print("  starting a throw-away PostgreSQL cluster…", file=sys.stderr, flush=True)
            cluster = Cluster()  # the test command's kind (scripts/postgres.sh)
            stack.callback(cluster.stop)
            url = cluster.start()
        outcomes = asyncio.run(run(args, url))
    report(outcomes, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
