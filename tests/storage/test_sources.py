"""Remembered knowledge sources and task leases (storage/sources.py, 0007), on every
backend: what one replica remembers, another reads; one replica at a time holds a lease."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from sqlalchemy.ext.asyncio import AsyncEngine

from agent.knowledge.crawl import PageMemo
from agent.schemas import utcnow
from agent.sources import FileMemo, KnowledgeSource, SourceKind, SourceOptions, find_source
from storage.sources import SqlSourceCatalog


def _folder(location: str = "/srv/docs") -> KnowledgeSource:
    return KnowledgeSource(
        kind=SourceKind.FOLDER,
        location=location,
        options=SourceOptions(collection="handbook"),
        added_at=utcnow(),
        files={
            f"{location}/a.md": FileMemo(source="a.md", size=10, mtime_ns=5, sha256="ab" * 32),
            f"{location}/b.pdf": FileMemo(
                source="b.pdf", size=0, mtime_ns=0, sha256="", skipped="encrypted"
            ),
        },
    )


async def test_sources_are_saved_read_replaced_and_removed(engine: AsyncEngine) -> None:
    catalog, other_replica = SqlSourceCatalog(engine), SqlSourceCatalog(engine)
    folder = _folder()
    site = KnowledgeSource(
        kind=SourceKind.URL,
        location="https://docs.example.com/handbook/",
        added_at=utcnow() + timedelta(seconds=1),
        pages={"https://docs.example.com/handbook/": PageMemo(etag='"v1"')},
    )
    await catalog.save(folder)
    await catalog.save(site)

    assert await other_replica.get(folder.location) == folder
    assert [s.location for s in await other_replica.list()] == [folder.location, site.location]
    assert folder.documents == 1  # the skipped file holds nothing
    assert await find_source(other_replica, folder.id) == folder
    assert await find_source(other_replica, site.location) == site
    assert await find_source(other_replica, "nothing") is None

    changed = folder.model_copy(update={"last_sync": utcnow(), "files": {}})
    await catalog.save(changed)
    assert await other_replica.get(folder.location) == changed
    assert len(await other_replica.list()) == 2

    assert await catalog.remove(folder.location) is True
    assert await catalog.remove(folder.location) is False
    assert await other_replica.get(folder.location) is None
    assert [s.location for s in await other_replica.list()] == [site.location]


async def test_one_replica_at_a_time_holds_a_lease(engine: AsyncEngine) -> None:
    catalog = SqlSourceCatalog(engine)
    now = utcnow()
    soon = now + timedelta(minutes=2)
    # Two replicas ask at once: exactly one wins.
    won = await asyncio.gather(
        catalog.take_lease("knowledge_sync", "replica-a", until=soon),
        SqlSourceCatalog(engine).take_lease("knowledge_sync", "replica-b", until=soon),
    )
    assert sorted(won) == [False, True]
    holder, other = ("replica-a", "replica-b") if won[0] else ("replica-b", "replica-a")
    assert await catalog.take_lease("knowledge_sync", holder, until=soon) is True  # renewal
    assert await catalog.take_lease("knowledge_sync", other, until=soon) is False
    assert await catalog.take_lease("other_job", other, until=soon) is True  # leases apart

    await catalog.take_lease("knowledge_sync", holder, until=now - timedelta(seconds=1))
    assert await catalog.take_lease("knowledge_sync", other, until=soon) is True  # ran out
    await catalog.release_lease("knowledge_sync", holder)  # not the holder: nothing
    assert await catalog.take_lease("knowledge_sync", holder, until=soon) is False
    await catalog.release_lease("knowledge_sync", other)
    assert await catalog.take_lease("knowledge_sync", holder, until=soon) is True
