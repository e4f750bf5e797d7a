"""`/grace` slash command: ephemeral answers about runs, metrics, cost and thresholds.

Read-only subcommands answer in the ack (a few fast queries); `cancel` and `retry` ack
at once and do their work in a tracked task. Runs can be named by their short id (the
first characters, as every answer's footer shows them).
"""

from __future__ import annotations

from datetime import datetime, time
from typing import Any, Literal

from slack_bolt.async_app import AsyncAck, AsyncApp
from slack_sdk.models.blocks import Block
from slack_sdk.web.async_client import AsyncWebClient

from agent.access import SHORT_ID_SEARCH, may_cancel, not_found, short_id_prefix
from agent.errors import GraceError
from agent.run_stats import stats_of
from agent.schemas import RunOrigin, RunState, utcnow
from blocks.common import safe, section, short_id, slack_date
from blocks.limits import to_payload, truncate
from blocks.status import (
    error_blocks,
    help_blocks,
    run_detail_blocks,
    runs_list_blocks,
    stats_blocks,
    thresholds_blocks,
)
from bot.slack.acting import current_team, of_acting_team
from bot.slack.delivery.assistant_status import ASSISTANT_REF
from bot.slack.deps import BotDeps
from bot.slack.intake import Intake, Received
from bot.slack.items import Command, stored
from bot.slack.listeners.config import open_config
from bot.slack.listeners.verified import forget, verified_list
from storage.feedback import team_thresholds_name
from storage.threshold_audit import SqlThresholdAudit

RUNS_LISTED = 20
MINE_SEARCH = 200
"""How many of the newest runs `/grace status` looks through for the asker's own (the
answer is in the ack, within Slack's 3 s: a bounded scan, not the whole table)."""
THRESHOLD_CHANGES_SHOWN = 5
FEEDBACK_WINDOW = 100
"""`/grace stats` counts the last this many 👍 / 👎 votes."""


async def _ack_blocks(ack: AsyncAck, text: str, blocks: list[Block]) -> None:
    await ack(text=truncate(text, 3000), blocks=to_payload(blocks), response_type="ephemeral")


def _may_control(deps: BotDeps, state: RunState, user: str) -> bool:
    return may_cancel(state, user, approvers=deps.settings.approvers)


async def _cancel(deps: BotDeps, run_id: str, user: str, channel: str) -> None:
    state = await deps.orchestrator.cancel(run_id, user=user, reason=f"cancelled by <@{user}>")
    status = state.status.value if state else "unknown"
    await deps.publisher.ephemeral(channel, user, f"Run `{short_id(run_id)}` is now {status}.")


async def _retry(deps: BotDeps, run_id: str, user: str, channel: str, new_run_id: str) -> None:
    """Ask again as `new_run_id`. A run asked in the assistant pane is retried as a pane
    run: the new run is marked before it starts, so its thread's status line follows it."""
    if await deps.store.load(new_run_id) is not None:
        return  # already retried (this command, replayed after a crash)
    old = await deps.store.load(run_id)
    if old is not None:
        latest = await deps.store.latest_run_in_thread(old.thread)
        in_a_thread = old.origin is not RunOrigin.COMMAND_LINE
        if latest is not None and latest.run_id != run_id and in_a_thread:
            return  # the thread has moved on (a newer run, or another retry): only its latest
    pane = await deps.store.get_message_ref(run_id=run_id, kind=ASSISTANT_REF)
    if pane is not None:
        await deps.store.set_message_ref(
            run_id=new_run_id, kind=ASSISTANT_REF, channel_id=pane[0], ts=pane[1]
        )
    try:
        state = await deps.orchestrator.retry(run_id, user=user, new_run_id=new_run_id)
    except GraceError as exc:
        await deps.publisher.ephemeral(channel, user, f"⚠️ {exc.message}")
        return
    await deps.publisher.ephemeral(
        channel, user, f"Asked again as run `{short_id(state.run_id)}`: {state.status.value}."
    )


