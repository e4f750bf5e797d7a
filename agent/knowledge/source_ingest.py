"""One entry point for `grace ingest LOCATION`: a folder, a file or a web address.

`ingest_source` dispatches: a path goes through `ingest.ingest` (every supported file
in it), a URL through the crawler (`crawl.py`), its pages stored in batches as they
arrive. Either way the answer is a `SourceReport`: what was added, changed, removed,
left unchanged and skipped (with reasons), ready to print. Given a `SourceCatalog`, the
source is remembered with its options, and a crawl's page validators, so the next
ingest of the same URL asks each page "changed since?" (304 = unchanged, not re-read).
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

from pydantic import BaseModel, Field

from agent.errors import NetworkError
from agent.knowledge.chunks import IngestReport, IngestResult, SkippedFile
from agent.knowledge.crawl import (
    DEFAULT_DELAY,
    DEFAULT_MAX_PAGES,
    CrawledPage,
    Crawler,
    CrawlSettings,
    PageMemo,
    is_url,
    normalise_url,
)
from agent.knowledge.documents import Document
from agent.knowledge.file_memos import mark_skipped, snapshot
from agent.knowledge.ingest import ProgressCallback, ReadCallback, ingest, ingest_documents
from agent.knowledge.qdrant_kb import QdrantKnowledgeBase
from agent.sources import FileMemo, KnowledgeSource, SourceCatalog, SourceKind, SourceOptions

__all__ = ["IngestOptions", "SourceReport", "ingest_source", "remember"]

PAGE_BATCH = 50
"""Fetched pages stored per write (with `PAGE_BATCH_BYTES`: memory stays bounded)."""
PAGE_BATCH_BYTES = 16 << 20
LISTED = 20
"""Above this many names, a report line says how many instead of naming them all."""


class IngestOptions(BaseModel):
    """How to ingest a location (`grace ingest … --collection --max-pages`)."""

    collection: str | None = None
    max_pages: int = Field(default=DEFAULT_MAX_PAGES, ge=1)
    delay: float = Field(default=DEFAULT_DELAY, ge=0)
    """Seconds between two requests to a crawled site."""
    remember: bool = True
    """Keep the source in the catalog (when one is given) for `grace sync`."""


class SourceReport(BaseModel):
    """What ingesting one location did, document by document."""

    kind: SourceKind
    location: str
    collection: str
    added: list[IngestReport] = Field(default_factory=list)
    changed: list[IngestReport] = Field(default_factory=list)
    removed: list[str] = Field(default_factory=list)
    """Sources whose chunks were deleted (a page that answers 404/410)."""
    unchanged: list[str] = Field(default_factory=list)
    """Sources not re-read: a crawled page that answered 304 Not Modified."""
    skipped: list[SkippedFile] = Field(default_factory=list)
    not_reindexed: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    """Whole-source remarks: the page limit was reached, robots.txt forbids, …"""
    error: str | None = None
    """Why the source could not be read at all (`grace sync` goes on with the next)."""
    seconds: float = 0.0

    @property
    def chunks(self) -> int:
        return sum(r.chunks for r in self.added) + sum(r.chunks for r in self.changed)

    def lines(self) -> list[str]:
        """The report as printed by `grace ingest`: one line per document (a count past
        `LISTED` of a kind), then the totals."""
        if self.error is not None:
            return [f"{self.location}: not synced: {self.error}"]
        out: list[str] = []
        for verb, reports in (("added", self.added), ("changed", self.changed)):
            if len(reports) > LISTED:
                chunks = sum(r.chunks for r in reports)
                out.append(f"{verb} {len(reports)} documents ({chunks} chunks)")
                continue
            for report in reports:
                out.append(f"{verb} {report.source} ({_chunks(report.chunks)})")
        for verb, names in (("removed", self.removed), ("unchanged", self.unchanged)):
            if len(names) > LISTED:
                out.append(f"{verb} {len(names)} documents")
            else:
                out.extend(f"{verb} {name}" for name in names)
        out.extend(f"skipped {item.path} ({item.reason})" for item in self.skipped)
        out.extend(self.notes)
        out.append(
            f"{self.location}: {len(self.added)} added, {len(self.changed)} changed, "
            f"{len(self.removed)} removed, {len(self.unchanged)} unchanged, "
            f"{len(self.skipped)} skipped ({self.chunks} chunks into {self.collection!r} "
            f"in {self.seconds:.1f} s)"
        )
        return out


def _chunks(count: int) -> str:
    return f"{count} chunk{'s' if count != 1 else ''}"


async def ingest_source(
    kb: QdrantKnowledgeBase,
    location: str,
    options: IngestOptions | None = None,
    *,
    catalog: SourceCatalog | None = None,
    on_file: ProgressCallback | None = None,
    on_start: Callable[[int, int], None] | None = None,
    on_read: ReadCallback | None = None,
) -> SourceReport:
    """Ingest a folder, a file or a URL (crawled); remember it in `catalog` if given.

    Raises `InvalidInputError` when a path holds nothing that can be ingested, and
    `NetworkError` when a crawl could read no page at all (each with the reasons)."""
    options = options or IngestOptions()
    started = time.perf_counter()
    files: dict[str, FileMemo] = {}
    if is_url(location):
        report, pages = await _crawl(kb, normalise_url(location), options, catalog)
        kind = SourceKind.URL
    else:
        path, kind = _local(location)
        files = snapshot(path)  # before reading: a change meanwhile is seen by the next sync
        result = await ingest(
            kb,
            [path],
            collection=options.collection,
            on_file=on_file,
            on_start=on_start,
            on_read=on_read,
        )
        report = _from_result(result, kind, str(path), options.collection or "", kb)
        mark_skipped(files, result.skipped)
        pages = {}
    report.seconds = round(time.perf_counter() - started, 3)
    if catalog is not None and options.remember:
        await remember(catalog, kind, report.location, options, pages=pages, files=files)
    return report


def _local(location: str) -> tuple[Path, SourceKind]:
    """The absolute path a location names (what it is remembered by), and its kind."""
    path = Path(location).expanduser().resolve()
    return path, SourceKind.FOLDER if path.is_dir() else SourceKind.FILE


def _from_result(
    result: IngestResult,
    kind: SourceKind,
    location: str,
    collection: str,
    kb: QdrantKnowledgeBase,
) -> SourceReport:
    return SourceReport(
        kind=kind,
        location=location,
        collection=collection or kb.default_collection,
        added=[r for r in result.reports if not r.replaced],
        changed=[r for r in result.reports if r.replaced],
        skipped=result.skipped,
        not_reindexed=result.not_reindexed,
    )


async def _crawl(
    kb: QdrantKnowledgeBase,
    start: str,
    options: IngestOptions,
    catalog: SourceCatalog | None,
) -> tuple[SourceReport, dict[str, PageMemo]]:
    """Crawl `start`, storing fetched pages in batches; the report and the page memos."""
    known = await catalog.get(start) if catalog is not None else None
    memos = known.pages if known is not None else {}
    crawler = Crawler(start, memos, CrawlSettings(max_pages=options.max_pages, delay=options.delay))
    collection = options.collection or kb.default_collection
    report = SourceReport(kind=SourceKind.URL, location=start, collection=collection)
    pages: dict[str, PageMemo] = {}
    batch: list[Document] = []
    batch_bytes = 0

    async def store() -> None:
        nonlocal batch, batch_bytes
        if not batch:
            return
        documents, batch, batch_bytes = batch, [], 0
        result = await ingest_documents(kb, documents, collection=collection)
        part = _from_result(result, SourceKind.URL, start, collection, kb)
        report.added += part.added
        report.changed += part.changed
        report.skipped += part.skipped
        report.not_reindexed = part.not_reindexed
        for skipped in part.skipped:
            pages.pop(skipped.path, None)  # not stored: read it in full next time

    async for item in crawler.pages():
        if isinstance(item, CrawledPage):
            pages[item.url] = item.memo
            if item.status == "unchanged":
                report.unchanged.append(item.url)
                continue
            body = item.body or b""
            batch.append(
                Document(_page_path(item.url), source=item.url, url=item.url, content=body)
            )
            batch_bytes += len(body)
            if len(batch) >= PAGE_BATCH or batch_bytes >= PAGE_BATCH_BYTES:
                await store()
        elif item.gone and await kb.delete_source(collection, item.url):
            report.removed.append(item.url)
        else:
            report.skipped.append(SkippedFile(path=item.url, reason=item.reason))
            if item.url in memos and not item.gone:
                pages[item.url] = memos[item.url]  # a passing error: still a known page
    await store()
    report.notes += crawler.notes
    if not (report.added or report.changed or report.unchanged or report.removed):
        reasons = "; ".join(
            [*crawler.notes, *(f"{s.path} ({s.reason})" for s in report.skipped[:5])]
        )
        raise NetworkError(f"cannot ingest {start}: no page could be read ({reasons})")
    if not crawler.limit_reached:
        # A whole crawl that no longer reaches a page it stored before: no link or
        # sitemap entry leads there any more, so it goes (a page-limited crawl proves
        # nothing about the pages it did not get to).
        for url in memos:
            if url not in pages and url not in report.removed:
                if await kb.delete_source(collection, url):
                    report.removed.append(url)
    return report, pages


def _page_path(url: str) -> Path:
    """A page's stand-in file name (for progress lines): the last part of its path."""
    name = urlsplit(url).path.rstrip("/").rsplit("/", 1)[-1]
    return Path(name or "index.html")


async def remember(
    catalog: SourceCatalog,
    kind: SourceKind,
    location: str,
    options: IngestOptions,
    *,
    pages: dict[str, PageMemo] | None = None,
    files: dict[str, FileMemo] | None = None,
) -> None:
    """Save (or update) the source with what this ingest saw, for the next sync."""
    now = dt.datetime.now(dt.UTC)
    known = await catalog.get(location)
    await catalog.save(
        KnowledgeSource(
            kind=kind,
            location=location,
            options=SourceOptions(
                collection=options.collection,
                max_pages=options.max_pages if kind is SourceKind.URL else None,
                delay=options.delay if kind is SourceKind.URL else None,
            ),
            added_at=known.added_at if known is not None else now,
            last_sync=now,
            pages=pages or {},
            files=files or {},
        )
    )
