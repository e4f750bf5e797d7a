"""The real `grace serve` process, killed while questions wait for an agent slot: every
question Slack was told we took (the 200 ack) is answered by the next process, once —
in both layouts (a front and its worker; `--one-process`)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

import aiohttp
import pytest

from agent.schemas import RunStatus
from bot.simulator.webapi import FakeSlack
from tests.durable.helpers import stored_runs
from tests.faults.helpers import (
    answers,
    mention,
    send,
    serve_env,
    serving,
    start_server,
    wait_until,
)

THREADS = ["1700009000.000100", "1700009000.000200", "1700009000.000300"]


async def _statuses(url: str) -> dict[str, RunStatus]:
    return {s.thread.thread_ts: s.status for s in await stored_runs(url)}


async def _wait_for(url: str, done: Callable[[dict[str, RunStatus]], bool]) -> dict[str, RunStatus]:
    deadline = time.monotonic() + 60
    while True:
        statuses = await _statuses(url)
        if done(statuses):
            return statuses
        assert time.monotonic() < deadline, f"runs stuck at {statuses}"
        await asyncio.sleep(0.1)


@pytest.mark.parametrize("flags", [(), ("--one-process",)], ids=["front-and-worker", "one-process"])
async def test_questions_waiting_for_a_slot_survive_a_crash_and_are_answered_once(
    data_dir: Path, tmp_path: Path, fresh_db_url: str, flags: tuple[str, ...]
) -> None:
    url = fresh_db_url
    async with FakeSlack() as fake:
        env = serve_env(
            data_dir,
            fake,
            GRACE_DATABASE_URL=url,
            GRACE_SLACK__MAX_CONCURRENT_RUNS="1",
            GRACE_SLACK__PLAN_DISPLAY="message",  # the delayed postMessage holds the slot
        )
        first = await start_server(env, 0, tmp_path / "serve-1.log", flags=flags)
        fake.set_delay("chat.postMessage", 30)  # the first run holds the only agent slot
        try:
            async with aiohttp.ClientSession() as http:
                for ts in THREADS:
                    delivery = mention(ts)
                    await send(http, first.base, delivery)
                    assert delivery.statuses == [200]
            taken = await _wait_for(url, lambda s: len(s) == len(THREADS))
        finally:
            first.kill()
            await first.process.wait()
        assert sorted(taken) == THREADS, "every acked question is stored at once"
        waiting = [ts for ts, status in taken.items() if status is RunStatus.PLANNING]
        assert len(waiting) >= 2, f"expected questions queued behind the busy one: {taken}"

        fake.set_delay("chat.postMessage", 0)
        async with serving(env, tmp_path / "serve-2.log", port=first.port, flags=flags):
            answered = await _wait_for(
                url, lambda s: all(status is RunStatus.ANSWERED for status in s.values())
            )
            # Answers reach Slack through the outbox, a moment after the run is stored.
            await wait_until(
                lambda: all(answers(fake, ts) for ts in THREADS),
                within=60,
                what="an answer to reach Slack in every thread",
            )

    assert sorted(answered) == THREADS
    for ts in THREADS:
        count = answers(fake, ts)
        assert count == 1, f"thread {ts}: {count} answers"