async def _undelivered(deps: BotDeps, channel: str) -> list[str]:
    """One plain line per run of this channel whose messages Slack has not taken yet."""
    lines = []
    for delivery in await deps.publisher.undelivered(channel_id=channel):
        since = slack_date(delivery.first_failed_at) if delivery.first_failed_at else "a while"
        if delivery.gave_up:
            lines.append(
                f"run `{short_id(delivery.run_id)}`: Slack kept refusing since {since}; gave up"
            )
        else:
            lines.append(
                f"run `{short_id(delivery.run_id)}`: Slack refused since {since}; still retrying"
            )
    return lines


async def _take(
    intake: Intake, command: dict[str, Any], sub: Literal["cancel", "retry"], run_id: str
) -> None:
    """Store a command that changes something in the inbox before it is acknowledged;
    it is carried out after the ack (and by the next process if this one dies)."""
    trigger = str(command.get("trigger_id") or f"{run_id}:{command.get('user_id', '')}")
    item = Command(
        sub=sub,
        run_id=run_id,
        user=str(command.get("user_id", "")),
        channel=str(command.get("channel_id", "")),
        team=command.get("team_id") or None,
        enterprise=command.get("enterprise_id") or None,
    )
    await intake.accept(stored(item, event_id=f"command:{trigger}"))


async def process_command(deps: BotDeps, received: Received[Command]) -> None:
    """A stored `/grace cancel` or `/grace retry`, after the ack."""
    item = received.item
    state = await deps.store.load(item.run_id)
    if state is not None and not of_acting_team(state):
        return  # checked before it was stored; a forged row changes nothing of another team
    if item.sub == "cancel":
        await _cancel(deps, item.run_id, item.user, item.channel)
    else:
        await _retry(deps, item.run_id, item.user, item.channel, received.run_id)


async def find_run(deps: BotDeps, ref: str, user: str, channel: str) -> RunState | str:
    """The run a full or short id (its first characters) names, when `user` may read it;
    otherwise `not_found(ref)` — word for word the same whether the run does not exist
    or is hidden, so no answer tells a hidden run's id apart (the run-id oracle).

    A short id is matched among this channel's recent runs first, then everyone's, and
    only runs the user may read count: a hidden run never makes a prefix ambiguous.
    """
    state = await deps.store.load(ref)
    if state is not None:
        return state if await deps.access.may_read(state, user) else not_found(ref)
    prefix = short_id_prefix(ref)
    if prefix is None:
        return not_found(ref)
    for scope in (channel, None):
        runs = await deps.store.runs.list_runs(channel_id=scope, limit=SHORT_ID_SEARCH)
        matches = [
            r for r in runs if r.run_id.startswith(prefix) and await deps.access.may_read(r, user)
        ]
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            return f"More than one of your runs starts with {prefix!r}: give a few more characters."
    return not_found(ref)


