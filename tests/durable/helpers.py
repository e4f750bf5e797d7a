"""Running the real `grace` command as separate OS processes, on copies of one data
directory with the sample knowledge base ingested."""

from __future__ import annotations

import asyncio
import io
import logging
import os
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from datetime import datetime
from pathlib import Path
from typing import TextIO

from sqlalchemy import select

from agent.schemas import RunState
from storage.db import make_engine, reader
from storage.run_store import SqlRunStore
from storage.tables import RunRow

GRACE = [sys.executable, "-m", "bot.cli"]


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without any GRACE_ or GOOGLE_ setting (the developer's
    own must not reach a `grace` under test), plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GRACE_", "GOOGLE_"))}
    env.update(extra)
    return env


def grace_env(data_dir: Path, **extra: str) -> dict[str, str]:
    return clean_env(GRACE_DATA_DIR=str(data_dir), GRACE_LOG_LEVEL="WARNING", **extra)


def run_grace(
    env: dict[str, str], *args: str, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*GRACE, *args], env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


@contextmanager
def _stdin(stream: TextIO) -> Iterator[None]:
    """Standard input read from `stream` (run_grace's is closed: nothing to read)."""
    saved, sys.stdin = sys.stdin, stream
    try:
        yield
    finally:
        sys.stdin = saved


def grace_here(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """`grace ARGS` in this process (`bot.cli.main`, the console script's entry point) with
    `env` as its environment; the same result as `run_grace`, without a new interpreter's
    start-up (about 2 CPU-seconds). For the steps whose process boundary is not what the
    test is about: the ones that are (a restart, kill -9, a second replica) use `run_grace`.
    Not from a running event loop: `grace_here_async` there."""
    from bot.cli.main import main
    from bot.service.logs import CONTENT_LOGGERS

    out, err = io.StringIO(), io.StringIO()
    saved_env = dict(os.environ)
    root = logging.getLogger()
    saved_root = (root.handlers[:], root.level)
    saved_levels = {name: logging.getLogger(name).level for name in CONTENT_LOGGERS}
    umask = os.umask(0o022)  # main() sets its own; this process's is put back below
    for key in set(os.environ) - set(env):
        del os.environ[key]
    os.environ.update(env)
    try:
        with redirect_stdout(out), redirect_stderr(err), _stdin(io.StringIO()):
            try:
                code = main(list(args))
            except SystemExit as exc:  # --help
                code = exc.code if isinstance(exc.code, int) else 1
    finally:
        for key in set(os.environ) - set(saved_env):
            del os.environ[key]
        os.environ.update(saved_env)
        os.umask(umask)
        root.handlers[:], _ = saved_root
        root.setLevel(saved_root[1])
        for name, level in saved_levels.items():
            logging.getLogger(name).setLevel(level)
    return subprocess.CompletedProcess([*GRACE, *args], code, out.getvalue(), err.getvalue())


async def grace_here_async(env: dict[str, str], *args: str) -> tuple[int, str, str]:
    """`grace_here` from async code (in a thread: `main` runs its own event loop), with
    `grace_async`'s result."""
    result = await asyncio.to_thread(grace_here, env, *args)
    return result.returncode, result.stdout, result.stderr


async def grace_async(env: dict[str, str], *args: str) -> tuple[int, str, str]:
    """Run `grace` without blocking the event loop (the fake Gemini server lives on it)."""
    process = await asyncio.create_subprocess_exec(
        *GRACE, *args, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await asyncio.wait_for(process.communicate(), timeout=120)
    return process.returncode or 0, out.decode(), err.decode()


def copy_data_dir(source: Path, target: Path) -> Path:
    subprocess.run(["cp", "-r", str(source), str(target)], check=True)
    return target


async def audit_trail(url: str, run_id: str) -> list[str]:
    engine = make_engine(url)
    try:
        events = await SqlRunStore(engine).events(run_id)
        return [e.event_type for e in events]
    finally:
        await engine.dispose()


def free_port() -> int:
    """A port nothing listens on right now, for a `grace serve` under test."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def wait_until(
    check: Callable[[], bool | Awaitable[bool]], *, within: float, what: str
) -> None:
    """Poll `check` until it holds; fail after `within` seconds naming `what`."""
    deadline = time.monotonic() + within
    while True:
        result = check()
        if not isinstance(result, bool):
            result = await result
        if result:
            return
        assert time.monotonic() < deadline, f"timed out after {within:.0f} s waiting for {what}"
        await asyncio.sleep(0.25)


async def stored_runs(url: str, *, limit: int = 100) -> list[RunState]:
    """The runs in the database at `url`, read through an engine of this call's own
    (as another process would see them)."""
    engine = make_engine(url)
    try:
        return await SqlRunStore(engine).runs.list_runs(limit=limit)
    finally:
        await engine.dispose()


async def only_lease(url: str) -> datetime | None:
    """When the lease of the database's only run runs out, as stored (None: no lease)."""
    engine = make_engine(url)
    try:
        async with reader(engine).connect() as db:
            leases = list(await db.scalars(select(RunRow.lease_expires_at)))
    finally:
        await engine.dispose()
    assert len(leases) == 1, f"{len(leases)} runs"
    return leases[0]
