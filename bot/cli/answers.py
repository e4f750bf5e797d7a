"""`grace resume RUN --action …` answers a paused run from the command line; `grace
feedback RUN up|down` votes on an answered one, counted as a Slack 👍/👎 is."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from bot.cli.errors import CommandError, ExitCode
from bot.cli.output import load_run, print_run

if TYPE_CHECKING:
    from bot.service.wiring import Services


async def run_resume(args: argparse.Namespace, services: Services) -> int:
    from agent.errors import InvalidInputError
    from agent.schemas import InterventionAction, InterventionAnswer

    state = await load_run(services, args.run_id)
    if state.pending is None:
        raise CommandError(
            "not_waiting",
            f"Run {args.run_id} is {state.status.value}, not waiting for an answer.",
            ExitCode.BAD_INPUT,
        )
    if not services.orchestrator.may_answer(state.pending, args.user):
        raise CommandError(
            "not_allowed",
            f"{args.user} may not answer run {args.run_id}: only the person who asked "
            f"({state.asker}) or an approver (GRACE_APPROVERS) may.",
            ExitCode.NOT_ALLOWED,
        )
    action = InterventionAction(args.action)
    if action in (InterventionAction.MODIFY, InterventionAction.INPUT) and not (
        args.text or args.option is not None
    ):
        raise InvalidInputError(f"--action {action.value} needs --text (or --option N).")
    option = option_index(args.option, state.pending.options)
    answer = InterventionAnswer(action=action, text=args.text, option=option, user=args.user)
    outcome = await services.orchestrator.answer(
        state.run_id, state.pending.intervention_id, answer
    )
    if not outcome.claimed:  # another answer or an expiry got there first
        raise CommandError("not_waiting", f"Not resumed: {outcome.reason}.", ExitCode.BAD_INPUT)
    assert outcome.state is not None
    return print_run(outcome.state, args.json, progress=args.progress)


async def run_feedback(args: argparse.Namespace, services: Services) -> int:
    from bot.service.feedback import record_feedback

    state = await load_run(services, args.run_id)
    if state.overall_confidence is None:
        raise CommandError(
            "not_answered",
            f"Run {state.run_id} has no answer yet; feedback is for answers.",
            ExitCode.BAD_INPUT,
        )
    reply = await record_feedback(services, state=state, user=args.user, up=args.vote == "up")
    print(reply.text)
    return 0


def option_index(number: int | None, options: list[str]) -> int | None:
    """`--option N` (numbered from 1, as Slack shows options) → the option's index."""
    from agent.errors import InvalidInputError

    if number is None:
        return None
    if not options:
        raise InvalidInputError("This question has no options; answer with --text.")
    if number == 0:
        raise InvalidInputError(
            f"Options are numbered from 1: use --option 1 for the first (1–{len(options)})."
        )
    if not 1 <= number <= len(options):
        raise InvalidInputError(f"--option must be between 1 and {len(options)}.")
    return number - 1
