"""`grace serve`'s worker process, seen from the front (its parent).

The front only checks, stores and acks (bot/slack/front.py); everything else — processing
the inbox, driving runs, delivering the outbox, sweeping, the requests the front does not
take itself — is done by one child process, so the agent's work never competes with the
ack for the front's interpreter (one GIL) or event loop.

The two talk over a socket pair, one JSON object a line (`Ready`, `Take`). The child
dies with its parent: the kernel kills it when the parent dies, kill -9 included
(`PR_SET_PDEATHSIG`, Linux), and it stops on its own when the socket reaches end of file
(elsewhere). The parent restarts a child that died, after a pause that grows with each
quick failure, and gives up loudly (`failed` is set) after `MAX_QUICK_FAILURES` of them
in a row (a child that died before it was ready or soon after).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from pydantic import BaseModel, ValidationError

from storage.db import WriteGate

log = logging.getLogger(__name__)

WORKER_FLAG = "--worker-fd"
"""The hidden `grace serve` option that makes a process the worker, talking on this fd."""
GATE_FLAG = "--gate-fd"
"""The fd of the front's `WriteGate`, which the worker's writes yield to."""
MAX_QUICK_FAILURES = 5
"""Quick failures in a row (a worker that died before it was ready, or within
`QUICK_FAILURE_S` after) before `grace serve` gives up and exits with code 1."""
QUICK_FAILURE_S = 60.0
RESTART_DELAY_S = 0.5
MAX_RESTART_DELAY_S = 15.0
STOP_MARGIN_S = 30.0
"""Beyond its own shutdown grace, how long a stopping worker may take (draining the
outbox, closing) before it is killed."""
PR_SET_PDEATHSIG = 1
WORKER_NICENESS = 10
"""The worker runs at a lower CPU priority than the front: when the machine is short of
processor time, the acks get it first and the agent's work waits (it only ever waits a
little on a machine with time to spare: nice changes shares, not speed)."""


class Ready(BaseModel):
    """Child → parent: started (runs recovered) — rows stored for `owner` are its to
    process, and its own HTTP endpoint (everything the front forwards) is on `port`."""

    owner: str
    port: int


class Take(BaseModel):
    """Parent → child: these inbox rows were just stored for you."""

    ids: list[int]


class WorkerFailed(Exception):
    """The worker exited before it was ready; `code` is its exit code (it said why)."""

    def __init__(self, code: int) -> None:
        super().__init__(f"the worker process exited with {code} before it was ready")
        self.code = code


@dataclass(frozen=True)
class Started:
    process: asyncio.subprocess.Process
    writer: asyncio.StreamWriter
    ready: Ready
    reading: asyncio.Task[None]
    ready_at: float
    """When it said `Ready` (`time.monotonic`): a crash soon after is a quick failure."""

    def close(self) -> None:
        self.reading.cancel()
        self.writer.close()


class WorkerProcess:
    """The front's one worker child: start it, hand it rows, restart it when it dies."""

    def __init__(
        self,
        env: Mapping[str, str] | None = None,
        gate: WriteGate | None = None,
        stopping: asyncio.Event | None = None,
    ) -> None:
        self._env = dict(env) if env is not None else None
        self._gate = gate
        """The front's writes go first (`storage.db.WriteGate`), handed to each worker."""
        self._current: Started | None = None
        self._stop_requested = stopping
        """`grace serve`'s stop signal: set by the signal handler itself, so a worker that
        exits because it was signalled too (Ctrl-C, systemd) is not mistaken for a crash."""
        self._stopping = False
        self._watch: asyncio.Task[None] | None = None
        self.failed = asyncio.Event()
        """Set when new workers kept dying (at start-up or soon after): exit code 1."""
        self.on_ready: list[Callable[[Ready], None]] = []
        """Told of every worker that became ready (the first and each restarted one)."""

    @property
    def ready(self) -> Ready | None:
        """The running worker's `Ready`, or None while there is none (restarting)."""
        return self._current.ready if self._current is not None else None

    @property
    def pid(self) -> int | None:
        return self._current.process.pid if self._current is not None else None

    async def start(self) -> Ready:
        """Start the worker and wait until it is ready; `WorkerFailed` when it exits
        first (at start-up it printed its own one-line error)."""
        started = await self._spawn()
        self._current = started
        self._notify(started.ready)
        self._watch = asyncio.create_task(self._supervise(), name="worker supervisor")
        return started.ready

    def take(self, ids: list[int]) -> None:
        """Tell the worker these rows wait for it (best effort: a row it never hears of
        is found by its inbox sweep, or by the next worker's start-up)."""
        current = self._current
        if current is None or current.writer.is_closing():
            return
        with contextlib.suppress(ConnectionError, RuntimeError):
            current.writer.write(Take(ids=ids).model_dump_json().encode() + b"\n")

    def stopping(self) -> None:
        """From now on a worker that exits is not replaced (called first thing on
        shutdown, before the front's endpoint is drained, which may take a while)."""
        self._stopping = True

    @property
    def is_stopping(self) -> bool:
        return self._stopping or (
            self._stop_requested is not None and self._stop_requested.is_set()
        )

    async def stop(self, grace: float) -> int | None:
        """SIGTERM the worker (it finishes or hands over its runs within `grace`
        seconds, then closes) and wait for it; its exit code, None when there was none."""
        self.stopping()
        if self._watch is not None:
            self._watch.cancel()
            await asyncio.gather(self._watch, return_exceptions=True)
        current, self._current = self._current, None
        if current is None:
            return None
        process = current.process
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(signal.SIGTERM)
        try:
            code = await asyncio.wait_for(process.wait(), grace + STOP_MARGIN_S)
        except TimeoutError:
            log.error("the worker process did not stop in time; killing it")
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            code = await process.wait()
        current.close()
        return code

    # ------------------------------------------------------------------ internals

    def _notify(self, ready: Ready) -> None:
        for callback in self.on_ready:
            callback(ready)

    async def _spawn(self) -> Started:
        parent_end, child_end = socket.socketpair()
        args = [WORKER_FLAG, str(child_end.fileno()), "--parent-pid", str(os.getpid())]
        fds = [child_end.fileno()]
        if self._gate is not None:
            args += [GATE_FLAG, str(self._gate.fd)]
            fds.append(self._gate.fd)
        try:
            # A session of its own: a terminal's Ctrl-C reaches the front only, which
            # then stops the worker in order (SIGTERM, within the grace).
            process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "bot.cli", "serve", *args,
                pass_fds=fds,
                stdin=asyncio.subprocess.DEVNULL,
                env=self._env,
                start_new_session=True,
            )  # fmt: skip
        except BaseException:
            parent_end.close()
            raise
        finally:
            child_end.close()
        try:
            return await self._handshake(process, parent_end)
        except asyncio.CancelledError:  # stopping while it starts: no orphan left behind
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
            raise

    async def _handshake(
        self, process: asyncio.subprocess.Process, parent_end: socket.socket
    ) -> Started:
        """Wait for the new child's `Ready` (or its exit)."""
        reader, writer = await asyncio.open_unix_connection(sock=parent_end)
        exited = asyncio.create_task(process.wait())
        line_task = asyncio.create_task(reader.readline())
        try:
            done, _ = await asyncio.wait({exited, line_task}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            exited.cancel()
            line_task.cancel()
            writer.close()
            raise
        if line_task in done and line_task.result():
            exited.cancel()
            try:
                ready = Ready.model_validate_json(line_task.result())
            except ValidationError:
                process.kill()
                await process.wait()
                writer.close()
                raise WorkerFailed(-1) from None
            reading = asyncio.create_task(self._drain(reader), name="worker messages")
            return Started(process, writer, ready, reading, time.monotonic())
        line_task.cancel()
        code = await exited
        writer.close()
        raise WorkerFailed(code)

    async def _drain(self, reader: asyncio.StreamReader) -> None:
        """The child sends nothing after `Ready`; read until it closes."""
        with contextlib.suppress(ConnectionError):
            while await reader.readline():
                pass

    async def _supervise(self) -> None:
        """Wait for the worker to exit; unless stopping, start a new one after a pause
        that doubles with each quick failure (a new worker that died before it was
        ready, or within `QUICK_FAILURE_S` of it); after `MAX_QUICK_FAILURES` of them
        in a row, give up (`failed`: `grace serve` exits with code 1)."""
        failures = 0
        while not self.is_stopping:
            current = self._current
            assert current is not None
            code = await current.process.wait()
            if self.is_stopping:  # signalled with the front: `stop` collects it
                return
            current.close()
            self._current = None
            quick = time.monotonic() - current.ready_at < QUICK_FAILURE_S
            failures = failures + 1 if quick else 0
            while not self.is_stopping:
                if failures >= MAX_QUICK_FAILURES:
                    self._give_up(failures)
                    return
                delay = restart_delay(failures)
                log.error(
                    "the worker process exited (code %s); starting a new one in %.1f s",
                    code,
                    delay,
                    extra={"event": "worker_exited", "exit_code": code},
                )
                await asyncio.sleep(delay)
                if self.is_stopping:  # the stop signal came during the pause
                    return
                try:
                    started = await self._spawn()
                except WorkerFailed as exc:
                    failures += 1
                    code = exc.code
                    log.error("a new worker process failed to start (code %s)", exc.code)
                    continue
                self._current = started
                self._notify(started.ready)
                break

    def _give_up(self, failures: int) -> None:
        message = (
            f"grace serve: the worker process failed {failures} times in a row (each "
            f"within {QUICK_FAILURE_S:.0f} s of starting); stopping (its errors are above)"
        )
        log.error(message, extra={"event": "worker_failing"})
        self.failed.set()


def restart_delay(failures: int) -> float:
    """The pause before a new worker: `RESTART_DELAY_S`, doubled for each quick failure
    in a row, at most `MAX_RESTART_DELAY_S`."""
    return min(RESTART_DELAY_S * 2 ** max(failures - 1, 0), MAX_RESTART_DELAY_S)


def die_with_parent(parent_pid: int) -> None:
    """In the child, first thing: be killed when the parent dies (kill -9 included) —
    Linux only (prctl); elsewhere the end of file on the socket stops the child — and
    step behind the front for the processor (`WORKER_NICENESS`)."""
    if sys.platform.startswith("linux"):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent_pid:  # the parent died before prctl took effect
        os._exit(1)
    with contextlib.suppress(OSError):
        os.nice(WORKER_NICENESS)


async def child_channel(fd: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """The child's end of the socket pair, as asyncio streams."""
    sock = socket.socket(fileno=fd)
    return await asyncio.open_unix_connection(sock=sock)


def ready_line(ready: Ready) -> bytes:
    return ready.model_dump_json().encode() + b"\n"


def parse_take(line: bytes) -> list[int]:
    """The ids of a `Take` line; [] for anything else (logged)."""
    try:
        return Take.model_validate_json(line).ids
    except ValidationError:
        log.warning("ignored a malformed message from the front (%d bytes)", len(line))
        return []
