"""`grace feedback RUN up|down`: a vote on an answer, counted as a Slack 👍/👎 is."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from bot.cli.errors import CommandError, ExitCode
from bot.cli.output import load_run

if TYPE_CHECKING:
    from bot.service.wiring import Services


async def run_feedback(args: argparse.Namespace, services: Services) -> int:
    from bot.service.feedback import record_feedback

    state = await load_run(services, args.run_id)
    if state.overall_confidence is None:
        raise CommandError(
            "not_answered",
            f"Run {state.run_id} has no answer yet; feedback is for answers.",
            ExitCode.BAD_INPUT,
        )
    reply = await record_feedback(
        store=services.store,
        orchestrator=services.orchestrator,
        config=services.settings.intervention,
        state=state,
        user=args.user,
        up=args.vote == "up",
        counted_voters=services.settings.feedback.counted_voters,
    )
    print(reply.text)
    return 0
