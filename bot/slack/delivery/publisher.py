"""Slack output: a run's thread is brought in step with its stored state, exactly once.

The run store writes an outbox entry ("run X's messages must show version V") in the
transaction of every transition. `SlackPublisher` is told of each transition and
delivers it: it claims the entry (a lease, so one process at a time), renders every
message the run should have from the *stored* run, and posts what is missing or edits
what changed. So delivery is a desired-state reconciliation — idempotent, and safe to
repeat after any failure:

- every posted message's ts is stored (with a digest of what it shows), so nothing is
  posted twice and unchanged messages are not edited;
- a message carries Slack `metadata` (run id and message kind): after an ambiguous
  failure (a timeout, a crash between posting and storing its ts) the thread is searched
  for it before anything is posted again;
- a failed pass (429 → its Retry-After; 5xx, timeouts, unreadable bodies → backoff) is
  retried until `delivery_deadline` after the first failure, by this process or — after
  a restart — the next one (`resume`, `sweep`);
- the plan message's step-by-step edits are coalesced to one per `min_interval`.

Where the workspace streams, the plan (and the answer) is a streamed reply instead of
the plan message (`plan_stream.PlanStreamer`, injected as `streams`); the plan message is
then only the fallback, built from Slack's `plan` and `task_card` blocks. One pass over a
run's messages is a `thread_sync.ThreadSync`; what a failed call means is `web_api`'s.

Why one module a little over 500 lines: a delivery pass (claim, reconcile, record, retry
or release) and the Slack calls it makes share one claim and one lease, and the ports it
needs (the Protocols below) have no other user; the parts that stand alone are already
their own modules (thread_sync, web_api, plan_stream, sessions).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any, Protocol

from slack_sdk.models.blocks import Block
from slack_sdk.web.async_client import AsyncWebClient

from agent.ports import RunEvent, RunEventType
from agent.schemas import (
    InterventionAction,
    InterventionKind,
    InterventionRequest,
    InterventionStatus,
    RunOrigin,
    RunState,
    RunStatus,
    utcnow,
)
from agent.workers import is_dead_here, new_worker_id, retire
from blocks.answer import (
    FOOTER_ONLY_TEXT,
    answer_fallback_text,
    answer_footer_message,
    answer_messages,
)
from blocks.intervention import (
    confirm_message,
    decided_message,
    escalate_message,
    expert_call,
    expired_message,
    plain_question,
)
from blocks.limits import truncate
from blocks.plan import fallback_text, outcome_text
from blocks.plan_card import plan_card_message
from bot.slack.acting import TeamRef, acting_for
from bot.slack.delivery.thread_sync import RefStore, ThreadSync
from bot.slack.delivery.web_api import (
    ANSWER,
    METADATA_EVENT,
    OUTCOME,
    PLAN,
    RetryLater,
    classify_failure,
    payload,
    slack_error,
    thread_replies,
)
from storage.outbox import GAVE_UP, Delivery

log = logging.getLogger(__name__)

_MAX_BACKOFF_S = 30.0


class MessageStore(RefStore, Protocol):
    async def load(self, run_id: str) -> RunState | None: ...

    async def message_digests(self, run_id: str) -> dict[str, tuple[str, str, str | None]]: ...


class HomeDelivery(Protocol):
    async def deliver(self, state: RunState, refs: ThreadSync) -> None:
        """Publish the Home tabs that now show something else of this run
        (`bot.slack.home.tab.HomeTabs`)."""
        ...


class PlanStream(Protocol):
    async def deliver(self, state: RunState, refs: ThreadSync) -> str:
        """What the run's stream shows: `all`, `text` (no footer), `plan`, `message`
        (none) or `undecided`."""
        ...


class SessionSync(Protocol):
    async def sync(self, state: RunState, refs: ThreadSync) -> None:
        """Bring the thread's agent session in step with the run (may raise `RetryLater`)."""
        ...


