"""The real `grace serve` process, killed while questions wait for an agent slot: every
question Slack was told we took (the 200 ack) is answered by the next process, once."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path

import aiohttp

from agent.schemas import RunStatus
from bot.simulator.workspace import StoredMessage
from storage.db import make_engine
from storage.run_store import SqlRunStore
from tests.bot.conftest import SECRET, has_feedback_buttons
from tests.durable.helpers import copy_data_dir, free_port, grace_env
from tests.fakes.fake_slack import (
    DEFAULT_CHANNEL_ID,
    JSON_CONTENT_TYPE,
    FakeSlack,
    app_mention_envelope,
    json_body,
    signed_headers,
)

QUESTION = "How many vacation days do new employees get?"
THREADS = ["1700009000.000100", "1700009000.000200", "1700009000.000300"]


async def _serve(env: dict[str, str], port: int) -> asyncio.subprocess.Process:
    """Start `grace serve` and wait until its /healthz answers."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", "serve", "--port", str(port), "--host", "127.0.0.1",
        env=env, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    async with aiohttp.ClientSession() as http:
        while True:
            assert process.returncode is None, "grace serve exited during start-up"
            assert time.monotonic() < deadline, "grace serve never became healthy"
            try:
                async with http.get(f"http://127.0.0.1:{port}/healthz") as response:
                    if response.status == 200:
                        return process
            except aiohttp.ClientConnectionError:
                pass
            await asyncio.sleep(0.1)


async def _statuses(url: str) -> dict[str, RunStatus]:
    engine = make_engine(url)
    try:
        store = SqlRunStore(engine)
        return {s.thread.thread_ts: s.status for s in await store.list_runs(limit=100)}
    finally:
        await engine.dispose()


async def _wait_for(url: str, done: Callable[[dict[str, RunStatus]], bool]) -> dict[str, RunStatus]:
    deadline = time.monotonic() + 60
    while True:
        statuses = await _statuses(url)
        if done(statuses):
            return statuses
        assert time.monotonic() < deadline, f"runs stuck at {statuses}"
        await asyncio.sleep(0.1)


def _answers(fake: FakeSlack, ts: str) -> list[StoredMessage]:
    return [m for m in fake.thread(DEFAULT_CHANNEL_ID, ts) if has_feedback_buttons(m)]


async def test_questions_waiting_for_a_slot_survive_a_crash_and_are_answered_once(
    sample_data_dir: Path, tmp_path: Path, fresh_db_url: str
) -> None:
    data_dir = copy_data_dir(sample_data_dir, tmp_path / "data")
    url = fresh_db_url
    async with FakeSlack() as fake:
        env = grace_env(
            data_dir,
            GRACE_DATABASE_URL=url,
            SLACK_BOT_TOKEN="xoxb-test",
            SLACK_SIGNING_SECRET=SECRET,
            SLACK_API_URL=fake.base_url,
            GRACE_SLACK__MAX_CONCURRENT_RUNS="1",
            GRACE_SLACK__PLAN_DISPLAY="message",  # the delayed postMessage holds the slot
        )
        port = free_port()
        first = await _serve(env, port)
        fake.set_delay("chat.postMessage", 30)  # the first run holds the only agent slot
        try:
            async with aiohttp.ClientSession() as http:
                for ts in THREADS:
                    body = json_body(app_mention_envelope(text=QUESTION, ts=ts))
                    headers = signed_headers(SECRET, body, content_type=JSON_CONTENT_TYPE)
                    async with http.post(
                        f"http://127.0.0.1:{port}/slack/events", data=body, headers=headers
                    ) as response:
                        assert response.status == 200
            taken = await _wait_for(url, lambda s: len(s) == len(THREADS))
        finally:
            os.kill(first.pid, signal.SIGKILL)
            await first.wait()
        assert sorted(taken) == THREADS, "every acked question is stored at once"
        waiting = [ts for ts, status in taken.items() if status is RunStatus.PLANNING]
        assert len(waiting) >= 2, f"expected questions queued behind the busy one: {taken}"

        fake.set_delay("chat.postMessage", 0)
        second = await _serve(env, port)
        try:
            answered = await _wait_for(
                url, lambda s: all(status is RunStatus.ANSWERED for status in s.values())
            )
            # Answers reach Slack through the outbox, a moment after the run is stored.
            deadline = time.monotonic() + 60
            while not all(_answers(fake, ts) for ts in THREADS):
                assert time.monotonic() < deadline, "an answer never reached Slack"
                await asyncio.sleep(0.1)
        finally:
            second.send_signal(signal.SIGTERM)
            _, err = await asyncio.wait_for(second.communicate(), timeout=60)
        assert second.returncode == 0, err.decode()

    assert sorted(answered) == THREADS
    for ts in THREADS:
        answers = _answers(fake, ts)
        assert len(answers) == 1, f"thread {ts}: {len(answers)} answers"
