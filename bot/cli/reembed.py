"""`grace reembed [--collection NAME]`: add dense vectors to collections built without them
(ingested before GOOGLE_API_KEY was set, or with GRACE_EMBEDDER=none), from the text
already stored — no file is read again. Without `--collection`, every such collection."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.service.wiring import Services


def add_reembed_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    reembed = sub.add_parser(
        "reembed",
        help="add dense vectors (the configured embedding model's) to collections without them",
    )
    reembed.add_argument("--collection", help="only this one (default: every one without them)")


async def run_reembed(args: argparse.Namespace, services: Services) -> int:
    kb = services.knowledge_base
    if kb.embedder is None:
        from bot.cli.errors import CommandError, ExitCode

        raise CommandError(
            "invalid_input",
            "no embedding model is configured, so there is nothing to add: set "
            "GOOGLE_API_KEY (Gemini's embeddings) or GRACE_EMBEDDER=use-m3, then run "
            "`grace reembed` again",
            ExitCode.BAD_INPUT,
        )
    names = [args.collection] if args.collection else await kb.collections_lacking_dense()
    if not names:
        print(f"every collection already has {kb.embedder.name}'s dense vectors")
        return 0
    for name in names:
        count = await kb.add_dense_vectors(name)
        if count:
            print(f"{name}: added {kb.embedder.name}'s dense vectors to {count} chunks")
        else:
            print(f"{name}: already has dense vectors")
    return 0
