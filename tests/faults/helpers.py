"""Driving `grace serve` as Slack would: signed event deliveries, Slack's retries of the
ones we did not ack, kill -9, and counting what each thread got."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
from sqlalchemy import func, or_, select
from sqlalchemy.ext.asyncio import AsyncEngine

from agent.schemas import RunStatus
from bot.simulator.requests import (
    JSON_CONTENT_TYPE,
    app_mention_envelope,
    json_body,
    signed_headers,
)
from bot.simulator.webapi import FakeSlack
from bot.simulator.workspace import DEFAULT_CHANNEL_ID
from storage.db import make_engine, reader
from storage.inbox import PENDING
from storage.tables import DeliveryRow, InboxRow, RunRow
from tests.bot.conftest import SECRET, has_feedback_buttons
from tests.durable.helpers import free_port as free_port  # re-exported for the fault tests
from tests.durable.helpers import grace_env
from tests.durable.helpers import wait_until as wait_until  # re-exported
from tests.fakes.vacation_run import QUESTION


def serve_env(data_dir: Path, fake: FakeSlack, **extra: str) -> dict[str, str]:
    """These faults hit `chat.postMessage`: the plan is the posted message, not a stream
    (streams under faults: tests/bot/test_plan_stream.py)."""
    extra.setdefault("GRACE_SLACK__PLAN_DISPLAY", "message")
    # Bursts of questions from one fake user are these tests' load, not a person flooding
    # the bot: the per-person and per-thread run caps (issue 22) are lifted.
    extra.setdefault("GRACE_SLACK__RUNS_PER_USER_PER_MINUTE", "1000")
    extra.setdefault("GRACE_SLACK__RUNS_PER_THREAD_PER_MINUTE", "1000")
    return grace_env(
        data_dir,
        SLACK_BOT_TOKEN="xoxb-test",
        SLACK_SIGNING_SECRET=SECRET,
        SLACK_API_URL=fake.base_url,
        **extra,
    )


@dataclass
class Server:
    """One `grace serve` process; its stderr goes to a file (a full pipe would stall it)."""

    process: asyncio.subprocess.Process
    port: int
    log: Path

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def kill(self) -> None:
        if self.process.returncode is None:
            os.kill(self.process.pid, signal.SIGKILL)

    async def stop(self) -> int:
        if self.process.returncode is None:
            self.process.send_signal(signal.SIGTERM)
        return await asyncio.wait_for(self.process.wait(), timeout=90)

    def stderr(self) -> str:
        return self.log.read_text(errors="replace")


_UP = re.compile(rb"GRACE is up .* on port (\d+)")


async def start_server(
    env: dict[str, str], port: int, log: Path, *, flags: tuple[str, ...] = ()
) -> Server:
    """Start `grace serve` (with `flags`, e.g. `--one-process`) and wait until it says
    which port it bound and that port's /healthz answers 200. With `port` 0 the system
    picks the port when it is bound, so tests running side by side can never be handed
    the same one."""
    out = log.with_suffix(".out")
    with log.open("ab") as err, out.open("wb") as stdout:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot.cli", "serve", "--port", str(port), "--host", "127.0.0.1",
            *flags, env=env, stdout=stdout, stderr=err,
        )  # fmt: skip
    server = Server(process, port, log)
    deadline = time.monotonic() + 120
    async with aiohttp.ClientSession() as http:
        while True:
            assert process.returncode is None, f"grace serve exited:\n{server.stderr()[-3000:]}"
            assert time.monotonic() < deadline, "grace serve never became healthy"
            up = _UP.search(out.read_bytes())
            if up is not None:
                server.port = int(up.group(1))
                try:
                    async with http.get(f"{server.base}/healthz") as response:
                        if response.status == 200:
                            return server
                except aiohttp.ClientError:
                    pass
            await asyncio.sleep(0.2)


@asynccontextmanager
async def serving(
    env: dict[str, str], log: Path, *, port: int = 0, flags: tuple[str, ...] = ()
) -> AsyncIterator[Server]:
    """`grace serve` for the block (on `port`, or one the system picks); on leaving it the
    process is stopped with SIGTERM and, unless the block failed, must have exited cleanly."""
    server = await start_server(env, port, log, flags=flags)
    try:
        yield server
    except BaseException as failure:  # what the server said is half of the story
        failure.add_note(
            f"grace serve (exit {server.process.returncode}):\n{server.stderr()[-3000:]}"
        )
        raise
    finally:
        code = await server.stop()
    assert code == 0, server.stderr()[-3000:]


@dataclass
class Delivery:
    """One event as Slack sends it, and whether we acknowledged it."""

    envelope: dict[str, Any]
    acked: bool = False
    statuses: list[int | str] = field(default_factory=list)

    @property
    def thread(self) -> str:
        return str(self.envelope["event"]["ts"])


def mention(ts: str, *, event_id: str | None = None, text: str = QUESTION) -> Delivery:
    envelope = app_mention_envelope(text=text, ts=ts)
    if event_id is not None:
        envelope["event_id"] = event_id
    return Delivery(envelope)


async def send(
    http: aiohttp.ClientSession, base: str, delivery: Delivery, *, retry_num: int | None = None
) -> None:
    """POST it (signed); a 200 is Slack's idea of "acknowledged"."""
    body = json_body(delivery.envelope)
    headers = signed_headers(SECRET, body, content_type=JSON_CONTENT_TYPE, retry_num=retry_num)
    try:
        async with http.post(
            f"{base}/slack/events",
            data=body.encode(),
            headers=headers,
            timeout=aiohttp.ClientTimeout(total=10),
        ) as response:
            await response.read()
            delivery.statuses.append(response.status)
            delivery.acked = delivery.acked or response.status == 200
    except (aiohttp.ClientError, TimeoutError) as exc:
        delivery.statuses.append(type(exc).__name__)


