"""`grace serve` in two processes (bot/slack/front.py): the front checks, stores and acks;
its worker child does the rest. The worker dies with the front (kill -9 included), the
front starts a new worker when its worker dies and nothing acknowledged is lost, and
what the front does not take itself (a slash command) is answered by the worker."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import time
from pathlib import Path

import aiohttp

from bot.service.worker_process import MAX_QUICK_FAILURES, restart_delay
from bot.simulator.requests import FORM_CONTENT_TYPE, form_body, signed_headers, slash_command_form
from bot.simulator.webapi import FakeSlack
from tests.databases import sqlite_url
from tests.faults.helpers import (
    SECRET,
    answers,
    mention,
    send,
    serve_env,
    serving,
    start_server,
    wait_answered,
    wait_until,
)


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def _gone(pid: int) -> bool:
    """Exited (a zombie nobody reaped counts: it holds and does nothing)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return True
    return stat.rsplit(b")", 1)[-1].split()[0] in (b"Z", b"X")


async def _one_worker(front_pid: int) -> int:
    found: list[int] = []

    async def one() -> bool:
        found[:] = _children(front_pid)
        return len(found) == 1

    await wait_until(one, within=60, what="one worker process under grace serve")
    return found[0]


async def test_the_worker_dies_with_a_killed_front(data_dir: Path, tmp_path: Path) -> None:
    async with FakeSlack() as fake:
        server = await start_server(serve_env(data_dir, fake), 0, tmp_path / "serve.log")
        worker = await _one_worker(server.process.pid)
        assert not _gone(worker)
        server.kill()
        await server.process.wait()

        async def gone() -> bool:
            return _gone(worker)

        await wait_until(gone, within=30, what="the worker to die with its front")


async def test_a_killed_worker_is_replaced_and_loses_nothing(
    data_dir: Path, tmp_path: Path
) -> None:
    async with FakeSlack() as fake, aiohttp.ClientSession() as http:
        env = serve_env(data_dir, fake)
        async with serving(env, tmp_path / "serve.log") as server:
            first = await _one_worker(server.process.pid)
            os.kill(first, signal.SIGKILL)
            # Acked by the front while there may be no worker: stored, answered later.
            asked = mention("1700000500.000100")
            await send(http, server.base, asked)
            assert asked.acked, asked.statuses

            async def replaced() -> bool:
                children = _children(server.process.pid)
                return len(children) == 1 and children[0] != first

            await wait_until(replaced, within=60, what="a new worker process")

            async def healthy() -> bool:
                async with http.get(f"{server.base}/healthz") as response:
                    return response.status == 200

            await wait_until(healthy, within=60, what="/healthz to answer 200 again")
            await wait_answered(fake, [asked.thread], sqlite_url(data_dir), within=120)
            assert answers(fake, asked.thread) == 1
        assert "the worker process exited" in server.stderr()


async def test_a_slash_command_is_answered_through_the_front(
    data_dir: Path, tmp_path: Path
) -> None:
    async with FakeSlack() as fake, aiohttp.ClientSession() as http:
        async with serving(serve_env(data_dir, fake), tmp_path / "serve.log") as server:
            body = form_body(slash_command_form(text="help"))
            headers = signed_headers(SECRET, body, content_type=FORM_CONTENT_TYPE)
            started = time.monotonic()
            async with http.post(
                f"{server.base}/slack/events", data=body.encode(), headers=headers
            ) as response:
                assert response.status == 200
                answer = json.loads(await response.read())
            assert time.monotonic() - started < 3.0
            assert answer.get("blocks"), answer
            forged = dict(headers, **{"X-Slack-Signature": "v0=" + "0" * 64})
            async with http.post(
                f"{server.base}/slack/events", data=body.encode(), headers=forged
            ) as response:
                assert response.status == 401


async def test_signalling_front_and_worker_together_stops_both(
    data_dir: Path, tmp_path: Path
) -> None:
    """Ctrl-C in a terminal, or systemd's stop, signals both processes at once: the
    worker's exit is shutdown, not a crash — no new worker is started. A request still
    being read keeps the front's endpoint draining while the worker exits."""
    async with FakeSlack() as fake:
        server = await start_server(serve_env(data_dir, fake), 0, tmp_path / "serve.log")
        try:
            worker = await _one_worker(server.process.pid)
            _reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
            writer.write(
                b"POST /slack/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"Content-Length: 100\r\n\r\n{"
            )
            await writer.drain()
            os.kill(server.process.pid, signal.SIGTERM)
            os.kill(worker, signal.SIGTERM)
            seen: set[int] = set()

            async def worker_gone() -> bool:
                seen.update(_children(server.process.pid))
                return _gone(worker)

            await wait_until(worker_gone, within=60, what="the signalled worker to exit")
            writer.close()  # the front's drain ends
            code = await asyncio.wait_for(server.process.wait(), timeout=90)
        finally:
            server.kill()
        assert code == 0, server.stderr()[-3000:]
        assert "starting a new one" not in server.stderr()
        assert seen <= {worker}, seen


async def test_a_worker_that_keeps_dying_soon_after_ready_stops_grace_serve(
    data_dir: Path, tmp_path: Path
) -> None:
    """Each new worker dies right after it is ready: that is a quick failure, the next
    one starts after a longer pause, and after `MAX_QUICK_FAILURES` in a row grace
    serve exits with code 1 and says so in one line."""
    async with FakeSlack() as fake, aiohttp.ClientSession() as http:
        server = await start_server(serve_env(data_dir, fake), 0, tmp_path / "serve.log")
        try:
            killed: list[int] = []
            for _ in range(MAX_QUICK_FAILURES):

                async def new_worker() -> bool:
                    children = [c for c in _children(server.process.pid) if c not in killed]
                    if not children or _gone(children[0]):
                        return False
                    async with http.get(f"{server.base}/healthz") as response:
                        if response.status != 200:  # forwarded: 200 once it is ready
                            return False
                    killed.append(children[0])
                    return True

                await wait_until(new_worker, within=90, what="a new ready worker")
                os.kill(killed[-1], signal.SIGKILL)
            code = await asyncio.wait_for(server.process.wait(), timeout=60)
        finally:
            server.kill()
        stderr = server.stderr()
        assert code == 1, stderr[-3000:]
        assert stderr.count(f"failed {MAX_QUICK_FAILURES} times in a row") == 1, stderr[-3000:]
        delays = [float(d) for d in re.findall(r"starting a new one in ([0-9.]+) s", stderr)]
        assert delays == [restart_delay(n) for n in range(1, MAX_QUICK_FAILURES)], delays
        assert delays == sorted(delays) and delays[0] < delays[-1]
