"""The same Slack message delivered twice — under a second event id, or as Slack's retry
of the same one — starts one run and gets one answer."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp

from bot.simulator.webapi import FakeSlack
from tests.durable.helpers import stored_runs

from .helpers import answers, mention, send, serve_env, serving, wait_answered


async def test_one_message_under_two_event_ids_and_a_retry_is_one_run(
    data_dir: Path, tmp_path: Path, fresh_db_url: str
) -> None:
    thread = "1700050000.000100"
    first, second = mention(thread, event_id="Ev0DUP0001"), mention(thread, event_id="Ev0DUP0002")
    async with FakeSlack() as fake, aiohttp.ClientSession() as http:
        env = serve_env(data_dir, fake, GRACE_DATABASE_URL=fresh_db_url)
        async with serving(env, tmp_path / "serve.log") as server:
            await asyncio.gather(send(http, server.base, first), send(http, server.base, second))
            await send(http, server.base, first, retry_num=1)
            assert first.statuses == [200, 200] and second.statuses == [200]
            await wait_answered(fake, [thread], fresh_db_url, within=120)
    runs = await stored_runs(fresh_db_url, limit=10)
    assert [r.thread.thread_ts for r in runs] == [thread]
    assert answers(fake, thread) == 1