async def redeliver_unacked(
    http: aiohttp.ClientSession, base: str, deliveries: list[Delivery], *, rounds: int = 3
) -> None:
    """Slack's retries: what was not acknowledged is sent again (X-Slack-Retry-Num)."""
    for attempt in range(1, rounds + 1):
        left = [d for d in deliveries if not d.acked]
        if not left:
            return
        await asyncio.gather(*(send(http, base, d, retry_num=attempt) for d in left))
        if any(not d.acked for d in left):
            await asyncio.sleep(2)


def answers(fake: FakeSlack, thread_ts: str) -> int:
    """How many answers (messages with 👍/👎) a thread got."""
    return sum(1 for m in fake.thread(DEFAULT_CHANNEL_ID, thread_ts) if has_feedback_buttons(m))


FINAL = [s.value for s in RunStatus if s.is_final]


async def unsettled(engine: AsyncEngine) -> tuple[int, int, int]:
    """What could still post to Slack: requests waiting in the inbox, runs not final,
    and runs whose messages are not delivered (or that a deliverer holds)."""
    async with reader(engine).connect() as db:
        waiting = await db.scalar(
            select(func.count()).select_from(InboxRow).where(InboxRow.status == PENDING)
        )
        unfinished = await db.scalar(
            select(func.count()).select_from(RunRow).where(RunRow.status.not_in(FINAL))
        )
        behind = await db.scalar(
            select(func.count())
            .select_from(DeliveryRow)
            .where(
                or_(
                    DeliveryRow.wanted_version > DeliveryRow.delivered_version,
                    DeliveryRow.owner.is_not(None),
                )
            )
        )
    return int(waiting or 0), int(unfinished or 0), int(behind or 0)


async def settled(engine: AsyncEngine) -> bool:
    """Nothing is left that could post to Slack: no request waits in the inbox, every
    run is final (no worker will move it on), and every run's messages are delivered
    with no deliverer holding them. From here on no process posts anything unasked."""
    return not any(await unsettled(engine))


async def wait_settled(db_url: str, *, within: float = 120) -> None:
    """Wait until `settled`: then what Slack got is all it will get, and once the servers
    have exited, counting it proves there was no duplicate (none can come later)."""
    engine = make_engine(db_url)
    try:
        await wait_until(
            lambda: settled(engine),
            within=within,
            what="an empty inbox, final runs and a drained outbox",
        )
    finally:
        await engine.dispose()


async def wait_answered(fake: FakeSlack, threads: list[str], db_url: str, *, within: float) -> None:
    """Wait for an answer in every thread, then until `wait_settled`: a duplicate would
    be posted by then."""
    await wait_until(
        lambda: all(answers(fake, ts) >= 1 for ts in threads),
        within=within,
        what="an answer in every thread",
    )
    await wait_settled(db_url)
