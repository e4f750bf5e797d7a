"""Keeping the knowledge base in step with its sources from the service: the catalog of
remembered sources (in the database, shared by every replica) and the scheduled sync
`grace serve` runs every `GRACE_KNOWLEDGE__SYNC_INTERVAL_MINUTES` (off by default).

Replicas share one lease (`task_leases`): the one that takes it syncs, holding it with
short renewals while it works and then until the next sync is due, so the others skip
that turn; if it dies, the lease runs out and another takes the next turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import TYPE_CHECKING

from agent.schemas import utcnow
from agent.sources import SOURCES_FILE, FileSourceCatalog
from storage.sources import SqlSourceCatalog

if TYPE_CHECKING:
    from agent.knowledge.source_ingest import SourceReport
    from bot.service.wiring import Services

log = logging.getLogger(__name__)

SYNC_LEASE = "knowledge_sync"
HOLD = timedelta(minutes=2)
"""How long a replica's hold on the sync lease lasts without a renewal."""
RENEW_EVERY = 30.0


async def source_catalog(services: Services) -> SqlSourceCatalog:
    """The database catalog; sources an earlier GRACE kept in `DATA_DIR/sources.json` are
    moved into it once (the file is renamed `sources.json.imported`)."""
    catalog = SqlSourceCatalog(services.engine, health=services.store.health)
    legacy = services.settings.data_dir / SOURCES_FILE
    if legacy.exists():
        for source in await FileSourceCatalog(legacy).list():
            if await catalog.get(source.location) is None:
                await catalog.save(source)
        legacy.rename(legacy.with_name(SOURCES_FILE + ".imported"))
    return catalog


async def sync_once(
    services: Services, *, owner: str | None = None, every: timedelta | None = None
) -> list[SourceReport] | None:
    """One scheduled sync, if this replica wins the lease (None: another holds it).
    Afterwards the lease is held for `every` more, the time until the next turn."""
    from agent.knowledge.sync import sync_all  # the ingester: loaded when a sync runs

    owner = owner or services.orchestrator.worker_id
    catalog = await source_catalog(services)
    if not await catalog.take_lease(SYNC_LEASE, owner, until=utcnow() + HOLD):
        return None

    async def renew() -> None:
        while True:
            await asyncio.sleep(RENEW_EVERY)
            await catalog.take_lease(SYNC_LEASE, owner, until=utcnow() + HOLD)

    renewer = asyncio.create_task(renew(), name="sync lease")
    try:
        reports = await sync_all(services.knowledge_base, catalog)
    finally:
        renewer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await renewer
    if every is not None:
        await catalog.take_lease(SYNC_LEASE, owner, until=utcnow() + every)
    for report in reports:
        log.info(
            "synced %s",
            report.location,
            extra={
                "event": "knowledge_synced",
                "added": len(report.added),
                "changed": len(report.changed),
                "removed": len(report.removed),
                "unchanged": len(report.unchanged),
                "skipped": len(report.skipped),
                "error": report.error,
            },
        )
    return reports


async def sync_forever(
    services: Services,
    minutes: float,
    *,
    wait: Callable[[float], Awaitable[object]] = asyncio.sleep,
) -> None:
    """Every `minutes`, `sync_once` (the first after one interval: a restart does not
    sync); a failed pass is logged and the next one tries again. `wait` is the trigger
    (tests drive it with an event)."""
    every = timedelta(minutes=minutes)
    while True:
        await wait(every.total_seconds())
        try:
            await sync_once(services, every=every)
        except Exception:
            log.exception("scheduled knowledge sync failed")
