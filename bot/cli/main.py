"""`grace`: the console script's entry point (`main`). It parses the command line
(`bot.cli.parser`), loads the settings and logging, opens the services and hands them to
the command's handler (one module per command, mapped in `COMMANDS`); every way a
command can end becomes an exit code and one error line or JSON object (`bot.cli.errors`).
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING

from bot.cli.answers import run_feedback, run_resume
from bot.cli.ask import run_ask
from bot.cli.channels import run_channel
from bot.cli.errors import (
    CommandError,
    ExitCode,
    data_dir_in_use,
    report_error,
    unexpected_error,
)
from bot.cli.ingest import run_ingest
from bot.cli.observer import TerminalObserver
from bot.cli.parser import build_parser
from bot.cli.purge import run_purge
from bot.cli.reembed import run_reembed
from bot.cli.runs import run_runs, run_show
from bot.cli.sources import run_sources, run_sync
from bot.cli.teams import run_teams
from bot.cli.upkeep import run_recover, run_sweep, run_thresholds
from bot.cli.verified import run_verified

# Heavy modules (pydantic, SQLAlchemy, Qdrant, google-genai, Slack) are imported inside the
# commands that use them, so `grace --help` answers at once and each command pays only for
# its own parts; tests/cli/test_startup_imports.py keeps it so.
if TYPE_CHECKING:
    from bot.service.settings import Settings
    from bot.service.wiring import Services

SERVERS = ("serve", "dev")

log = logging.getLogger(__name__)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command (`argv`: its arguments; None: the program's own, `sys.argv`).

    Run as the program, the cyclic garbage collector is paused while the command starts
    up: importing pydantic, SQLAlchemy and our models allocates many long-lived objects
    and almost no garbage, and the collections they trigger cost ~10% of `grace ask`'s
    start-up. It runs again once the stores are open (`_started`), and always on return.
    A caller passing `argv` (a test, another program) keeps its collector as it is."""
    global _gc_paused
    if argv is not None or not gc.isenabled():
        return _main(argv)
    gc.disable()
    _gc_paused = True
    try:
        return _main(argv)
    finally:
        _started()


_gc_paused = False
"""`main` paused the garbage collector for start-up; `_started` resumes it."""


def _started() -> None:
    """Start-up is over: collect garbage as usual from here on, but leave what start-up
    loaded (modules, classes, settings: kept for the whole process) out of every later
    collection (`gc.freeze`), so the first full collection does not walk it all."""
    global _gc_paused
    if _gc_paused:
        _gc_paused = False
        gc.freeze()
        gc.enable()


