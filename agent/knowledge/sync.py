"""`grace sync`: every remembered source read again, doing only the work that changed.

A folder or file: each supported file's size and modification time are compared with
what the last ingest saw (`FileMemo`); only when they differ is the file hashed, and only
when the hash differs is it read, chunked and embedded again. Files that are gone have
their chunks deleted. A web site is crawled again with its pages' validators, so an
unchanged page answers 304 and is not read; pages that are gone (404/410, or no longer
reached by a whole crawl) are deleted. Afterwards older copies of a document are decided
again (`versions.py`), so a removal can make an older copy current or a new file an
older copy of another.

A source whose folder or file is missing altogether is left as it is, with a note: an
unmounted drive must not empty the knowledge base (`grace sources remove` forgets it).
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel

from agent.errors import InvalidInputError, NetworkError
from agent.knowledge.chunking import CHUNKING_VERSION
from agent.knowledge.chunks import SkippedFile
from agent.knowledge.crawl import DEFAULT_DELAY, DEFAULT_MAX_PAGES
from agent.knowledge.documents import Document
from agent.knowledge.file_memos import memo_of, unreadable
from agent.knowledge.ingest import ingest_documents, refresh_versions, scan_files
from agent.knowledge.qdrant_kb import QdrantKnowledgeBase
from agent.knowledge.source_ingest import IngestOptions, SourceReport, ingest_source
from agent.sources import FileMemo, KnowledgeSource, SourceCatalog, SourceKind

__all__ = ["RemovedSource", "remove_source", "sync_all", "sync_source"]


class RemovedSource(BaseModel):
    """What `grace sources remove` did."""

    source: KnowledgeSource
    documents: list[str]
    """The documents whose chunks were deleted."""
    chunks: int
    kept: list[str]
    """Documents left in the knowledge base because another source still holds them."""


def _collection(kb: QdrantKnowledgeBase, source: KnowledgeSource) -> str:
    return source.options.collection or kb.default_collection


def _held(
    kb: QdrantKnowledgeBase, sources: Sequence[KnowledgeSource], but: KnowledgeSource
) -> set[tuple[str, str]]:
    """(collection, document) pairs another source holds: not deleted with this one."""
    held: set[tuple[str, str]] = set()
    for other in sources:
        if other.location == but.location:
            continue
        name = _collection(kb, other)
        held.update((name, memo.source) for memo in other.files.values() if memo.skipped is None)
        held.update((name, url) for url in other.pages)
    return held


def _documents(source: KnowledgeSource) -> list[str]:
    """Every document the source may have chunks of (a skipped file: from before)."""
    if source.kind is SourceKind.URL:
        return list(source.pages)
    return [memo.source for memo in source.files.values()]


async def sync_all(kb: QdrantKnowledgeBase, catalog: SourceCatalog) -> list[SourceReport]:
    """Sync every remembered source, in the order they were added. A source that cannot
    be read (a site down, a folder with two files of one name) is reported with its
    `error`; the others are synced all the same."""
    sources = sorted(await catalog.list(), key=lambda s: s.added_at)
    reports = []
    for source in sources:
        try:
            reports.append(await sync_source(kb, source, catalog, others=sources))
        except (InvalidInputError, NetworkError) as exc:  # this source only; on to the next
            reports.append(
                SourceReport(
                    kind=source.kind,
                    location=source.location,
                    collection=_collection(kb, source),
                    error=exc.message,
                )
            )
    return reports


async def sync_source(
    kb: QdrantKnowledgeBase,
    source: KnowledgeSource,
    catalog: SourceCatalog,
    *,
    others: Sequence[KnowledgeSource] = (),
) -> SourceReport:
    """Bring one source's documents in the knowledge base up to date; saves what it saw."""
    if source.kind is SourceKind.URL:
        options = IngestOptions(
            collection=source.options.collection,
            max_pages=source.options.max_pages or DEFAULT_MAX_PAGES,
            delay=DEFAULT_DELAY if source.options.delay is None else source.options.delay,
        )
        return await ingest_source(kb, source.location, options, catalog=catalog)
    started = time.perf_counter()
    report = await _sync_local(kb, source, catalog, _held(kb, others, source))
    report.seconds = round(time.perf_counter() - started, 3)
    return report


