"""`grace ingest`: documents into the knowledge base, one summary line at the end."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from bot.cli.progress import IngestProgress

if TYPE_CHECKING:
    from agent.knowledge.chunks import IngestResult
    from bot.service.wiring import Services

SAMPLE_KB = Path(__file__).resolve().parents[2] / "agent" / "sample_kb"


async def run_ingest(args: argparse.Namespace, services: Services) -> int:
    from agent.errors import InvalidInputError
    from agent.knowledge.crawl import is_url

    urls = [p for p in args.paths if is_url(p)]
    paths = [Path(p) for p in args.paths if not is_url(p)] + ([SAMPLE_KB] if args.sample else [])
    if not paths and not urls:
        raise InvalidInputError("Give files, directories or web addresses to ingest, or --sample.")
    if paths:
        await _ingest_paths(args, services, paths)
    for url in urls:
        await _ingest_site(args, services, url)
    return 0


async def _ingest_site(args: argparse.Namespace, services: Services, url: str) -> None:
    """A web site: crawled under the address given, one line per page and a total."""
    from agent.knowledge.source_ingest import IngestOptions, ingest_source
    from bot.service.knowledge_sync import source_catalog

    settings = services.settings
    options = IngestOptions(
        collection=args.collection,
        max_pages=args.max_pages or settings.knowledge.crawl_max_pages,
        delay=settings.knowledge.crawl_delay_seconds,
    )
    # The catalog keeps each page's ETag / Last-Modified: the next ingest of the same
    # address (or `grace sync`) asks "changed since?" and leaves unchanged pages unread.
    catalog = source_catalog(services)
    report = await ingest_source(services.knowledge_base, url, options, catalog=catalog)
    print("\n".join(report.lines()))


async def _ingest_paths(args: argparse.Namespace, services: Services, paths: list[Path]) -> None:
    """Files and folders, each remembered as a source for `grace sync`, with what each
    file was (size, time, hash) just before it was read."""
    from agent.knowledge.file_memos import mark_skipped, snapshot
    from agent.knowledge.ingest import ingest
    from agent.knowledge.source_ingest import IngestOptions, remember
    from agent.sources import SourceKind
    from bot.service.knowledge_sync import source_catalog

    roots = [path.expanduser().resolve() for path in paths]
    snapshots = [snapshot(root) for root in roots]
    progress = IngestProgress() if sys.stderr.isatty() else None
    try:
        result = await ingest(
            services.knowledge_base,
            paths,
            collection=args.collection,
            on_start=progress.start if progress else None,
            on_file=progress.advance if progress else None,
            on_read=progress.read if progress else None,
        )
    finally:
        if progress is not None:
            progress.close()
    catalog = source_catalog(services)
    for root, files in zip(roots, snapshots, strict=True):
        mark_skipped(files, result.skipped)
        kind = SourceKind.FOLDER if root.is_dir() else SourceKind.FILE
        options = IngestOptions(collection=args.collection)
        await remember(catalog, kind, str(root), options, files=files)
    collection = args.collection or services.knowledge_base.default_collection
    if len(result.reports) <= INGEST_LISTED_FILES:
        for report in result.reports:
            print(report.line())
    total = await services.knowledge_base.count(collection)
    print(ingest_summary(result, collection=collection, total=total))


INGEST_LISTED_FILES = 20
"""Above this many files, `grace ingest` prints only its summary line."""


def ingest_summary(result: IngestResult, *, collection: str, total: int) -> str:
    """One line: files, chunks, what was skipped and why, seconds, the collection's size."""
    files = f"{result.files} file{'s' if result.files != 1 else ''}"
    line = (
        f"Ingested {files} ({result.chunks} chunks) into {collection!r} in "
        f"{result.seconds:.1f} s; it now holds {total} chunks"
    )
    if result.skipped:
        named = "; ".join(f"{item.path} ({item.reason})" for item in result.skipped)
        line += f". Skipped {len(result.skipped)}: {named}"
    if result.not_reindexed:
        line += (
            f". {len(result.not_reindexed)} other document(s) in {collection!r} were "
            f"indexed by an older GRACE and will be missed by some searches: ingest them "
            f"again too"
        )
    return line + "."
