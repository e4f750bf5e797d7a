"""Who is driving a run: worker ids and how to tell that a worker is gone.

A worker id is `host:pid:token`. A run that is PLANNING or RUNNING carries its worker's
id and a lease the worker keeps renewing. Another process may take the run over once the
lease has run out — or at once when the worker is visibly dead: same host, and its pid
is gone or is now ours (a restarted container reuses pid 1 under the same host name).
"""

from __future__ import annotations

import os
import socket
import uuid
from datetime import datetime

from agent.schemas import RunState

_ALIVE_HERE: set[str] = set()
"""Worker ids made in this process: with our pid, anything else is an earlier life."""


def new_worker_id() -> str:
    worker = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
    _ALIVE_HERE.add(worker)
    return worker


def retire(worker: str) -> None:
    """`worker` (made here) is done for good: what it still holds may be taken over."""
    _ALIVE_HERE.discard(worker)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, but someone else's
        return True
    return not _zombie(pid)


def _zombie(pid: int) -> bool:
    """A process that has exited but was not reaped yet (its parent died too, and the
    container's pid 1 does not reap): it holds nothing, it works on nothing. `grace
    serve`'s worker child is one for a moment after a kill -9 of the whole process."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[-1].split()
    except OSError:  # no /proc (not Linux), or it went meanwhile: trust the signal
        return False
    return bool(fields) and fields[0] in (b"Z", b"X")


def is_dead_here(worker: str) -> bool:
    """True only when `worker` certainly died: it ran on this host and its process is
    gone, or its pid is now this process, which never made that worker id."""
    host, _, rest = worker.partition(":")
    pid_text, _, _token = rest.partition(":")
    if host != socket.gethostname() or not pid_text.isdigit():
        return False
    pid = int(pid_text)
    if pid == os.getpid():
        return worker not in _ALIVE_HERE
    return not _pid_alive(pid)


def is_abandoned(state: RunState, *, me: str, now: datetime) -> bool:
    """A run another process may take over: active, and its worker is gone or silent."""
    if not state.status.is_active:
        return False
    if state.worker is None or state.lease_expires_at is None:
        return True  # written before leases existed, or never leased
    if state.worker == me:
        return False
    return state.lease_expires_at <= now or is_dead_here(state.worker)