async def _sync_local(
    kb: QdrantKnowledgeBase,
    source: KnowledgeSource,
    catalog: SourceCatalog,
    held: set[tuple[str, str]],
) -> SourceReport:
    root = Path(source.location)
    collection = _collection(kb, source)
    report = SourceReport(kind=source.kind, location=source.location, collection=collection)
    if _missing(root):
        report.notes.append(
            f"{root} is missing: its {source.documents} document(s) were left in the knowledge "
            f"base (`grace sources remove {source.id}` removes them)"
        )
        return report
    files, _ = scan_files([root])  # unsupported types were named when it was ingested
    memos: dict[str, FileMemo] = {}
    to_read: list[tuple[Path, FileMemo]] = []
    for file in files:
        key = str(file)
        old = source.files.get(key)
        try:
            stat = file.stat()
            if old is not None and old.chunking != CHUNKING_VERSION:
                old = None  # cut into chunks by another version: read it again
            if old is not None and (old.size, old.mtime_ns) == (stat.st_size, stat.st_mtime_ns):
                memos[key] = old  # not opened at all
            else:
                memo = memo_of(file)
                if old is not None and old.sha256 == memo.sha256:
                    memos[key] = memo.model_copy(update={"skipped": old.skipped})  # touched
                else:
                    to_read.append((file, memo))
                    continue
        except OSError as exc:
            memo = unreadable(file, exc)
            memos[key] = memo
            report.skipped.append(SkippedFile(path=key, reason=memo.skipped or ""))
            continue
        if memos[key].skipped is None:
            report.unchanged.append(memos[key].source)
        else:
            report.skipped.append(SkippedFile(path=key, reason=memos[key].skipped or ""))
    current = {str(file) for file in files}
    gone = [memo for key, memo in source.files.items() if key not in current]
    for memo in gone:
        if (collection, memo.source) not in held:  # a skipped file may hold older chunks
            if await kb.delete_source(collection, memo.source):
                report.removed.append(memo.source)
    if to_read:
        result = await ingest_documents(
            kb, [Document(file) for file, _ in to_read], collection=collection
        )
        reasons = {item.path: item.reason for item in result.skipped}
        for file, memo in to_read:
            reason = reasons.get(str(file))
            memos[str(file)] = memo.model_copy(update={"skipped": reason})
        known = {memo.source for memo in source.files.values() if memo.skipped is None}
        report.added = [r for r in result.reports if r.source not in known and not r.replaced]
        report.changed = [r for r in result.reports if r.source in known or r.replaced]
        report.skipped += result.skipped
        report.not_reindexed = result.not_reindexed
    elif report.removed:
        await refresh_versions(kb, collection)
    await catalog.save(
        source.model_copy(update={"files": memos, "last_sync": dt.datetime.now(dt.UTC)})
    )
    return report


def _missing(root: Path) -> bool:
    return not root.exists()


async def remove_source(
    kb: QdrantKnowledgeBase, catalog: SourceCatalog, source: KnowledgeSource
) -> RemovedSource:
    """Forget a source and delete its documents' chunks (not those another remembered
    source holds too), then decide older copies again."""
    sources = await catalog.list()
    held = _held(kb, sources, source)
    collection = _collection(kb, source)
    deleted: list[str] = []
    kept: list[str] = []
    chunks = 0
    for document in _documents(source):
        if (collection, document) in held:
            kept.append(document)
            continue
        count = await kb.delete_source(collection, document)
        if count:
            deleted.append(document)
            chunks += count
    await catalog.remove(source.location)
    if deleted:
        await refresh_versions(kb, collection)
    return RemovedSource(source=source, documents=deleted, chunks=chunks, kept=kept)