class DeliveryQueue(Protocol):
    async def claim(
        self, run_id: str, *, owner: str, until: datetime, dead_owner: str | None = None
    ) -> Delivery | None: ...

    async def release(self, run_id: str, *, owner: str) -> None: ...

    async def delivered(self, run_id: str, *, owner: str, version: int) -> None: ...

    async def failed(
        self, run_id: str, *, owner: str, error: str, retry_at: datetime, first_failed_at: datetime
    ) -> None: ...

    async def due(self, *, now: datetime | None = None, limit: int = 200) -> list[Delivery]: ...

    async def undelivered(
        self, *, channel_id: str | None = None, limit: int = 20
    ) -> list[Delivery]: ...


class ReplyModes(Protocol):
    """Where a channel's answers go (`bot.service.channels.ChannelService`)."""

    async def reply_mode(self, channel_id: str, *, team_id: str | None = "") -> str: ...


class SlackPublisher:
    """A `RunObserver` that keeps a run's Slack thread in step with its stored state."""

    replies: ReplyModes | None = None
    """Channels whose answers are ephemeral (only the asker sees them); None: all in
    the thread. Set by the composition root."""

    def __init__(
        self,
        *,
        client: AsyncWebClient,
        store: MessageStore,
        deliveries: DeliveryQueue,
        min_interval: float = 1.0,
        delivery_deadline: float = 3600.0,
        lease: float = 120.0,
        owner: str | None = None,
        home: HomeDelivery | None = None,
        streams: PlanStream | None = None,
        sessions: SessionSync | None = None,
    ) -> None:
        self._client = client
        self._streams = streams
        self._sessions = sessions
        self._store = store
        self._deliveries = deliveries
        self._min_interval = min_interval
        self._deadline = delivery_deadline
        self._lease = lease
        self.owner = owner or new_worker_id()
        self._locks: dict[str, asyncio.Lock] = {}
        self._scheduled: dict[str, asyncio.Task[None]] = {}
        self._retries: dict[str, asyncio.Task[None]] = {}
        self._dirty: set[str] = set()
        self._closed = False
        self._home = home

    # ------------------------------------------------------------------ triggers

    async def on_event(self, event: RunEvent, state: RunState) -> None:
        if state.origin is RunOrigin.COMMAND_LINE:
            return  # not a Slack run
        if event.type is RunEventType.RUN_STARTED:
            if self._sessions is not None:  # no message yet, but the session is processing
                self._schedule(state.run_id, 0.0)
            return
        if event.type in (
            RunEventType.STEP_STARTED,
            RunEventType.STEP_FINISHED,
            RunEventType.REPLANNED,
        ):
            self._schedule(state.run_id, self._min_interval)
            return
        await self.deliver(state.run_id)

    def _schedule(
        self, run_id: str, wait: float, *, retry: bool = False, dead_owner: str | None = None
    ) -> None:
        if self._closed:
            return
        tasks = self._retries if retry else self._scheduled
        if run_id in tasks and not tasks[run_id].done():
            if not retry:
                self._dirty.add(run_id)  # a change during the pass: one more pass after it
            return
        tasks[run_id] = asyncio.create_task(
            self._later(run_id, wait, dead_owner), name=f"deliver {run_id}"
        )

    async def _later(self, run_id: str, wait: float, dead_owner: str | None) -> None:
        await asyncio.sleep(wait)
        while True:
            self._dirty.discard(run_id)
            try:
                await self.deliver(run_id, dead_owner=dead_owner)
            except Exception:  # the outbox keeps it; the sweep tries again
                log.exception("delivering a run's messages failed", extra={"run_id": run_id})
            if run_id not in self._dirty or self._closed:
                return
            await asyncio.sleep(self._min_interval)

    async def resume(self) -> int:
        """Deliver everything due (at start-up, and periodically): what a dead process
        left undelivered, and retries whose timer this process does not hold."""
        now, taken = utcnow(), 0
        for delivery in await self._deliveries.due():
            if delivery.run_id in self._retries and not self._retries[delivery.run_id].done():
                continue
            holder = delivery.owner
            dead = holder is not None and holder != self.owner and is_dead_here(holder)
            free = holder is None or dead or (delivery.lease_until or now) <= now
            if not free and holder != self.owner:
                continue  # another live process is delivering it
            if dead:
                log.warning(
                    "taking over a delivery from a dead process", extra={"run_id": delivery.run_id}
                )
            self._schedule(delivery.run_id, 0.0, dead_owner=holder if dead else None)
            taken += 1
        return taken

    async def undelivered(self, channel_id: str) -> list[Delivery]:
        """Runs of a channel whose messages Slack has refused so far (`/grace status`)."""
        return await self._deliveries.undelivered(channel_id=channel_id)

    async def drain(self) -> None:
        """Wait until nothing is scheduled (coalesced edits and retries) — tests, shutdown."""
        while pending := [
            t for t in (*self._scheduled.values(), *self._retries.values()) if not t.done()
        ]:
            await asyncio.gather(*pending, return_exceptions=True)

    async def close(self) -> None:
        """Stop retrying in this process (the outbox keeps what is left for the next)."""
        self._closed = True
        tasks = [t for t in (*self._scheduled.values(), *self._retries.values()) if not t.done()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        # a pass cancelled mid-bookkeeping may keep its claim: let the next publisher
        # (a new process, or a new bot in this one) take it over at once
        retire(self.owner)

    # ------------------------------------------------------------------ one pass

    async def deliver(self, run_id: str, *, dead_owner: str | None = None) -> bool:
        """One delivery pass for a run; True when its messages are now up to date."""
        lock = self._locks.setdefault(run_id, asyncio.Lock())
        async with lock:
            until = utcnow() + timedelta(seconds=self._lease)
            claim = await self._deliveries.claim(
                run_id, owner=self.owner, until=until, dead_owner=dead_owner
            )
            if claim is None:
                return False  # nothing due, waiting out a backoff, or another process has it
            try:
                state = await self._store.load(run_id)
                if state is None:
                    await self._deliveries.delivered(
                        run_id, owner=self.owner, version=claim.wanted_version
                    )
                    return True
                with acting_for(TeamRef.of_thread(state.thread)):  # its team's token
                    await self._reconcile(state, suspect=claim.attempts > 1)
            except asyncio.CancelledError:  # shutting down mid-pass: hand it on
                await asyncio.shield(self._deliveries.release(run_id, owner=self.owner))
                raise
            except RetryLater as retry:
                await self._failed(claim, retry)
                return False
            except Exception as exc:  # an unexpected failure must not lose the messages
                log.exception("delivery pass failed", extra={"run_id": run_id})
                await self._failed(claim, RetryLater(f"unexpected {type(exc).__name__}"))
                return False
            await self._deliveries.delivered(run_id, owner=self.owner, version=state.version)
            if claim.attempts > 1:
                log.warning(
                    "delivered a run's messages after %d attempts",
                    claim.attempts,
                    extra={"run_id": run_id},
                )
            return True

    async def _failed(self, claim: Delivery, retry: RetryLater) -> None:
        now = utcnow()
        first = claim.first_failed_at or now
        wait = retry.after or min(_MAX_BACKOFF_S, 2.0 ** max(0, claim.attempts - 1))
        if (now - first).total_seconds() + wait > self._deadline:
            log.error(
                "gave up delivering a run's messages after %.0f s: %s",
                (now - first).total_seconds(),
                retry.reason,
                extra={"run_id": claim.run_id},
            )
            retry_at = GAVE_UP
        else:
            log.warning(
                "delivery failed (%s); retrying in %.1f s",
                retry.reason,
                wait,
                extra={"run_id": claim.run_id, "attempt": claim.attempts},
            )
            retry_at = now + timedelta(seconds=wait)
        await self._deliveries.failed(
            claim.run_id,
            owner=self.owner,
            error=retry.reason,
            retry_at=retry_at,
            first_failed_at=first,
        )
        if retry_at != GAVE_UP:
            self._schedule(claim.run_id, wait + 0.05, retry=True)

    # ------------------------------------------------------------------ the desired state

    async def _reconcile(self, state: RunState, *, suspect: bool) -> None:
        """Post or edit every message `state` should have. `suspect`: an earlier pass
        did not finish, so a message may be in Slack without its ts stored."""
        sync = ThreadSync(
            self, self._store, state, await self._store.message_digests(state.run_id), suspect
        )
        ephemeral = await self._answers_ephemeral(state)
        streams = None if ephemeral else self._streams  # a stream would show the answer
        streamed = await streams.deliver(state, sync) if streams else "message"
        if state.plan is not None and streamed == "message":
            blocks = payload(plan_card_message(state))
            await sync.ensure(PLAN, blocks, fallback_text(state), edit=True)
        for request in _interventions(state):
            await self._intervention(sync, state, request)
        if state.status is RunStatus.ANSWERED and ephemeral:
            await self._ephemeral_answer(sync, state)
        elif state.status is RunStatus.ANSWERED and streamed == "text":
            # the stream shows the answer's text: only its footer follows
            await sync.ensure(ANSWER, payload(answer_footer_message(state)), FOOTER_ONLY_TEXT)
        elif state.status is RunStatus.ANSWERED and streamed != "all":
            for part, blocks in enumerate(answer_messages(state), 1):
                kind = ANSWER if part == 1 else f"{ANSWER}:{part}"
                await sync.ensure(kind, payload(blocks), answer_fallback_text(state, part))
        elif state.status in (RunStatus.CANCELLED, RunStatus.FAILED):
            text = truncate(outcome_text(state), 3000)
            await sync.ensure(f"{OUTCOME}:{state.status.value}", None, text)
        if self._sessions is not None:  # after the messages: a session hiccup delays none
            await self._sessions.sync(state, sync)
        if self._home is not None:  # last: its links point at the messages above
            await self._home.deliver(state, sync)

    async def _answers_ephemeral(self, state: RunState) -> bool:
        if self.replies is None or state.origin is not RunOrigin.SLACK_THREAD:
            return False
        if state.thread.channel_id.startswith("D"):
            return False  # a DM is the asker's own
        thread = state.thread
        mode = await self.replies.reply_mode(thread.channel_id, team_id=thread.team_id)
        return mode == "ephemeral"

    async def _ephemeral_answer(self, sync: ThreadSync, state: RunState) -> None:
        """The answer only the asker sees, in the thread (once: its ts is stored)."""
        for part, blocks in enumerate(answer_messages(state), 1):
            kind = ANSWER if part == 1 else f"{ANSWER}:{part}"
            if sync.has(kind):
                continue
            try:
                response = await self._client.chat_postEphemeral(
                    channel=state.thread.channel_id,
                    user=state.asker,
                    thread_ts=state.thread.thread_ts,
                    blocks=payload(blocks),
                    text=answer_fallback_text(state, part),
                )
            except Exception as exc:
                self._refused(exc, "chat.postEphemeral", state.run_id)
                return
            ts = str(response.get("message_ts") or f"ephemeral-{part}")
            await sync.remember(kind, state.thread.channel_id, ts, None)

    async def _intervention(
        self, sync: ThreadSync, state: RunState, request: InterventionRequest
    ) -> None:
        if request.kind is InterventionKind.PLAN_APPROVAL:
            return  # its buttons live on the plan message
        kind = f"intervention:{request.intervention_id}"
        text = truncate(expert_call(state, request) + plain_question(request), 600)
        if request.status is InterventionStatus.PENDING:
            if state.pending is None or state.pending.intervention_id != request.intervention_id:
                return
            if request.kind is InterventionKind.CONFIRM:
                blocks = confirm_message(state, request)
            else:
                blocks = escalate_message(state, request)
            await sync.ensure(kind, payload(blocks), text)
            return
        if not sync.has(kind):
            return  # never shown: nothing to close
        if request.status is InterventionStatus.EXPIRED:
            outcome = (
                InterventionAction.CANCEL
                if state.status is RunStatus.CANCELLED
                else InterventionAction.PROCEED
            )
            closed = expired_message(request, outcome)
        else:
            action = request.answer.action if request.answer else InterventionAction.CANCEL
            closed = decided_message(request, request.answered_by or "someone", action)
        await sync.ensure(kind, payload(closed), text, edit=True)

    # ------------------------------------------------------------------ Web API calls

    async def post_message(
        self,
        state: RunState,
        kind: str,
        blocks: list[dict[str, Any]] | None,
        text: str,
    ) -> str | None:
        """Post one run message with its metadata; None when Slack refused it for good."""
        try:
            response = await self._client.chat_postMessage(
                channel=state.thread.channel_id,
                thread_ts=state.thread.thread_ts,
                blocks=blocks,
                text=text,
                metadata={
                    "event_type": METADATA_EVENT,
                    "event_payload": {"run_id": state.run_id, "kind": kind},
                },
            )
        except Exception as exc:
            return self._refused(exc, "chat.postMessage", state.run_id)
        return str(response["ts"])

    async def update_message(
        self, channel: str, ts: str, blocks: list[dict[str, Any]] | None, text: str, run_id: str
    ) -> bool:
        try:
            await self._client.chat_update(channel=channel, ts=ts, blocks=blocks, text=text)
        except Exception as exc:
            self._refused(exc, "chat.update", run_id)
            return False
        return True

    def _refused(self, exc: Exception, what: str, run_id: str) -> None:
        retry = classify_failure(exc, what)
        if retry is not None:
            raise retry from exc
        log.error("%s refused: %s", what, slack_error(exc), extra={"run_id": run_id})

    async def find_posted(self, state: RunState) -> dict[str, str]:
        """kind → ts of this run's messages already in its thread (by their metadata)."""
        found: dict[str, str] = {}
        async for message in thread_replies(self._client, state.thread):
            meta = message.get("metadata") or {}
            data = meta.get("event_payload") or {}
            if meta.get("event_type") == METADATA_EVENT and data.get("run_id") == state.run_id:
                found.setdefault(str(data.get("kind")), str(message.get("ts")))
        return found

    async def post_text(self, channel: str, thread_ts: str | None, text: str) -> str | None:
        """A one-off notice (not part of a run's state): best effort."""
        try:
            response = await self._client.chat_postMessage(
                channel=channel, thread_ts=thread_ts, text=truncate(text, 3000)
            )
        except Exception as exc:
            log.error("chat.postMessage failed: %s", slack_error(exc))
            return None
        return str(response["ts"])

    async def ephemeral(
        self,
        channel: str,
        user: str,
        text: str,
        blocks: Sequence[Block] | None = None,
        thread_ts: str | None = None,
    ) -> None:
        try:
            await self._client.chat_postEphemeral(
                channel=channel,
                user=user,
                text=truncate(text, 3000),
                blocks=payload(blocks) if blocks else None,
                thread_ts=thread_ts,
            )
        except Exception as exc:
            log.error("chat.postEphemeral failed: %s", slack_error(exc))


def _interventions(state: RunState) -> list[InterventionRequest]:
    """Every intervention once (the pending copy only when no terminal one exists)."""
    merged: dict[str, InterventionRequest] = {}
    for request in [*state.interventions, *([state.pending] if state.pending else [])]:
        known = merged.get(request.intervention_id)
        if known is None or known.status is InterventionStatus.PENDING:
            merged[request.intervention_id] = request
    return list(merged.values())
