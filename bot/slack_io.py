"""Slack output: turns run events into posted and edited Block Kit messages.

- The plan message is posted once and then edited in place; edits are coalesced to at
  most one per `min_interval` seconds per run, and the latest state always wins.
- Every posted message's ts is stored, so a process that resumes a run edits the same
  messages instead of posting new ones, and nothing is posted twice.
- 429s are retried by slack_sdk's rate-limit handler, which honours Retry-After.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from typing import Any, Protocol

from slack_sdk.errors import SlackApiError
from slack_sdk.models.blocks import Block
from slack_sdk.web.async_client import AsyncWebClient

from agent.ports import RunEvent, RunEventType
from agent.schemas import (
    InterventionAction,
    InterventionKind,
    InterventionRequest,
    InterventionStatus,
    RunState,
    RunStatus,
)
from blocks.answer import answer_fallback_text, answer_messages
from blocks.intervention import (
    confirm_message,
    decided_message,
    escalate_message,
    expired_message,
    plain_question,
)
from blocks.limits import truncate
from blocks.plan import fallback_text, outcome_text, plan_message

log = logging.getLogger(__name__)

"""A bare Slack user id in agent text ("cancelled by U0123ABC"), to render as a mention."""

PLAN = "plan"
ANSWER = "answer"
OUTCOME = "outcome"


class MessageRefs(Protocol):
    async def set_message_ref(
        self, *, run_id: str, kind: str, channel_id: str, ts: str
    ) -> None: ...

    async def get_message_ref(self, *, run_id: str, kind: str) -> tuple[str, str] | None: ...


def payload(blocks: Sequence[Block]) -> list[dict[str, Any]]:
    return [b.to_dict() for b in blocks]


class SlackPublisher:
    """A `RunObserver` that keeps a run's Slack thread in step with its state."""

    def __init__(
        self, *, client: AsyncWebClient, refs: MessageRefs, min_interval: float = 1.0
    ) -> None:
        self._client = client
        self._refs = refs
        self._min_interval = min_interval
        self._latest: dict[str, RunState] = {}
        self._last_edit: dict[str, float] = {}
        self._scheduled: dict[str, asyncio.Task[None]] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    async def on_event(self, event: RunEvent, state: RunState) -> None:
        if not state.thread.thread_ts:
            return  # not a Slack run (CLI)
        self._latest[state.run_id] = state.model_copy(deep=True)
        kind = event.type
        if kind in (RunEventType.RUN_STARTED,):
            return
        if kind is RunEventType.PLAN_CREATED:
            await self.flush_plan(state.run_id)
            return
        if kind in (RunEventType.STEP_STARTED, RunEventType.STEP_FINISHED, RunEventType.REPLANNED):
            self._schedule_plan(state.run_id)
            return
        await self.flush_plan(state.run_id)
        if kind is RunEventType.INTERVENTION_REQUESTED and state.pending is not None:
            await self._post_intervention(state, state.pending)
        elif kind is RunEventType.INTERVENTION_ANSWERED:
            intervention_id = str(event.data.get("intervention_id", ""))
            await self._close_intervention(state, intervention_id)
        elif kind is RunEventType.ANSWER_READY:
            await self._post_answer(state)
        elif kind in (RunEventType.RUN_CANCELLED, RunEventType.RUN_FAILED):
            await self._close_pending(state)
            await self._post_outcome(state)

    # ------------------------------------------------------------------ plan message

    def _schedule_plan(self, run_id: str) -> None:
        if run_id in self._scheduled and not self._scheduled[run_id].done():
            return
        wait = self._min_interval - (time.monotonic() - self._last_edit.get(run_id, 0.0))
        self._scheduled[run_id] = asyncio.create_task(self._delayed_flush(run_id, max(0, wait)))

    async def _delayed_flush(self, run_id: str, wait: float) -> None:
        await asyncio.sleep(wait)
        try:
            await self.flush_plan(run_id)
        except Exception:  # a failed cosmetic edit must not kill the loop; next edit retries
            log.exception("plan message update failed", extra={"run_id": run_id})

    async def flush_plan(self, run_id: str) -> None:
        """Post or edit the plan message with the newest state we have."""
        lock = self._locks.setdefault(run_id, asyncio.Lock())
        async with lock:
            state = self._latest.get(run_id)
            if state is None or state.plan is None:
                return
            blocks = payload(plan_message(state))
            text = fallback_text(state)
            ref = await self._refs.get_message_ref(run_id=run_id, kind=PLAN)
            if ref is None:
                ts = await self._post(state, blocks, text)
                if ts:
                    await self._refs.set_message_ref(
                        run_id=run_id, kind=PLAN, channel_id=state.thread.channel_id, ts=ts
                    )
            else:
                await self._update(ref, blocks, text)
            self._last_edit[run_id] = time.monotonic()

    async def drain(self) -> None:
        """Wait for scheduled plan edits (tests and shutdown)."""
        while pending := [t for t in self._scheduled.values() if not t.done()]:
            await asyncio.gather(*pending, return_exceptions=True)

    # ------------------------------------------------------------------ other messages

    async def _post_intervention(self, state: RunState, request: InterventionRequest) -> None:
        if request.kind is InterventionKind.PLAN_APPROVAL:
            return  # its buttons live on the plan message
        kind = f"intervention:{request.intervention_id}"
        if await self._refs.get_message_ref(run_id=state.run_id, kind=kind):
            return
        if request.kind is InterventionKind.CONFIRM:
            blocks = confirm_message(state, request)
        else:
            blocks = escalate_message(state, request)
        ts = await self._post(state, payload(blocks), truncate(plain_question(request), 300))
        if ts:
            await self._refs.set_message_ref(
                run_id=state.run_id, kind=kind, channel_id=state.thread.channel_id, ts=ts
            )

    async def _close_intervention(self, state: RunState, intervention_id: str) -> None:
        request = next(
            (i for i in state.interventions if i.intervention_id == intervention_id), None
        )
        if request is None:
            return
        await self._replace_buttons(state, request)

    async def _close_pending(self, state: RunState) -> None:
        """Answered requests lost their buttons when answered; only the ones the end of
        the run closed (cancelled, expired) still show them."""
        closed = (InterventionStatus.CANCELLED, InterventionStatus.EXPIRED)
        for request in state.interventions:
            if request.status in closed:
                await self._replace_buttons(state, request)

    async def _replace_buttons(self, state: RunState, request: InterventionRequest) -> None:
        if request.kind is InterventionKind.PLAN_APPROVAL:
            return  # the plan message re-renders without buttons
        ref = await self._refs.get_message_ref(
            run_id=state.run_id, kind=f"intervention:{request.intervention_id}"
        )
        if ref is None:
            return
        if request.status is InterventionStatus.EXPIRED:
            outcome = (
                InterventionAction.CANCEL
                if state.status is RunStatus.CANCELLED
                else InterventionAction.PROCEED
            )
            blocks = expired_message(request, outcome)
        else:
            action = request.answer.action if request.answer else InterventionAction.CANCEL
            blocks = decided_message(request, request.answered_by or "someone", action)
        await self._update(ref, payload(blocks), truncate(plain_question(request), 300))

    async def _post_answer(self, state: RunState) -> None:
        if await self._refs.get_message_ref(run_id=state.run_id, kind=ANSWER):
            return
        first_ts = None
        for part, blocks in enumerate(answer_messages(state), 1):
            ts = await self._post(state, payload(blocks), answer_fallback_text(state, part))
            first_ts = first_ts or ts
        if first_ts:
            await self._refs.set_message_ref(
                run_id=state.run_id, kind=ANSWER, channel_id=state.thread.channel_id, ts=first_ts
            )

    async def _post_outcome(self, state: RunState) -> None:
        kind = f"{OUTCOME}:{state.status.value}:{state.version}"
        if await self._refs.get_message_ref(run_id=state.run_id, kind=kind):
            return
        text = outcome_text(state)
        ts = await self.post_text(state.thread.channel_id, state.thread.thread_ts, text)
        if ts:
            await self._refs.set_message_ref(
                run_id=state.run_id, kind=kind, channel_id=state.thread.channel_id, ts=ts
            )

    # ------------------------------------------------------------------ Web API calls

    async def post_text(self, channel: str, thread_ts: str | None, text: str) -> str | None:
        try:
            response = await self._client.chat_postMessage(
                channel=channel, thread_ts=thread_ts, text=truncate(text, 3000)
            )
        except SlackApiError as exc:
            log.error("chat.postMessage failed: %s", exc.response.get("error"))
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
        except SlackApiError as exc:
            log.error("chat.postEphemeral failed: %s", exc.response.get("error"))

    async def _post(self, state: RunState, blocks: list[dict[str, Any]], text: str) -> str | None:
        try:
            response = await self._client.chat_postMessage(
                channel=state.thread.channel_id,
                thread_ts=state.thread.thread_ts,
                blocks=blocks,
                text=text,
            )
        except SlackApiError as exc:
            log.error(
                "chat.postMessage failed: %s",
                exc.response.get("error"),
                extra={"run_id": state.run_id},
            )
            return None
        return str(response["ts"])

    async def _update(self, ref: tuple[str, str], blocks: list[dict[str, Any]], text: str) -> None:
        channel, ts = ref
        try:
            await self._client.chat_update(channel=channel, ts=ts, blocks=blocks, text=text)
        except SlackApiError as exc:
            log.error("chat.update failed: %s", exc.response.get("error"))
