"""The database held by another process — SQLite: a write transaction open for 40 s, past
the 30 s busy timeout; PostgreSQL: the tables locked against writes for 20 s (it has no
busy timeout: writes wait) — no question is dropped, each is answered once the lock is
released, and /healthz says the service is degraded meanwhile, with a short reason."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import aiohttp
from sqlalchemy.engine import make_url

from bot.simulator.webapi import FakeSlack

from .helpers import (
    answers,
    mention,
    redeliver_unacked,
    send,
    serve_env,
    serving,
    wait_answered,
    wait_until,
)

LOCKED_S = float(os.environ.get("GRACE_FAULTS_LOCK_SECONDS", "40"))
PG_LOCKED_S = min(LOCKED_S, 20.0)  # past the 8 s write stall that degrades /healthz

_HOLD_LOCK = """
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=60)
db.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
db.execute("ROLLBACK")
"""

_HOLD_PG_LOCK = """
import asyncio, sys, asyncpg
async def main():
    db = await asyncpg.connect(sys.argv[1])
    async with db.transaction():
        await db.execute(
            "LOCK TABLE runs, inbox, deliveries, run_events, interventions"
            " IN EXCLUSIVE MODE"  # writes wait, reads go on: SQLite's write lock
        )
        print("locked", flush=True)
        await asyncio.sleep(float(sys.argv[2]))
        raise SystemExit(0)
asyncio.run(main())
"""


def _holder_command(url: str) -> tuple[list[str], float]:
    """The program that holds the database's write lock, and for how long."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        return [sys.executable, "-c", _HOLD_LOCK, str(parsed.database), str(LOCKED_S)], LOCKED_S
    plain = parsed.set(drivername="postgresql").render_as_string(hide_password=False)
    return [sys.executable, "-c", _HOLD_PG_LOCK, plain, str(PG_LOCKED_S)], PG_LOCKED_S


async def _health(http: aiohttp.ClientSession, base: str) -> tuple[int, dict[str, object]]:
    async with http.get(f"{base}/healthz", timeout=aiohttp.ClientTimeout(total=10)) as response:
        return response.status, json.loads(await response.text())


async def test_a_locked_database_delays_questions_but_loses_none(
    data_dir: Path, tmp_path: Path, fresh_db_url: str
) -> None:
    threads = [f"1700040000.{n:06d}" for n in range(1, 6)]
    deliveries = [mention(ts) for ts in threads]
    async with FakeSlack() as fake, aiohttp.ClientSession() as http:
        env = serve_env(data_dir, fake, GRACE_DATABASE_URL=fresh_db_url)
        async with serving(env, tmp_path / "serve.log") as server:
            command, locked_s = _holder_command(fresh_db_url)
            holder = await asyncio.create_subprocess_exec(*command, stdout=asyncio.subprocess.PIPE)
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

                await wait_until(reports_degraded, within=locked_s, what="/healthz to degrade")
                assert degraded[0] == {
                    "ok": False,
                    "status": "degraded",
                    "reason": "database unavailable",
                }
                assert holder.returncode is None, "the database was still locked"

                await asyncio.wait_for(holder.wait(), timeout=locked_s + 30)
                await redeliver_unacked(http, server.base, deliveries)  # Slack's retries
                assert all(d.acked for d in deliveries), [d.statuses for d in deliveries]

                async def healthy() -> bool:
                    return (await _health(http, server.base))[0] == 200

                await wait_until(healthy, within=120, what="/healthz to recover")
                await wait_answered(fake, threads, fresh_db_url, within=180)
            finally:
                if holder.returncode is None:
                    holder.kill()
                    await holder.wait()
    assert {ts: answers(fake, ts) for ts in threads} == dict.fromkeys(threads, 1)
