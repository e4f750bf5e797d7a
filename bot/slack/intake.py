"""The durable intake: every Slack request we acknowledge is in the inbox first.

A listener hands its request to `Intake.accept`, which queues it for the batch writer
and waits (at most `ack_wait` seconds) until the row is committed. Only then does the
listener return and Bolt send the ack — so a process killed after the ack leaves the
request in the inbox, and the next process (start-up `resume`, and the periodic sweep)
processes it. A request whose row cannot be written in time is not acknowledged (500):
Slack retries it, and the retry is dropped if the first write landed after all.

Processing reads the row back as its typed item (`bot.slack.items`) and hands it to the
`Handler` given for its kind when the intake was built (`bot.slack.compose`); it marks the
row done once its effect is stored (a run registered under an id derived from the row, so
a replay finds the run instead of creating a second one).

Each row is claimed by the process that stored it, for `claim_seconds`, renewed by every
sweep while it works; another replica takes a row over only once that claim has lapsed
or its holder is visibly dead (see agent/workers.py) — never while it is being worked on.

`grace serve` splits this in two processes (bot/slack/front.py): the front's intake only
stores, with `handed_to` set — each row claimed by the worker process's owner id, whose
`take` it then calls with the new rows' ids — and the worker's intake processes them.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Generic, TypeVar

from pydantic import ValidationError

from agent.bounded_json import JsonRejected
from agent.schemas import utcnow
from agent.workers import is_dead_here, new_worker_id, retire
from bot.service.tasks import TaskRunner
from bot.slack.items import InboxKind, read_item
from storage.inbox import InboxEntry, InboxItem, SqlInbox

log = logging.getLogger(__name__)

BATCH = 200
GATHER_S = 0.05
"""At most how long a batch waits for requests the event loop is still reading (a burst
arrives over a few dozen milliseconds): a batch is cut as soon as one turn of the loop
brought no new request."""
MAX_ATTEMPTS = 5
CLAIM_SECONDS = 60.0
"""How long a row stays with the process working on it without a renewal (the sweep
renews every few seconds); after that another replica may take it."""

FollowUp = Coroutine[Any, Any, None]
"""Work a processor hands back (e.g. answering a paused run, which drives it on) to run
in the agent lane — the entry is done only once that has finished."""
ItemT = TypeVar("ItemT")


class NotStored(Exception):
    """The request could not be stored in time: do not acknowledge it (Slack retries)."""


def derived_run_id(event_id: str) -> str:
    """The run an entry creates: the same on every replay of that entry."""
    return hashlib.sha256(f"inbox:{event_id}".encode()).hexdigest()[:12]


@dataclass(frozen=True)
class Received(Generic[ItemT]):
    """A stored item, as its processor gets it."""

    item: ItemT
    event_id: str

    @property
    def run_id(self) -> str:
        """The id of the run this entry creates (the same on every replay)."""
        return derived_run_id(self.event_id)


@dataclass(frozen=True)
class Handler(Generic[ItemT]):
    """What the intake does with one kind of item, and in which lane: the intake lane
    (taking a question in, never behind busy agents) or the agent lane."""

    process: Callable[[Received[ItemT]], Awaitable[FollowUp | None]]
    intake_lane: bool = False


class Intake:
    def __init__(
        self,
        *,
        inbox: SqlInbox,
        tasks: TaskRunner,
        processors: Mapping[InboxKind, Handler[Any]],
        ack_wait: float = 2.5,
        owner: str | None = None,
        claim_seconds: float = CLAIM_SECONDS,
        handed_to: Callable[[list[int]], None] | None = None,
    ) -> None:
        self._inbox = inbox
        self.owner = owner or new_worker_id()
        """Who the stored rows are claimed by: this process, or (`handed_to`) the worker
        process that processes them (set by the front when that worker starts)."""
        self._handed_to = handed_to
        self._claim = timedelta(seconds=claim_seconds)
        self._tasks = tasks
        self._processors: dict[str, Handler[Any]] = dict(processors)
        """kind → its handler: given whole at construction, never registered later."""
        self._ack_wait = ack_wait
        self._queue: list[tuple[InboxItem, asyncio.Future[int | None]]] = []
        self._wake: asyncio.Event | None = None
        self._writer: asyncio.Task[None] | None = None
        self._batches: set[asyncio.Task[None]] = set()
        """Batches being written (at most `inbox.parallel_adds`)."""
        self._working: set[int] = set()

    # ------------------------------------------------------------------ taking in

    async def accept(self, item: InboxItem) -> bool:
        """Store `item`; True when it is new, False for a duplicate. Raises `NotStored`
        when the database did not take it within `ack_wait` seconds (it keeps trying)."""
        future: asyncio.Future[int | None] = asyncio.get_running_loop().create_future()
        self._queue.append((item, future))
        self._start_writer()
        assert self._wake is not None
        self._wake.set()
        try:
            entry_id = await asyncio.wait_for(asyncio.shield(future), self._ack_wait)
        except TimeoutError as exc:
            log.warning("could not store a Slack request in time; not acknowledging it")
            raise NotStored(item.event_id) from exc
        if entry_id is None:
            log.info("dropped a duplicate Slack delivery", extra={"kind": item.kind})
            return False
        return True

    def _start_writer(self) -> None:
        if self._writer is None or self._writer.done():
            self._wake = asyncio.Event()
            self._writer = asyncio.create_task(self._write_forever(), name="inbox writer")

    async def _write_forever(self) -> None:
        """Write what is queued, a batch at a time; where the database runs transactions
        side by side (`SqlInbox.parallel_adds`), a new batch starts while earlier ones
        are in flight, so a request waits for its own batch only."""
        assert self._wake is not None
        while True:
            await self._wake.wait()
            self._wake.clear()
            # From the first request on, the other process's writes wait (`grace serve`):
            # its transaction in progress ends while the burst is read, not after.
            with self._inbox.going_first():
                while self._queue:
                    if len(self._batches) >= self._inbox.parallel_adds:
                        await asyncio.wait(self._batches, return_when=asyncio.FIRST_COMPLETED)
                        continue
                    await self._gather()
                    batch, self._queue = self._queue[:BATCH], self._queue[BATCH:]
                    task = asyncio.create_task(self._write(batch), name="inbox batch")
                    self._batches.add(task)
                    task.add_done_callback(self._batches.discard)

    async def _gather(self) -> None:
        """Let the requests of a burst that the event loop is reading reach the queue
        before a batch is cut: until one turn of the loop adds none (one turn for a lone
        request), a batch is full, or `GATHER_S` passed. Cutting at once made the first
        requests of a burst a batch each: those took the writing slots and, each waiting
        for the busy loop to see its answer, held the rest of the burst up (on
        PostgreSQL, 1-row batches of 22-52 ms before one of 190 rows)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + GATHER_S
        size = -1
        while len(self._queue) != size and len(self._queue) < BATCH and loop.time() < deadline:
            size = len(self._queue)
            await asyncio.sleep(0)

    async def _write(self, batch: list[tuple[InboxItem, asyncio.Future[int | None]]]) -> None:
        try:
            ids = await self._inbox.add(
                [item for item, _ in batch], owner=self.owner, claimed_until=self._until()
            )
        except Exception as exc:  # retried inside for a long while; now give up on these
            log.exception("storing Slack requests failed")
            for _, future in batch:
                if not future.done():
                    future.set_exception(NotStored(str(exc)))
                    future.exception()  # retrieved: the waiter may have left
            return
        for (_, future), entry_id in zip(batch, ids, strict=True):
            if not future.done():
                future.set_result(entry_id)
        if self._handed_to is not None:  # the front: another process processes them
            stored = [entry_id for entry_id in ids if entry_id is not None]
            if stored:
                self._handed_to(stored)
            return
        for (item, _), entry_id in zip(batch, ids, strict=True):
            if entry_id is not None:
                self._spawn(
                    InboxEntry(
                        id=entry_id,
                        event_id=item.event_id,
                        kind=item.kind,
                        payload=item.payload,
                        attempts=0,
                        created_at=utcnow(),
                        owner=self.owner,
                    )
                )

    def _until(self) -> datetime:
        return utcnow() + self._claim

    async def flush(self) -> None:
        """Write what is queued and wait for the batches in flight (shutdown, tests)."""
        while self._queue:
            batch, self._queue = self._queue[:BATCH], self._queue[BATCH:]
            await self._write(batch)
        while self._batches:
            await asyncio.wait(set(self._batches))

    async def close(self) -> None:
        await self.flush()
        if self._writer is not None:
            self._writer.cancel()
            await asyncio.gather(self._writer, return_exceptions=True)
            self._writer = None
        retire(self.owner)  # what it still holds may be taken over at once

    # ------------------------------------------------------------------ processing

    async def take(self, entry_ids: list[int]) -> int:
        """Process the rows another process (the front) just stored for this one, claimed
        by our owner id; rows already done or being worked on are skipped. Returns how
        many were started. A row whose hand-over is lost is found by `resume`."""
        started = 0
        for entry in await self._inbox.pending_among(entry_ids):
            if entry.owner == self.owner and entry.id not in self._working:
                self._spawn(entry)
                started += 1
        return started

    def _spawn(self, entry: InboxEntry) -> None:
        if entry.id in self._working:
            return
        handler = self._processors.get(entry.kind)
        if handler is None:
            log.error("no processor for inbox entries of kind %s", entry.kind)
            return
        self._working.add(entry.id)
        self._tasks.spawn(
            self._process(entry, handler),
            name=f"inbox {entry.kind} {entry.id}",
            intake=handler.intake_lane,
        )

    async def _process(self, entry: InboxEntry, handler: Handler[Any]) -> None:
        handed_on = False
        try:
            item = read_item(entry)
            follow_up = await handler.process(Received(item=item, event_id=entry.event_id))
            if follow_up is not None:
                handed_on = True  # `_finish` marks it done once the follow-up ran
                self._tasks.spawn(
                    self._finish(entry, follow_up), name=f"inbox {entry.kind} {entry.id} (cont.)"
                )
                return
            await self._inbox.done(entry.id)
        except (ValidationError, JsonRejected) as exc:
            # Unreadable now, unreadable on every retry: dropped at once, not a poison row.
            log.error("dropped a Slack request GRACE cannot read (%s)", type(exc).__name__)
            await self._inbox.done(entry.id, status="failed")
        except Exception:
            log.exception("processing a Slack request failed; it stays in the inbox")
            await self._inbox.attempt(entry.id)
            if entry.attempts + 1 >= MAX_ATTEMPTS:
                log.error("gave up on a Slack request after %d attempts", MAX_ATTEMPTS)
                await self._inbox.done(entry.id, status="failed")
        finally:
            if not handed_on:
                self._working.discard(entry.id)

    async def _finish(self, entry: InboxEntry, follow_up: FollowUp) -> None:
        try:
            await follow_up
        except Exception:
            log.exception("processing a Slack request failed; it stays in the inbox")
            await self._inbox.attempt(entry.id)
        else:
            await self._inbox.done(entry.id)
        finally:
            self._working.discard(entry.id)

    async def resume(self) -> int:
        """Renew the claims on what this process is working on, then take over and
        process the rows nobody is working on: unclaimed, claim lapsed, holder dead, or
        ours but dropped (a failed attempt). Returns how many were taken."""
        await self._inbox.renew(sorted(self._working), owner=self.owner, until=self._until())
        now = utcnow()
        taken = 0
        for entry in await self._inbox.pending():
            if entry.id in self._working or not self._free(entry, now):
                continue
            if not await self._inbox.claim(entry, owner=self.owner, until=self._until()):
                continue  # another replica took it first
            log.warning(
                "processing a Slack request left in the inbox",
                extra={"kind": entry.kind, "attempt": entry.attempts + 1},
            )
            self._spawn(entry)
            taken += 1
        return taken

    def _free(self, entry: InboxEntry, now: datetime) -> bool:
        if entry.owner is None or entry.owner == self.owner or entry.claimed_until is None:
            return True
        return entry.claimed_until <= now or is_dead_here(entry.owner)
