"""How the `grace` command line ends: one exit code per kind of outcome, and errors as one
readable line on stderr — or, with `--json`, as one JSON object on stdout, so a script
always has exactly one object to parse."""

from __future__ import annotations

import argparse
import errno
import json
import logging
import sys
from enum import IntEnum
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    from bot.service.settings import Settings

log = logging.getLogger("bot.cli.main")
"""The command's own logger: a crash is logged under the name it always had."""


class ExitCode(IntEnum):
    OK = 0
    """Done: answered, paused (waiting for a person), cancelled, or the command's work."""
    FAILED = 1
    """The run failed, or GRACE could not do the work (data directory in use, …)."""
    BAD_INPUT = 2
    """Bad input: arguments, question, collection, file, run id, configuration."""
    NOT_ALLOWED = 3
    """The user may not do this (answer someone else's run without being an approver)."""
    INTERRUPTED = 130
    """Ctrl-C."""


class CommandError(Exception):
    """An outcome the command reports instead of doing its work; `code` is a stable word
    for scripts, `message` a sentence for people."""

    def __init__(self, code: str, message: str, exit_code: ExitCode) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.exit_code = exit_code


class BadArguments(CommandError):
    """argparse refused the command line (it would otherwise exit on its own)."""

    def __init__(self, parser: argparse.ArgumentParser, message: str) -> None:
        super().__init__("bad_arguments", f"{parser.prog}: {message}", ExitCode.BAD_INPUT)
        self.parser = parser


class Parser(argparse.ArgumentParser):
    """An ArgumentParser that raises instead of exiting, so `--json` can still answer."""

    def error(self, message: str) -> NoReturn:
        raise BadArguments(self, message)


def error_object(code: str, message: str) -> dict[str, object]:
    return {"status": "error", "error": {"code": code, "message": message}}


def report_error(error: CommandError, *, as_json: bool) -> int:
    """Print the error the way the caller asked for; its exit code."""
    if as_json:
        print(json.dumps(error_object(error.code, error.message), ensure_ascii=False))
    else:
        if isinstance(error, BadArguments):
            error.parser.print_usage(sys.stderr)
        print(f"error: {error.message}", file=sys.stderr)
    return int(error.exit_code)


def unexpected_error(args: argparse.Namespace, settings: Settings, exc: Exception) -> CommandError:
    """A port in use is the user's to fix; anything else is a bug: the log keeps the
    traceback, the user gets one line."""
    if isinstance(exc, OSError) and exc.errno == errno.EADDRINUSE:
        port = getattr(args, "port", None) or settings.slack.port
        return CommandError(
            "port_in_use",
            f"Port {port} is in use: stop what runs there or pick another with --port.",
            ExitCode.BAD_INPUT,
        )
    log.exception("grace %s crashed", args.command, extra={"event": "command_crashed"})
    return CommandError("internal", f"unexpected {type(exc).__name__}", ExitCode.FAILED)


def data_dir_in_use(settings: Settings) -> str:
    """Why a second process cannot open the data directory, and what to do."""
    return (
        f"the data directory {settings.data_dir} is already in use by another grace process "
        "(grace dev, grace serve or a running grace ask); only one process can open it at a "
        "time. Stop that process, or give this one another directory "
        "(GRACE_DATA_DIR=/tmp/grace-2 grace …), or share a Qdrant server with QDRANT_URL."
    )