def _main(argv: Sequence[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # Questions, answers and the knowledge base are for this user only: every file and
    # directory GRACE creates (SQLite, its WAL, Qdrant's store) is 0600 / 0700.
    os.umask(0o077)
    try:
        args = build_parser().parse_args(argv)
    except CommandError as exc:
        return report_error(exc, as_json="--json" in argv)
    as_json = bool(getattr(args, "json", False))
    from bot.service.logs import configure_logging
    from bot.service.settings import load_settings

    try:
        settings = load_settings()
    except Exception as exc:  # pydantic's ValidationError: every bad variable, one line
        from pydantic import ValidationError

        from bot.service.config_errors import (
            configuration_error_line,
            other_configuration_error_line,
        )

        message = (
            configuration_error_line(exc.errors())
            if isinstance(exc, ValidationError)
            else other_configuration_error_line(exc, os.environ.get("GRACE_CONFIG_FILE"))
        )
        error = CommandError("invalid_configuration", message, ExitCode.BAD_INPUT)
        return report_error(error, as_json=as_json)
    fmt = settings.log_format
    if args.command == "dev" and fmt == "auto":
        fmt = "text"  # a person reads this terminal, or its log file
    configure_logging(
        settings.log_level,
        fmt,
        server=args.command in SERVERS,
        log_content=settings.log_content,
    )
    started = time.monotonic()
    code = _run(args, settings, as_json=as_json)
    log.info(
        "grace %s exited with %d",
        args.command,
        code,
        extra={
            "event": "command_finished",
            "command": args.command,
            "exit_code": code,
            "seconds": round(time.monotonic() - started, 3),
        },
    )
    return code


LEFTOVER_TASKS_S = 15.0
"""How long a command, once done, waits for the tasks it leaves behind to take their
cancellation before the process exits anyway."""


async def _ending_within(command: Awaitable[int], limit: float) -> int:
    """The command's exit code; then every task it left is cancelled, as `asyncio.run`
    does — but a task that will not end (a library swallowing its cancellation) cannot
    keep Ctrl-C from stopping `grace serve` or `grace dev`: after `limit` seconds the
    stuck tasks are named on stderr and the process exits with the command's code."""
    import asyncio

    code = ExitCode.FAILED.value
    try:
        code = await command
        return code
    finally:
        me = asyncio.current_task()
        left = [task for task in asyncio.all_tasks() if task is not me and not task.done()]
        for task in left:
            task.cancel()
        stuck = (await asyncio.wait(left, timeout=limit))[1] if left else set()
        if stuck:
            print(
                f"grace: {len(stuck)} task(s) did not stop within {limit:g} s; exiting anyway:",
                file=sys.stderr,
            )
            for task in stuck:
                print(repr(task), file=sys.stderr)
                task.print_stack(limit=8, file=sys.stderr)
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)


def _run(args: argparse.Namespace, settings: Settings, *, as_json: bool) -> int:
    """Run the command; every way it can end becomes an exit code (and one error line or
    JSON object)."""
    import asyncio

    from agent.errors import GraceError, InvalidInputError, KnowledgeBaseLockedError
    from storage.errors import StorageError

    try:
        return asyncio.run(_ending_within(_dispatch(args, settings), LEFTOVER_TASKS_S))
    except CommandError as exc:
        error = exc
    except KnowledgeBaseLockedError:
        error = CommandError("data_dir_in_use", data_dir_in_use(settings), ExitCode.FAILED)
    except InvalidInputError as exc:
        error = CommandError("invalid_input", exc.message, ExitCode.BAD_INPUT)
    except StorageError as exc:  # unreachable, bad URL, missing driver, damaged file, …
        code = ExitCode.BAD_INPUT if exc.bad_input else ExitCode.FAILED
        error = CommandError("database", exc.message, code)
    except GraceError as exc:
        error = CommandError(exc.category, exc.message, ExitCode.FAILED)
    except KeyboardInterrupt:
        error = CommandError("interrupted", "interrupted", ExitCode.INTERRUPTED)
    except Exception as exc:
        error = unexpected_error(args, settings, exc)
    return report_error(error, as_json=as_json)


async def _dispatch(args: argparse.Namespace, settings: Settings) -> int:
    if args.command in ("serve", "dev", "eval", "calibrate"):
        _started()  # long-running: they start up their own way
    if args.command == "serve" and args.worker_fd is not None:
        from bot.slack.worker import run_worker

        return await run_worker(
            settings, fd=args.worker_fd, parent_pid=args.parent_pid, gate_fd=args.gate_fd
        )
    if args.command == "serve":
        from bot.slack.runners import serve

        return await serve(settings, port=args.port, host=args.host, one_process=args.one_process)
    if args.command == "dev":
        from bot.slack.dev import run_dev

        return await run_dev(
            settings,
            port=args.port,
            host=args.host,
            pace=args.pace,
            refuse_streaming=args.no_streaming,
            workspaces=args.workspaces,
        )
    if args.command == "eval":
        from bot.cli.eval_cli import run_eval_command

        return await run_eval_command(args, settings)
    if args.command == "calibrate":
        from bot.cli.calibrate import run_calibrate_command

        return await run_calibrate_command(args, settings)
    progress = None
    if not getattr(args, "json", False) and args.command not in ("runs", "show"):
        if sys.stderr.isatty():  # elsewhere the INFO logs tell the same story
            progress = TerminalObserver()
    args.progress = progress
    from bot.service.wiring import build_services

    services = await build_services(settings, observers=[progress] if progress else [])
    _started()
    try:
        handler = COMMANDS[args.command]
        return await handler(args, services)
    finally:
        await services.close()


COMMANDS: dict[str, Callable[[argparse.Namespace, Services], Awaitable[int]]] = {
    "thresholds": run_thresholds,
    "ingest": run_ingest,
    "sync": run_sync,
    "sources": run_sources,
    "ask": run_ask,
    "runs": run_runs,
    "show": run_show,
    "resume": run_resume,
    "feedback": run_feedback,
    "recover": run_recover,
    "sweep": run_sweep,
    "verified": run_verified,
    "channel": run_channel,
    "teams": run_teams,
    "purge": run_purge,
    "reembed": run_reembed,
}
"""The commands that work on the opened services (`serve`, `dev`, `eval`, `calibrate` open
their own)."""

if __name__ == "__main__":
    sys.exit(main())
