"""`/grace` slash command: ephemeral answers about runs, metrics, cost and thresholds.

Read-only subcommands answer in the ack (a few fast queries); `cancel` and `retry` ack
at once and do their work in a tracked task.
"""

from __future__ import annotations

from datetime import datetime, time
from functools import partial
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp
from slack_sdk.models.blocks import Block

from agent.errors import GraceError
from agent.schemas import RunState, RunStatus, utcnow
from blocks.common import slack_date
from blocks.limits import to_payload, truncate
from blocks.status import (
    error_blocks,
    help_blocks,
    run_detail_blocks,
    runs_list_blocks,
    stats_blocks,
    thresholds_blocks,
)
from bot.deps import BotDeps
from storage.inbox import InboxEntry, InboxItem

COMMAND = "command"

ACTIVE = (RunStatus.PAUSED, RunStatus.RUNNING, RunStatus.PLANNING)


async def _ack_blocks(ack: AsyncAck, text: str, blocks: list[Block]) -> None:
    await ack(text=truncate(text, 3000), blocks=to_payload(blocks), response_type="ephemeral")


def _may_control(deps: BotDeps, state: RunState, user: str) -> bool:
    return user == state.asker or user in deps.settings.approvers


def _may_see(deps: BotDeps, state: RunState, user: str, channel: str) -> bool:
    """A run's question and plan are for its asker, approvers and its channel's members."""
    return _may_control(deps, state, user) or channel == state.thread.channel_id


async def _cancel(deps: BotDeps, run_id: str, user: str, channel: str) -> None:
    state = await deps.orchestrator.cancel(run_id, user=user, reason=f"cancelled by <@{user}>")
    status = state.status.value if state else "unknown"
    await deps.publisher.ephemeral(channel, user, f"Run {run_id} is now {status}.")


async def _retry(deps: BotDeps, run_id: str, user: str, channel: str) -> None:
    old = await deps.store.load(run_id)
    if old is not None:
        latest = await deps.store.latest_run_in_thread(old.thread)
        if latest is not None and latest.run_id != run_id and old.thread.thread_ts:
            return  # already retried (this command, replayed after a crash)
    try:
        state = await deps.orchestrator.retry(run_id, user=user)
    except GraceError as exc:
        await deps.publisher.ephemeral(channel, user, f"⚠️ {exc.message}")
        return
    await deps.publisher.ephemeral(
        channel, user, f"Retried as run {state.run_id}: {state.status.value}."
    )


async def _undelivered(deps: BotDeps, channel: str) -> list[str]:
    """One plain line per run of this channel whose messages Slack has not taken yet."""
    lines = []
    for delivery in await deps.publisher.undelivered(channel_id=channel):
        since = slack_date(delivery.first_failed_at) if delivery.first_failed_at else "a while"
        if delivery.gave_up:
            lines.append(f"run `{delivery.run_id}`: Slack kept refusing since {since}; gave up")
        else:
            lines.append(f"run `{delivery.run_id}`: Slack refused since {since}; still retrying")
    return lines


async def _take(deps: BotDeps, command: dict[str, Any], sub: str, run_id: str) -> None:
    """Store a command that changes something in the inbox before it is acknowledged;
    it is carried out after the ack (and by the next process if this one dies)."""
    trigger = str(command.get("trigger_id") or f"{run_id}:{command.get('user_id', '')}")
    payload = {
        "sub": sub,
        "run_id": run_id,
        "user": str(command.get("user_id", "")),
        "channel": str(command.get("channel_id", "")),
    }
    await deps.intake.accept(
        InboxItem(event_id=f"command:{trigger}", kind=COMMAND, payload=payload)
    )


async def process_command(deps: BotDeps, entry: InboxEntry) -> None:
    data = entry.payload
    run_id, user, channel = str(data["run_id"]), str(data["user"]), str(data["channel"])
    if data["sub"] == "cancel":
        await _cancel(deps, run_id, user, channel)
    else:
        await _retry(deps, run_id, user, channel)


async def handle_grace(deps: BotDeps, ack: AsyncAck, command: dict[str, Any]) -> None:
    words = str(command.get("text", "")).split()
    sub = words[0].lower() if words else "help"
    arg = words[1] if len(words) > 1 else None
    user = str(command.get("user_id", ""))
    channel = str(command.get("channel_id", ""))

    if sub == "status" and arg is None:
        runs = [
            r
            for status in ACTIVE
            for r in await deps.store.list_runs(status=status, channel_id=channel, limit=20)
        ]
        late = await _undelivered(deps, channel)
        blocks = runs_list_blocks(runs, late)
        text = f"{len(runs)} active runs in this channel"
        if late:
            text += f"; messages of {len(late)} runs not delivered yet"
        await _ack_blocks(ack, text, blocks)
        return
    if sub in ("status", "cancel", "retry"):
        state = await deps.store.load(arg) if arg else None
        if state is None or not _may_see(deps, state, user, channel):
            # The same words either way: a run you may not see does not exist for you.
            message = f"No run {arg!r}. `/grace status` lists this channel's runs."
            await _ack_blocks(ack, message, error_blocks(message))
            return
        if sub == "status":
            await _ack_blocks(ack, f"Run {state.run_id}", run_detail_blocks(state))
            return
        if not _may_control(deps, state, user):
            message = "Only the person who asked, or a GRACE approver, can do that."
            await _ack_blocks(ack, message, error_blocks(message))
            return
        if sub == "cancel":
            if state.status.is_final:
                message = f"Run {state.run_id} already ended ({state.status.value})."
                await _ack_blocks(ack, message, error_blocks(message))
                return
            await _take(deps, command, "cancel", state.run_id)
            await ack(text=f"Cancelling run {state.run_id}…", response_type="ephemeral")
            return
        if not state.status.is_final:
            # A second run in the thread would take over the replies meant for this one.
            message = (
                f"Run {state.run_id} is still {state.status.value}: answer or cancel it "
                f"(`/grace cancel {state.run_id}`) before retrying."
            )
            await _ack_blocks(ack, message, error_blocks(message))
            return
        await _take(deps, command, "retry", state.run_id)
        await ack(text=f"Retrying run {state.run_id}…", response_type="ephemeral")
        return
    if sub == "stats":
        since = datetime.combine(utcnow().date(), time.min, tzinfo=utcnow().tzinfo)
        stats = await deps.store.stats(since=since)
        await _ack_blocks(ack, "GRACE stats for today", stats_blocks(stats))
        return
    if sub == "thresholds":
        t = deps.orchestrator.thresholds
        values = {"silent": t.silent, "notify": t.notify, "confirm": t.confirm}
        await _ack_blocks(ack, "Current thresholds", thresholds_blocks(values))
        return
    text = "GRACE help" if sub == "help" else f"I don't know `/grace {sub}`. Here is what I do:"
    await _ack_blocks(ack, text, help_blocks())


def register(app: AsyncApp, deps: BotDeps) -> None:
    deps.intake.processors[COMMAND] = (partial(process_command, deps), False)

    @app.command("/grace")
    async def grace_command(ack: AsyncAck, command: dict[str, Any]) -> None:
        await handle_grace(deps, ack, command)