async def handle_grace(
    deps: BotDeps,
    intake: Intake,
    ack: AsyncAck,
    command: dict[str, Any],
    client: AsyncWebClient | None = None,
) -> None:
    words = str(command.get("text", "")).split()
    sub = words[0].lower() if words else "help"
    arg = words[1] if len(words) > 1 else None
    user = str(command.get("user_id", ""))
    channel = str(command.get("channel_id", ""))

    if sub == "config" and client is not None:
        await ack()  # the modal opens after the ack (users.info first)
        trigger = str(command.get("trigger_id", ""))
        deps.tasks.spawn(
            open_config(deps, client, channel=channel, user=user, trigger_id=trigger),
            name=f"config {channel}",
        )
        return

    if sub == "status" and arg is None:
        recent = await deps.store.runs.list_runs(limit=MINE_SEARCH)
        runs = [r for r in recent if r.asker == user and of_acting_team(r)][:RUNS_LISTED]
        late = await _undelivered(deps, channel)
        text = f"Your {len(runs)} recent runs"
        if late:
            text += f"; messages of {len(late)} runs in this channel not delivered yet"
        await _ack_blocks(ack, text, runs_list_blocks(runs, undelivered=late))
        return
    if sub == "status" and arg is not None and arg.lower() == "all":
        listed = await deps.store.runs.list_runs(channel_id=channel, limit=RUNS_LISTED)
        runs = [r for r in listed if await deps.access.may_read(r, user)]  # members: all
        blocks = runs_list_blocks(
            runs,
            title="GRACE — recent questions in this channel",
            empty="Nobody has asked me anything in this channel yet.",
            with_asker=True,
            undelivered=await _undelivered(deps, channel),
        )
        await _ack_blocks(ack, f"{len(runs)} recent runs in this channel", blocks)
        return
    if sub in ("status", "cancel", "retry"):
        if not arg:
            message = f"Which run? `/grace {sub} <run>` — `/grace status` lists your runs."
            await _ack_blocks(ack, message, error_blocks(message))
            return
        found = await find_run(deps, arg, user, channel)
        if isinstance(found, str):
            await _ack_blocks(ack, found, error_blocks(found))
            return
        state = found
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
            await _take(intake, command, "cancel", state.run_id)
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
        await _take(intake, command, "retry", state.run_id)
        await ack(text=f"Retrying run {state.run_id}…", response_type="ephemeral")
        return
    if sub == "stats":
        since = datetime.combine(utcnow().date(), time.min, tzinfo=utcnow().tzinfo)
        if user not in deps.settings.approvers:
            # Workspace-wide figures are for approvers; everyone else sees their own.
            recent = await deps.store.runs.list_runs(limit=MINE_SEARCH)
            mine = [
                r for r in recent if r.asker == user and r.created_at >= since and of_acting_team(r)
            ]
            blocks = stats_blocks(stats_of(mine), title="GRACE — your questions today")
            await _ack_blocks(ack, "Your GRACE stats for today", blocks)
            return
        team = current_team()  # OAuth mode: this workspace's figures only
        team_id = team.team_id if team is not None else None
        stats = await deps.store.stats(since=since, team_id=team_id)
        votes = await deps.store.recent_feedback(FEEDBACK_WINDOW, team_id=team_id)
        up = sum(1 for _, helpful in votes if helpful)
        feedback = (up, len(votes) - up, FEEDBACK_WINDOW)
        notes = await _lexical_only_notes(deps)
        blocks = stats_blocks(stats, feedback=feedback, notes=notes)
        await _ack_blocks(ack, "GRACE stats for today", blocks)
        return
    if sub == "thresholds":
        team = current_team()  # OAuth mode: this workspace's own thresholds and changes
        mine = team.team_id if team is not None and team.team_id else None
        t = deps.orchestrator.team_thresholds.get(mine or "", deps.orchestrator.thresholds)
        values = {"silent": t.silent, "notify": t.notify, "confirm": t.confirm}
        name = team_thresholds_name(mine) if deps.settings.oauth_mode and mine else None
        audit = SqlThresholdAudit(deps.store.engine)
        changes = await audit.recent(THRESHOLD_CHANGES_SHOWN, name=name)
        await _ack_blocks(ack, "Current thresholds", thresholds_blocks(values, changes))
        return
    if sub == "verified":
        text, blocks = await verified_list(deps)
        await _ack_blocks(ack, text, blocks)
        return
    if sub == "forget":
        removed, message = await forget(deps, user, arg)
        blocks = [section(safe(message, 2900))] if removed else error_blocks(message)
        await _ack_blocks(ack, message, blocks)
        return
    if sub == "help":
        await _ack_blocks(ack, "GRACE help", help_blocks())
        return
    text = f"`/grace {sub}` is not a command I know. Here is what I do:"
    await _ack_blocks(ack, text, help_blocks(unknown=sub))


async def _lexical_only_notes(deps: BotDeps) -> list[str]:
    """One line per collection searched by keywords only although a dense model is
    configured (built before it was): `grace reembed` fixes it."""
    from agent.knowledge.qdrant_collections import QdrantCollections, lexical_only_note

    kb = deps.orchestrator.knowledge_base
    if not isinstance(kb, QdrantCollections) or kb.embedder is None:
        return []
    model = kb.embedder.name
    return [lexical_only_note(name, model) for name in await kb.collections_lacking_dense()]


def register(app: AsyncApp, deps: BotDeps, intake: Intake) -> None:
    @app.command("/grace")
    async def grace_command(ack: AsyncAck, command: dict[str, Any]) -> None:
        await handle_grace(deps, intake, ack, command, app.client)
