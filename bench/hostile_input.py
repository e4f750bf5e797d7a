"""Hostile input: how fast a real `grace serve` refuses each kind of malicious request.

    python -m bench.hostile_input [--rounds 50]

Starts `grace serve` (HTTP mode, offline model, empty data dir) against the fake Slack
Web API, then sends every body of `tests/faults/hostile.py` (invalid UTF-8, 100k-deep
JSON, a 600 KB nested form, 2 MiB, bad timestamps and signatures; unsigned and signed)
`--rounds` times, one at a time, and prints the status and the p50 / p99 time until the
response. The target: unsigned hostile bodies answered in under 10 ms. It is a
benchmark: the exit code is 0 whatever the numbers.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
from pathlib import Path

import aiohttp

from bot.simulator.webapi import FakeSlack
from tests.durable.helpers import grace_env
from tests.faults.helpers import free_port, start_server
from tests.faults.hostile import SECRET, catalogue, send

REPO = Path(__file__).resolve().parents[1]


async def bench(rounds: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        async with FakeSlack() as fake:
            env = grace_env(
                Path(tmp) / "data",
                GRACE_LLM__PROVIDER="offline",
                SLACK_BOT_TOKEN="xoxb-bench",
                SLACK_SIGNING_SECRET=SECRET,
                SLACK_API_URL=fake.base_url,
                PYTHONPATH=str(REPO),
            )
            server = await start_server(env, free_port(), Path(tmp) / "serve.log")
            url = f"{server.base}/slack/events"
            timings: dict[str, list[float]] = {}
            statuses: dict[str, set[int]] = {}
            try:
                async with aiohttp.ClientSession() as http:
                    for _ in range(rounds):
                        for case in catalogue():
                            status, seconds, _ = await send(http, url, case)
                            timings.setdefault(case.name, []).append(seconds)
                            statuses.setdefault(case.name, set()).add(status)
            finally:
                await server.stop()
    print(f"{'request':32} {'status':>6} {'p50 ms':>8} {'p99 ms':>8}")
    for name, seconds in timings.items():
        ordered = sorted(seconds)
        p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
        codes = ",".join(str(s) for s in sorted(statuses[name]))
        print(f"{name:32} {codes:>6} {statistics.median(ordered) * 1000:8.2f} {p99 * 1000:8.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=50)
    args = parser.parse_args()
    asyncio.run(bench(args.rounds))


if __name__ == "__main__":
    main()
