"""SQLite held by another process (a write transaction open for 40 s, past the 30 s busy
timeout): no question is dropped — each is answered once the lock is released — and
/healthz says the service is degraded meanwhile, with a short reason."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import aiohttp

from tests.durable.helpers import copy_data_dir
from tests.fakes.fake_slack import FakeSlack

from .helpers import (
    answers,
    free_port,
    mention,
    redeliver_unacked,
    send,
    serve_env,
    start_server,
    wait_until,
)

LOCKED_S = float(os.environ.get("GRACE_FAULTS_LOCK_SECONDS", "40"))

_HOLD_LOCK = """
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=60)
db.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
db.execute("ROLLBACK")
"""


async def _health(http: aiohttp.ClientSession, base: str) -> tuple[int, dict[str, object]]:
    async with http.get(f"{base}/healthz", timeout=aiohttp.ClientTimeout(total=10)) as response:
        return response.status, json.loads(await response.text())


async def test_a_locked_database_delays_questions_but_loses_none(
    sample_data_dir: Path, tmp_path: Path
) -> None:
    data_dir = copy_data_dir(sample_data_dir, tmp_path / "data")
    threads = [f"1700040000.{n:06d}" for n in range(1, 6)]
    deliveries = [mention(ts) for ts in threads]
    async with FakeSlack() as fake, aiohttp.ClientSession() as http:
        server = await start_server(serve_env(data_dir, fake), free_port(), tmp_path / "serve.log")
        holder = await asyncio.create_subprocess_exec(
            sys.executable, "-c", _HOLD_LOCK, str(data_dir / "grace.db"), str(LOCKED_S),
            stdout=asyncio.subprocess.PIPE,
        )  # fmt: skip
        try:
            assert holder.stdout is not None
            assert (await asyncio.wait_for(holder.stdout.readline(), 30)).strip() == b"locked"

            await asyncio.gather(*(send(http, server.base, d) for d in deliveries))
            degraded: list[dict[str, object]] = []

            async def reports_degraded() -> bool:
                status, body = await _health(http, server.base)
                if status == 503:
                    degraded.append(body)
                return status == 503

            await wait_until(reports_degraded, within=LOCKED_S, what="/healthz to degrade")
            assert degraded[0] == {
                "ok": False,
                "status": "degraded",
                "reason": "database unavailable",
            }
            assert holder.returncode is None, "the database was still locked"

            await asyncio.wait_for(holder.wait(), timeout=LOCKED_S + 30)
            await redeliver_unacked(http, server.base, deliveries)  # Slack's retries
            assert all(d.acked for d in deliveries), [d.statuses for d in deliveries]

            async def healthy() -> bool:
                return (await _health(http, server.base))[0] == 200

            await wait_until(healthy, within=120, what="/healthz to recover")
            await wait_until(
                lambda: all(answers(fake, ts) >= 1 for ts in threads),
                within=180,
                what="an answer in every thread",
            )
            await asyncio.sleep(2)
        finally:
            if holder.returncode is None:
                holder.kill()
                await holder.wait()
            code = await server.stop()
    assert code == 0, server.stderr()[-3000:]
    assert {ts: answers(fake, ts) for ts in threads} == dict.fromkeys(threads, 1)
