"""Expires interventions nobody answered in time and applies `auto_proceed_on_timeout`."""

from __future__ import annotations

import asyncio
import logging

from agent.schemas import utcnow
from bot.wiring import Services

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


async def sweep_forever(services: Services, interval: float = 60.0) -> None:
    while True:
        try:
            await sweep_once(services)
        except Exception:  # keep sweeping; the next pass retries
            log.exception("expiry sweep failed")
        await asyncio.sleep(interval)
