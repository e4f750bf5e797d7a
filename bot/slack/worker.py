"""`grace serve`'s worker process: the whole bot but the public endpoint.

Started by the front (bot/slack/front.py, bot/service/worker_process.py) as
`grace serve --worker-fd N --parent-pid P`, it reads the same settings, builds the bot as
`grace serve --one-process` does, recovers what a dead process left, starts the sweeper,
and serves the requests the front forwards on 127.0.0.1 (a port the system picks). Then
it says `Ready` (its inbox owner id and port) and processes the rows the front stores for
it as soon as it is told their ids (`Take`; the inbox sweep finds any it was not told
of). It stops on SIGTERM (finishing or handing over its runs) and, when the front dies,
with it (killed by the kernel; or at end of file on the socket).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from aiohttp import web

from bot.service.settings import Settings
from bot.service.worker_process import (
    Ready,
    child_channel,
    die_with_parent,
    parse_take,
    ready_line,
)
from bot.slack.compose import Bot, create_bot
from bot.slack.runners import http_app, start_bot, stop_on_signals
from storage.db import WriteGate, yield_writes_to

log = logging.getLogger(__name__)


async def run_worker(
    settings: Settings, *, fd: int, parent_pid: int, gate_fd: int | None = None
) -> int:
    die_with_parent(parent_pid)
    if gate_fd is not None:  # the front's inbox writes go first
        yield_writes_to(WriteGate(gate_fd))
    reader, writer = await child_channel(fd)
    stop = stop_on_signals()
    bot = await create_bot(settings)
    runner = web.AppRunner(http_app(bot), access_log=None)  # the front logs requests
    try:
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        runtime = await start_bot(bot)
    except BaseException:
        await runner.cleanup()
        await bot.close()
        raise
    port = int(runner.addresses[0][1])
    writer.write(ready_line(Ready(owner=bot.intake.owner, port=port)))
    listening = asyncio.create_task(_listen(bot, reader, stop), name="front messages")
    log.info("worker ready on 127.0.0.1:%s; %d runs recovered", port, runtime.recovered)
    try:
        await stop.wait()
    finally:
        listening.cancel()
        await asyncio.gather(listening, return_exceptions=True)
        await runner.cleanup()
        await runtime.stop(settings.slack.shutdown_grace_seconds)
        writer.close()
    return 0


async def _listen(bot: Bot, reader: asyncio.StreamReader, stop: asyncio.Event) -> None:
    """Take the rows the front hands over; at end of file the front is gone: stop."""
    taking: set[asyncio.Task[None]] = set()
    try:
        while line := await reader.readline():
            ids = parse_take(line)
            if ids:
                task = asyncio.create_task(_take(bot, ids), name="take")
                taking.add(task)
                task.add_done_callback(taking.discard)
    except ConnectionError:
        pass
    finally:
        for task in list(taking):
            with contextlib.suppress(asyncio.CancelledError):
                await task
    log.warning("the front process is gone; stopping")
    stop.set()


async def _take(bot: Bot, ids: list[int]) -> None:
    try:
        await bot.intake.take(ids)
    except Exception:  # a database fault: the inbox sweep takes them in a few seconds
        log.exception("could not read the rows the front stored; the inbox sweep will")
