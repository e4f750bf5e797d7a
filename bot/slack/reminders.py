"""Reminding experts: an escalation nobody answered for
`GRACE_SLACK__EXPERT_REMINDER_MINUTES` is posted again to its experts, once, in its
thread. The reminder is claimed in the database before it is sent, so several replicas
(or a pass repeated after a restart) never remind twice; expiry is the sweeper's, as
before."""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime, timedelta

from agent.schemas import InterventionKind, RunOrigin, RunStatus, utcnow
from blocks.intervention import reminder_text
from bot.slack.acting import TeamRef, acting_for
from bot.slack.deps import BotDeps

log = logging.getLogger(__name__)


async def remind_once(deps: BotDeps, *, now: datetime | None = None) -> list[str]:
    """One pass; returns the run ids whose experts were reminded."""
    minutes = deps.settings.slack.expert_reminder_minutes
    if minutes <= 0 or deps.channels is None:
        return []
    now = now or utcnow()
    due = now - timedelta(minutes=minutes)
    reminded = []
    for state in await deps.store.runs_with_status(RunStatus.PAUSED):
        request, experts = state.pending, state.policy.experts
        if request is None or request.kind is not InterventionKind.ESCALATE or not experts:
            continue
        if state.origin is RunOrigin.COMMAND_LINE or request.created_at > due:
            continue
        if request.expires_at is not None and request.expires_at <= now:
            continue  # the sweeper expires it
        claimed = await deps.channels.store.claim_reminder(
            request.intervention_id, run_id=state.run_id, now=now
        )
        if not claimed:
            continue
        thread = state.thread
        with acting_for(TeamRef.of_thread(thread)):  # OAuth mode: the run's team's token
            posted = await deps.publisher.post_text(
                thread.channel_id, thread.thread_ts, reminder_text(experts, request.created_at)
            )
        if posted is None:  # a 429, a 5xx, a timeout: the claim goes back, the next pass tries
            await deps.channels.store.release_reminder(request.intervention_id)
            continue
        log.info("reminded the experts of an escalation", extra={"run_id": state.run_id})
        reminded.append(state.run_id)
    return reminded


async def remind_forever(deps: BotDeps, interval: float = 60.0) -> None:
    while True:
        try:
            await remind_once(deps)
        except Exception:  # a database fault: the next pass tries again
            log.exception("expert reminders failed")
        await asyncio.sleep(interval)
