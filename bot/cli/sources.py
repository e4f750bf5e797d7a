"""`grace sync` (every remembered source read again: what changed is re-indexed, what is
gone removed) and `grace sources` (list them; `grace sources remove ID|LOCATION` forgets
one and deletes its documents from the knowledge base)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agent.sources import KnowledgeSource
    from bot.service.wiring import Services


async def run_sync(args: argparse.Namespace, services: Services) -> int:
    from agent.knowledge.sync import sync_all
    from bot.service.knowledge_sync import source_catalog

    catalog = source_catalog(services)
    reports = await sync_all(services.knowledge_base, catalog)
    if not reports:
        print("No sources remembered yet: `grace ingest PATH_OR_URL` adds one.")
        return 0
    for report in reports:
        print("\n".join(report.lines()))
    failed = [r for r in reports if r.error is not None]
    counts = {
        "added": sum(len(r.added) for r in reports),
        "changed": sum(len(r.changed) for r in reports),
        "removed": sum(len(r.removed) for r in reports),
        "unchanged": sum(len(r.unchanged) for r in reports),
        "skipped": sum(len(r.skipped) for r in reports),
    }
    totals = ", ".join(f"{n} {verb}" for verb, n in counts.items())
    synced = len(reports) - len(failed)
    line = f"Synced {synced} source{'s' if synced != 1 else ''}: {totals}"
    if failed:
        line += f"; {len(failed)} could not be synced"
    print(line + ".")
    return 1 if failed else 0


async def run_sources(args: argparse.Namespace, services: Services) -> int:
    from agent.errors import InvalidInputError
    from agent.knowledge.sync import remove_source
    from agent.sources import find_source
    from bot.service.knowledge_sync import source_catalog

    catalog = source_catalog(services)
    if args.sources_command != "remove":
        sources = await catalog.list()
        if not sources:
            print("No sources remembered yet: `grace ingest PATH_OR_URL` adds one.")
            return 0
        default = services.knowledge_base.default_collection
        for line in source_table(sources, default):
            print(line)
        return 0
    source = await find_source(catalog, args.source)
    if source is None:
        raise InvalidInputError(
            f"no remembered source {args.source!r}: `grace sources` lists their ids and locations"
        )
    removed = await remove_source(services.knowledge_base, catalog, source)
    collection = source.options.collection or services.knowledge_base.default_collection
    documents = len(removed.documents)
    print(
        f"Removed source {source.id} ({source.location}) and its {documents} "
        f"document{'s' if documents != 1 else ''} ({removed.chunks} chunks) from {collection!r}."
    )
    if removed.kept:
        print(
            f"Kept {len(removed.kept)} document(s) another source also holds: "
            + ", ".join(removed.kept[:10])
            + (" …" if len(removed.kept) > 10 else "")
        )
    return 0


def source_table(sources: list[KnowledgeSource], default_collection: str) -> list[str]:
    """One line per source: id, kind, documents, collection, last sync, location."""
    rows = [("ID", "KIND", "DOCS", "COLLECTION", "LAST SYNC (UTC)", "LOCATION")]
    for source in sources:
        synced = source.last_sync.strftime("%Y-%m-%d %H:%M") if source.last_sync else "never"
        rows.append(
            (
                source.id,
                source.kind.value,
                str(source.documents),
                source.options.collection or default_collection,
                synced,
                source.location,
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    return [
        "  ".join(
            cell.rjust(w) if i == 2 else cell.ljust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=False))
        )
        + "  "
        + row[5]
        for row in rows
    ]
