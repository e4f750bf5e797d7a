"""How a command prints a run it has driven, and finds a run it is given by id."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

from bot.cli.errors import CommandError, ExitCode

if TYPE_CHECKING:
    from agent.schemas import RunState
    from bot.cli.observer import TerminalObserver
    from bot.service.wiring import Services


def print_run(state: RunState, as_json: bool, progress: TerminalObserver | None = None) -> int:
    """A run as `ask` and `resume` print it (one JSON object with `--json`); its exit code."""
    from agent.schemas import RunStatus
    from bot.cli.report import run_json, run_text

    if as_json:
        print(json.dumps(run_json(state), ensure_ascii=False))
    else:
        # The plan was just printed above on the same screen: do not repeat it.
        shown = progress is not None and progress.showed(state.plan) and sys.stdout.isatty()
        print(run_text(state, with_plan=not shown))
        if state.status is RunStatus.PAUSED:
            print(
                f"\nResume with: grace resume {state.run_id} --action proceed|cancel|modify|input"
            )
    return 1 if state.status is RunStatus.FAILED else 0


async def load_run(services: Services, run_id: str, reader: str | None = None) -> RunState:
    """The run `run_id` names — its full id, or the short id Slack's cards show (its first
    characters, matched among recent runs) — or the `not_found` error (exit code 2). With
    `reader` (`--as`), a run that person may not read (`agent.access`; the command line
    cannot ask Slack who is in a channel, so: the asker and approvers) is not found
    either, and never makes a short id ambiguous."""
    from agent.access import SHORT_ID_SEARCH, may_read, short_id_prefix

    def readable(state: RunState) -> bool:
        approvers = services.settings.approvers
        return reader is None or may_read(state, reader, approvers=approvers, in_channel=False)

    state = await services.store.load(run_id)
    if state is not None and readable(state):
        return state
    prefix = short_id_prefix(run_id) if state is None else None
    if prefix is not None:
        recent = await services.store.runs.list_runs(limit=SHORT_ID_SEARCH)
        matches = [r for r in recent if r.run_id.startswith(prefix) and readable(r)]
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            raise CommandError(
                "ambiguous",
                f"More than one run starts with {prefix!r}: give a few more characters.",
                ExitCode.BAD_INPUT,
            )
    raise CommandError(
        "not_found", f"No run {run_id!r}. `grace runs` lists them.", ExitCode.BAD_INPUT
    )
