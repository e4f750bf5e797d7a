"""Two real `grace serve` replicas on one PostgreSQL database, each with its own
knowledge-base directory built from the same documents: 200 questions split across
them, one replica killed with kill -9 half-way and started again. Every question is
answered exactly once, and a pause answered on both replicas at once (a thread reply to
one, the option button to the other) resumes its run once."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from agent.schemas import RunStatus
from blocks import ids
from bot.simulator.requests import (
    FORM_CONTENT_TYPE,
    JSON_CONTENT_TYPE,
    block_actions_payload,
    interactive_body,
    json_body,
    message_envelope,
    signed_headers,
)
from bot.simulator.webapi import FakeSlack
from bot.simulator.workspace import DEFAULT_CHANNEL_ID, StoredMessage
from storage.db import make_engine
from storage.run_store import SqlRunStore
from tests.bot.conftest import SECRET
from tests.durable.helpers import copy_data_dir

from .helpers import (
    Delivery,
    Server,
    answers,
    mention,
    redeliver_unacked,
    send,
    serve_env,
    start_server,
    wait_answered,
    wait_until,
)

QUESTIONS = 200
ANSWERABLE = [
    "How many vacation days do new employees get?",
    "What is the meal expense limit per day?",
    "How long must my password be?",
    "経費精算の締め切りはいつですか？",
]
PAUSING = "What is the latest version?"  # the offline planner asks which product
KILL_AFTER_ACKS = 25
"""Replica A is killed once it has acknowledged this many of its first 50 questions."""
IN_FLIGHT = 16
"""Event deliveries at once, across both replicas (Slack sends them as they happen)."""


def _thread(n: int) -> str:
    return f"1700060000.{n:06d}"


def _question(n: int) -> str:
    return PAUSING if n % 10 == 0 else ANSWERABLE[n % len(ANSWERABLE)]


def _option_button(message: StoredMessage, label: str) -> tuple[str, str] | None:
    """(action_id, value) of the option button whose text mentions `label`."""
    stack: list[Any] = list(message.blocks)
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, dict):
            action_id = str(node.get("action_id", ""))
            text = json.dumps(node.get("text", ""), ensure_ascii=False)
            if action_id.startswith(f"{ids.ESCALATE_OPTION}:") and label in text:
                return action_id, str(node.get("value", ""))
            stack.extend(v for v in node.values() if isinstance(v, dict | list))
    return None


def _question_message(fake: FakeSlack, thread_ts: str) -> StoredMessage | None:
    for message in fake.thread(DEFAULT_CHANNEL_ID, thread_ts):
        if _option_button(message, "Beacon Server") is not None:
            return message
    return None


async def _post(http: aiohttp.ClientSession, base: str, body: str, content_type: str) -> int:
    headers = signed_headers(SECRET, body, content_type=content_type)
    async with http.post(
        f"{base}/slack/events",
        data=body.encode(),
        headers=headers,
        timeout=aiohttp.ClientTimeout(30),
    ) as response:
        await response.read()
        return response.status


async def _answer_pause_on_both(
    http: aiohttp.ClientSession, fake: FakeSlack, thread_ts: str, reply_to: Server, click_on: Server
) -> None:
    """The asker replies in the thread (to one replica) and clicks the option button (on
    the other) at the same moment."""
    message = _question_message(fake, thread_ts)
    assert message is not None, f"thread {thread_ts} has no question to answer"
    button = _option_button(message, "Beacon Server")
    assert button is not None
    action_id, value = button
    reply_ts = "1700070000." + thread_ts.split(".")[1]  # a new message in the thread
    reply = message_envelope(text="Beacon Server", ts=reply_ts, thread_ts=thread_ts)
    click = block_actions_payload(
        action_id=action_id,
        value=value,
        channel=message.channel,
        message_ts=message.ts,
        message=message.to_api(),
    )
    statuses = await asyncio.gather(
        _post(http, reply_to.base, json_body(reply), JSON_CONTENT_TYPE),
        _post(http, click_on.base, interactive_body(click), FORM_CONTENT_TYPE),
    )
    assert statuses == [200, 200], statuses


def _unacked(deliveries: list[Delivery]) -> dict[str, list[int | str]]:
    return {d.thread: d.statuses for d in deliveries if not d.acked}


# Replicas need a database server they share; SQLite is one process (README).
@pytest.mark.parametrize("db_backend", ["postgresql"])
async def test_two_replicas_answer_each_question_once_through_a_kill_9(
    sample_data_dir: Path, tmp_path: Path, fresh_db_url: str
) -> None:
    threads = [_thread(n) for n in range(1, QUESTIONS + 1)]
    deliveries = [mention(ts, text=_question(n)) for n, ts in enumerate(threads, start=1)]
    pausing = [ts for n, ts in enumerate(threads, start=1) if _question(n) == PAUSING]
    answerable = [ts for ts in threads if ts not in pausing]
    async with FakeSlack() as fake, aiohttp.ClientSession() as http:
        envs = [
            serve_env(
                copy_data_dir(sample_data_dir, tmp_path / name),
                fake,
                GRACE_DATABASE_URL=fresh_db_url,
                GRACE_EXECUTION__LEASE_SECONDS="3",  # a dead replica's runs move on soon
            )
            for name in ("replica-a", "replica-b")
        ]
        a, b = await asyncio.gather(
            start_server(envs[0], 0, tmp_path / "a.log"),
            start_server(envs[1], 0, tmp_path / "b.log"),
        )
        servers = [a, b]
        try:
            # First half: alternate replicas; kill -9 A once it has acked 25 of its 50.
            first_half = deliveries[: QUESTIONS // 2]
            to_a = first_half[0::2]
            enough = asyncio.Event()
            in_flight = asyncio.Semaphore(IN_FLIGHT)

            async def deliver(delivery: Delivery, server: Server) -> None:
                async with in_flight:
                    await send(http, server.base, delivery)
                if sum(d.acked for d in to_a) >= KILL_AFTER_ACKS:
                    enough.set()

            async def kill_a() -> None:
                await asyncio.wait_for(enough.wait(), timeout=120)
                a.kill()

            killer = asyncio.create_task(kill_a())
            await asyncio.gather(*(deliver(d, servers[i % 2]) for i, d in enumerate(first_half)))
            await killer
            await a.process.wait()
            acked_by_a = sum(d.acked for d in to_a)
            # Slack retries what was not acked; the load balancer sends it to B.
            await redeliver_unacked(http, b.base, first_half)
            assert all(d.acked for d in first_half), _unacked(first_half)

            a = servers[0] = await start_server(envs[0], a.port, tmp_path / "a2.log")
            second_half = deliveries[QUESTIONS // 2 :]
            await asyncio.gather(*(deliver(d, servers[i % 2]) for i, d in enumerate(second_half)))
            await redeliver_unacked(http, b.base, second_half)
            assert all(d.acked for d in second_half), _unacked(second_half)

            await wait_until(
                lambda: (
                    all(answers(fake, ts) >= 1 for ts in answerable)
                    and all(_question_message(fake, ts) for ts in pausing)
                ),
                within=600,
                what="an answer or a question in every thread",
            )
            await asyncio.gather(
                *(
                    _answer_pause_on_both(http, fake, ts, servers[i % 2], servers[1 - i % 2])
                    for i, ts in enumerate(pausing)
                )
            )
            await wait_answered(fake, pausing, fresh_db_url, within=300)  # the resumed runs
        finally:
            codes = await asyncio.gather(*(s.stop() for s in servers))
        assert codes == [0, 0], [s.stderr()[-3000:] for s in servers]

    print(f"replica A killed after acking {acked_by_a} of its 50 first questions")
    counts = {ts: answers(fake, ts) for ts in threads}
    assert {ts: n for ts, n in counts.items() if n != 1} == {}
    engine = make_engine(fresh_db_url)
    try:
        store = SqlRunStore(engine)
        runs = await store.runs.list_runs(limit=QUESTIONS * 2)
        assert sorted(r.thread.thread_ts for r in runs) == threads, "one run per question"
        assert {r.status for r in runs} == {RunStatus.ANSWERED}
        for run in runs:
            if run.thread.thread_ts in pausing:
                trail = [e.event_type for e in await store.events(run.run_id)]
                assert trail.count("intervention_answered") == 1, trail
                assert trail.count("answer_ready") == 1, trail
                assert "4.2" in (run.final_answer or ""), "answered for Beacon Server"
    finally:
        await engine.dispose()
