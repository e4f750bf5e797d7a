"""Background upkeep, every pass: expire interventions nobody answered in time (applying
`auto_proceed_on_timeout`), take over runs whose worker died mid-run, act on answers
or expiries a dead process claimed but never applied, and forget old Slack event ids
(and processed inbox rows) and finished runs past `GRACE_RETENTION_DAYS`."""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta

from agent.schemas import RunState, RunStatus, utcnow
from agent.workers import is_abandoned
from bot.service.wiring import Services
from storage.retention import Purged, SqlRetention

log = logging.getLogger(__name__)


async def sweep_once(services: Services) -> list[str]:
    """One pass; each expiry is claimed atomically, so replicas never expire twice."""
    outcomes = []
    for request in await services.store.due_interventions(utcnow()):
        if not await services.store.claim_expiry(
            intervention_id=request.intervention_id, now=utcnow()
        ):
            continue
        state = await services.orchestrator.expire(request.run_id, request.intervention_id)
        status = state.status.value if state else "unknown"
        outcomes.append(
            f"{request.run_id}: intervention {request.intervention_id} expired → {status}"
        )
    return outcomes


async def abandoned_runs(services: Services) -> list[RunState]:
    """PLANNING/RUNNING runs whose worker is gone (see agent/workers.py), oldest first."""
    me, now = services.orchestrator.worker_id, utcnow()
    return [
        state
        for status in (RunStatus.PLANNING, RunStatus.RUNNING)
        for state in await services.store.runs_with_status(status)
        if is_abandoned(state, me=me, now=now)
    ]


async def adopt_abandoned(services: Services) -> list[RunState]:
    """Take over every abandoned run this process can win; the caller drives them on."""
    adopted = []
    for state in await abandoned_runs(services):
        mine = await services.orchestrator.adopt(state.run_id)
        if mine is not None:
            log.warning(
                "took over a run whose worker is gone",
                extra={"run_id": state.run_id, "previous_worker": state.worker},
            )
            adopted.append(mine)
    return adopted


async def recover_once(services: Services) -> list[str]:
    """Adopt abandoned runs and drive each to its next stop (answer, pause, failure)."""
    outcomes = []
    for state in await adopt_abandoned(services):
        await services.orchestrator.run_adopted(state)
        outcomes.append(f"{state.run_id}: {state.status.value}")
    return outcomes


async def finish_stranded_once(services: Services) -> list[str]:
    """Move on paused runs whose question was answered or expired a lease ago by a process
    that died before acting on it (see `Orchestrator.finish_stranded`)."""
    lease = timedelta(seconds=services.orchestrator.config.execution.lease_seconds)
    outcomes = []
    for request in await services.store.stranded_interventions(utcnow() - lease):
        state = await services.orchestrator.finish_stranded(request.run_id, request.intervention_id)
        if state is not None:
            closed = request.status.value
            log.warning("acted on a stranded %s question", closed, extra={"run_id": state.run_id})
            outcomes.append(f"{state.run_id}: {closed} question → {state.status.value}")
    return outcomes


async def prune_once(services: Services) -> int:
    """Forget handled Slack requests older than the retention period (Slack stops retrying
    after minutes; without this the inbox grows forever). Returns how many."""
    days = services.settings.slack.event_retention_days
    return await services.inbox.prune(before=utcnow() - timedelta(days=days))


async def retain_once(services: Services) -> Purged | None:
    """Apply `GRACE_RETENTION_DAYS` (storage/retention.py says what goes and what stays);
    None when it is 0 (keep everything)."""
    days = services.settings.retention_days
    if days <= 0:
        return None
    purged = await SqlRetention(services.engine, health=services.store.health).purge(
        before=utcnow() - timedelta(days=days)
    )
    if purged.runs or purged.inbox:
        log.info(
            "retention: forgot %d finished runs and %d Slack requests older than %g days",
            purged.runs,
            purged.inbox,
            days,
            extra={"event": "retention_purge", "runs": purged.runs, "inbox": purged.inbox},
        )
    return purged


async def sweep_forever(services: Services, interval: float = 60.0) -> None:
    while True:
        try:
            await sweep_once(services)
            await recover_once(services)
            await finish_stranded_once(services)
            await prune_once(services)
            await retain_once(services)
        except Exception:  # keep sweeping; the next pass retries
            log.exception("sweep failed")
        await asyncio.sleep(interval)
