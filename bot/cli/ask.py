"""`grace ask`: run the whole agent on one question; at a pause, ask at the terminal
(unless `--no-input`, `--json` or no terminal: then it stops there, resumable)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from bot.cli.output import print_run
from bot.cli.prompts import prompt_answer

if TYPE_CHECKING:
    from bot.service.wiring import Services


async def run_ask(args: argparse.Namespace, services: Services) -> int:
    from agent.schemas import RunStatus

    orchestrator = services.orchestrator
    state = await orchestrator.start(args.question, asker=args.user, collection=args.collection)
    interactive = not args.no_input and not args.json and sys.stdin.isatty()
    while state.status is RunStatus.PAUSED and interactive:
        answer = prompt_answer(state, args.user)
        if answer is None:
            break
        assert state.pending is not None
        outcome = await orchestrator.answer(state.run_id, state.pending.intervention_id, answer)
        if outcome.state is None:
            break
        state = outcome.state
    code = print_run(state, args.json, progress=args.progress)
    await note_lexical_only(services, state.collection)
    return code


async def note_lexical_only(services: Services, collection: str | None) -> None:
    """Say on stderr (so `--json` output stays one object) when the collection searched
    has no dense vectors although a model is configured: found by keywords only."""
    from agent.knowledge.qdrant_collections import lexical_only_note

    kb = services.knowledge_base
    name = collection or kb.default_collection
    if kb.embedder is not None and await kb.lacks_dense(name):
        print(f"note: {lexical_only_note(name, kb.embedder.name)}", file=sys.stderr)
