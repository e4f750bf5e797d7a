"""A worker whose process exited but was never reaped (a zombie: its parent died too and
the container's pid 1 does not reap) is dead: what it held may be taken over at once."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent.workers import is_dead_here

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")


def _state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[-1].split()[0].decode()


def test_an_unreaped_exited_worker_is_dead() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        deadline = time.monotonic() + 30
        while _state(child.pid) != "Z":  # exited, not reaped: os.kill(pid, 0) still works
            assert time.monotonic() < deadline, "the child never exited"
            time.sleep(0.01)
        os.kill(child.pid, 0)
        assert is_dead_here(f"{socket.gethostname()}:{child.pid}:cafe0001")
    finally:
        child.wait()


def test_a_running_worker_is_alive() -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE
    )
    try:
        assert not is_dead_here(f"{socket.gethostname()}:{child.pid}:cafe0002")
    finally:
        assert child.stdin is not None
        child.stdin.close()
        child.wait()
