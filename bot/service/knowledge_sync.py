"""Keeping the knowledge base in step with its sources from the service: where the
remembered sources are kept, and the scheduled sync `grace serve` runs every
`GRACE_KNOWLEDGE__SYNC_INTERVAL_MINUTES` (off by default).

A source's memos (each file's size, time and hash; each page's validators) describe what
one index holds, so they live where that index lives:

- the embedded knowledge base (the default): in `DATA_DIR/sources.json`, beside the index
  in the same directory. Replicas with a data directory each keep their own, and a copied
  directory carries its memos with it; one process opens a data directory, so no lock;
- a Qdrant server (`QDRANT_URL`), shared by every replica: in the database
  (`storage.sources`), and replicas share one lease (`task_leases`): the one that takes
  it syncs, holding it with short renewals while it works and then until the next sync
  is due, so the others skip that turn; if it dies the lease runs out and another takes
  the next turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import TYPE_CHECKING

from agent.schemas import utcnow
from agent.sources import SOURCES_FILE, FileSourceCatalog, SourceCatalog
from storage.sources import SqlSourceCatalog

if TYPE_CHECKING:
    from agent.knowledge.source_ingest import SourceReport
    from bot.service.wiring import Services

log = logging.getLogger(__name__)

SYNC_LEASE = "knowledge_sync"
HOLD = timedelta(minutes=2)
"""How long a replica's hold on the sync lease lasts without a renewal."""
RENEW_EVERY = 30.0


def source_catalog(services: Services) -> SourceCatalog:
    """Where this process's remembered sources are: with its index (see above)."""
    if services.settings.qdrant_url:
        return SqlSourceCatalog(services.engine, health=services.store.health)
    return FileSourceCatalog(services.settings.data_dir / SOURCES_FILE)


async def sync_once(
    services: Services,
    *,
    owner: str | None = None,
    every: timedelta | None = None,
    lease: SqlSourceCatalog | None = None,
) -> list[SourceReport] | None:
    """One scheduled sync; None when another replica holds the `lease` (default: the
    shared one with a Qdrant server, none for the embedded index). Afterwards the lease
    is held for `every` more, the time until the next turn."""
    from agent.knowledge.sync import sync_all  # the ingester: loaded when a sync runs

    owner = owner or services.orchestrator.worker_id
    catalog = source_catalog(services)
    # Replicas share the lease when they share the index, i.e. when the catalog is SQL.
    lease = lease or (catalog if isinstance(catalog, SqlSourceCatalog) else None)
    if lease is None:
        reports = await sync_all(services.knowledge_base, catalog)
    else:
        if not await lease.take_lease(SYNC_LEASE, owner, until=utcnow() + HOLD):
            return None
        held = lease

        async def renew() -> None:
            while True:
                await asyncio.sleep(RENEW_EVERY)
                await held.take_lease(SYNC_LEASE, owner, until=utcnow() + HOLD)

        renewer = asyncio.create_task(renew(), name="sync lease")
        try:
            reports = await sync_all(services.knowledge_base, catalog)
        finally:
            renewer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await renewer
        if every is not None:
            await lease.take_lease(SYNC_LEASE, owner, until=utcnow() + every)
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
    lease: SqlSourceCatalog | None = None,
) -> None:
    """Every `minutes`, `sync_once` (the first after one interval: a restart does not
    sync); a failed pass is logged and the next one tries again. `wait` is the trigger
    (tests drive it themselves); `lease` as for `sync_once`."""
    every = timedelta(minutes=minutes)
    while True:
        await wait(every.total_seconds())
        try:
            await sync_once(services, every=every, lease=lease)
        except Exception:
            log.exception("scheduled knowledge sync failed")
