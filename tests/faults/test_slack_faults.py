"""Slack failing while runs finish: 500s (JSON and plain-text bodies), a long stretch of
429s, and a post Slack took but answered too late. Every thread ends with exactly one
answer; nothing is posted twice."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import aiohttp

from bot.simulator.webapi import FakeSlack
from bot.simulator.workspace import DEFAULT_CHANNEL_ID
from tests.bot.conftest import is_plan_message

from .helpers import answers, mention, send, serve_env, serving, wait_answered, wait_until

RATE_LIMITED_S = float(os.environ.get("GRACE_FAULTS_429_SECONDS", "40"))
"""How long Slack answers 429 (40 s, Slack's real worst case we test; shorter locally)."""


def _hit(fake: FakeSlack, error: str, at_least: int) -> bool:
    """Slack has answered at least this many calls with this failure."""
    return sum(1 for c in fake.calls if c.response.get("error") == error) >= at_least


async def _ask(http: aiohttp.ClientSession, base: str, threads: list[str]) -> None:
    deliveries = [mention(ts) for ts in threads]
    await asyncio.gather(*(send(http, base, d) for d in deliveries))
    assert all(d.acked for d in deliveries), [d.statuses for d in deliveries]


async def test_500s_with_json_and_plain_text_bodies_lose_no_answer(
    data_dir: Path, tmp_path: Path, fresh_db_url: str
) -> None:
    threads = [f"1700030000.{n:06d}" for n in range(1, 11)]
    async with FakeSlack() as fake, aiohttp.ClientSession() as http:
        env = serve_env(data_dir, fake, GRACE_DATABASE_URL=fresh_db_url)
        async with serving(env, tmp_path / "serve.log") as server:
            await _ask(http, server.base, threads)
            # Each outage lasts until the runs have met it a few times, then ends.
            fake.fail_for("*", 120, 500)
            await wait_until(lambda: _hit(fake, "http_500", 3), within=60, what="JSON 500s")
            fake.clear_faults()
            fake.fail_for("*", 120, 500, plain_text=True)
            await wait_until(lambda: _hit(fake, "plain_text", 3), within=60, what="plain 500s")
            fake.clear_faults()
            await wait_answered(fake, threads, fresh_db_url, within=180)
        log = server.stderr()
    failed = [c for c in fake.calls if c.status == 500]
    assert any(c.response.get("error") == "plain_text" for c in failed), "plain-text 500s hit"
    assert any(c.response.get("error") == "http_500" for c in failed), "JSON 500s hit"
    assert "has no attribute" not in log, log[-3000:]
    assert {ts: answers(fake, ts) for ts in threads} == dict.fromkeys(threads, 1)


async def test_429s_for_a_long_stretch_are_waited_out(
    data_dir: Path, tmp_path: Path, fresh_db_url: str
) -> None:
    threads = [f"1700031000.{n:06d}" for n in range(1, 11)]
    retry_after = 5
    async with FakeSlack() as fake, aiohttp.ClientSession() as http:
        env = serve_env(data_dir, fake, GRACE_DATABASE_URL=fresh_db_url)
        async with serving(env, tmp_path / "serve.log") as server:
            await _ask(http, server.base, threads)
            started = time.monotonic()
            fake.fail_for("*", RATE_LIMITED_S, 429, retry_after=retry_after)
            await wait_answered(fake, threads, fresh_db_url, within=RATE_LIMITED_S + 180)
    assert {ts: answers(fake, ts) for ts in threads} == dict.fromkeys(threads, 1)
    limited = [c for c in fake.calls if c.status == 429]
    assert limited, "the runs met the 429s"
    # Retry-After is honoured: per run, about one attempt every `retry_after` seconds.
    most = len(threads) * (RATE_LIMITED_S / retry_after + 2) * 2
    assert len(limited) <= most, f"{len(limited)} calls during {RATE_LIMITED_S:.0f} s of 429s"
    assert time.monotonic() - started >= RATE_LIMITED_S


async def test_a_post_slack_took_but_answered_too_late_is_not_posted_again(
    data_dir: Path, tmp_path: Path, fresh_db_url: str
) -> None:
    thread = "1700032000.000100"
    async with FakeSlack() as fake, aiohttp.ClientSession() as http:
        env = serve_env(
            data_dir,
            fake,
            GRACE_DATABASE_URL=fresh_db_url,
            GRACE_SLACK__REQUEST_TIMEOUT_SECONDS="2",
        )
        async with serving(env, tmp_path / "serve.log") as server:
            fake.answer_late("chat.postMessage", 4, times=3)  # each post lands, then times out
            await _ask(http, server.base, [thread])
            await wait_answered(fake, [thread], fresh_db_url, within=180)
    messages = fake.thread(DEFAULT_CHANNEL_ID, thread)
    assert answers(fake, thread) == 1
    assert sum(1 for m in messages if is_plan_message(m)) == 1, [m.text for m in messages]
    assert fake.calls_to("conversations.replies"), "the thread was searched before posting again"
