"""kill -9 just after Slack carried out `chat.startStream`, before the process stored the
stream's ts: the restarted process finds the stream in the thread and finishes it — no
plan left "in progress" forever, no second plan, one answer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bot.simulator.webapi import FakeSlack, RecordedCall
from bot.simulator.workspace import DEFAULT_CHANNEL_ID

from .helpers import (
    Server,
    answers,
    mention,
    send,
    serve_env,
    start_server,
    wait_settled,
    wait_until,
)

THREAD = "1700090000.000100"


@pytest.mark.parametrize("db_backend", ["sqlite"])
async def test_kill_9_just_after_start_stream_leaves_no_stream_open(
    data_dir: Path, tmp_path: Path, fresh_db_url: str
) -> None:
    async with FakeSlack() as fake, aiohttp.ClientSession() as http:
        env = serve_env(
            data_dir, fake, GRACE_DATABASE_URL=fresh_db_url, GRACE_SLACK__PLAN_DISPLAY="stream"
        )
        first: Server | None = None
        started = fake.handler("chat.startStream")

        def start(params: dict[str, Any], call: RecordedCall) -> dict[str, Any]:
            reply = started(params, call)
            if first is not None and len(fake.calls_to("chat.startStream")) == 1:
                first.kill()  # Slack has the stream; the process never hears of it
            return reply

        fake.add_method("chat.startStream", start)
        first = await start_server(env, 0, tmp_path / "first.log")
        delivery = mention(THREAD)
        await send(http, first.base, delivery)
        assert delivery.acked, delivery.statuses
        await first.process.wait()
        streams = [m for m in fake.thread(DEFAULT_CHANNEL_ID, THREAD) if m.streaming]
        assert len(streams) == 1, "killed with the stream open"

        second = await start_server(env, 0, tmp_path / "second.log")
        try:
            await wait_until(
                lambda: answers(fake, THREAD) >= 1, within=300, what="an answer in the thread"
            )
            await wait_settled(fresh_db_url)
        finally:
            code = await second.stop()
        assert code == 0, second.stderr()[-3000:]

    thread = fake.thread(DEFAULT_CHANNEL_ID, THREAD)
    assert [m.ts for m in thread if m.streaming] == [], "a plan left in progress"
    assert answers(fake, THREAD) == 1
    replies = [m for m in thread if m.bot_id]
    assert [m.ts for m in replies] == [streams[0].ts], "the stream was taken up again"
    assert len(fake.calls_to("chat.startStream")) == 1
