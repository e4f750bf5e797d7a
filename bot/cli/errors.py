"""How the `grace` command line ends: one exit code per kind of outcome, and errors as one
readable line on stderr — or, with `--json`, as one JSON object on stdout, so a script
always has exactly one object to parse."""

from __future__ import annotations

import argparse
import json
import sys
from enum import IntEnum
from typing import NoReturn


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
