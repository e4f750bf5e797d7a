"""Running the real `grace` command as separate OS processes, on copies of one data
directory with the sample knowledge base ingested."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
from pathlib import Path

from storage.db import make_engine
from storage.run_store import SqlRunStore

GRACE = [sys.executable, "-m", "bot.cli"]


def grace_env(data_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GRACE_", "GOOGLE_"))}
    env.update(GRACE_DATA_DIR=str(data_dir), GRACE_LOG_LEVEL="WARNING", **extra)
    return env


def run_grace(
    env: dict[str, str], *args: str, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*GRACE, *args], env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


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


def database_url(data_dir: Path) -> str:
    return f"sqlite+aiosqlite:///{data_dir.resolve()}/grace.db"


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
