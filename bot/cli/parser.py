"""The `grace` command line's arguments: every subcommand and its options.

Building the parser imports nothing heavy (`grace --help` answers at once); the commands
themselves live in their own modules (`bot.cli.main` maps each to its handler)."""

from __future__ import annotations

import argparse

from bot.cli.errors import Parser

DESCRIPTION = """`grace` command line: ingest, ask, inspect and resume runs, serve the Slack bot.

Errors are one line on stderr (with `--json`: one JSON object on stdout), never a
traceback. Exit codes: 0 done (answered, paused or cancelled), 1 the run failed or GRACE
could not do the work, 2 bad input, 3 not allowed, 130 interrupted.
"""


def _pace(text: str) -> float:
    """`--pace SECONDS`: a number from 0 to 60."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 <= value <= 60:
        raise argparse.ArgumentTypeError("--pace must be between 0 and 60 seconds")
    return value


RUN_STATUSES = ("planning", "running", "paused", "answered", "cancelled", "failed")
"""`RunStatus` values, spelled out so building the parser imports no pydantic (a test
checks they match)."""


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="grace", description=DESCRIPTION)
    sub = parser.add_subparsers(dest="command", required=True)

    ingest = sub.add_parser(
        "ingest",
        help="add documents (Markdown, text, CSV, PDF, Word, HTML) or a web site to the KB",
    )
    ingest.add_argument("paths", nargs="*", help="files, folders or http(s):// addresses")
    ingest.add_argument("--collection")
    ingest.add_argument(
        "--max-pages",
        type=int,
        help="a web address: read at most this many pages (default: the setting, 200)",
    )
    ingest.add_argument("--sample", action="store_true", help="ingest the shipped sample KB")

    sub.add_parser(
        "sync",
        help="read every remembered source again: re-index what changed, remove what is gone",
    )
    sources = sub.add_parser("sources", help="list remembered sources (`sources remove ID`)")
    sources_sub = sources.add_subparsers(dest="sources_command")
    forget = sources_sub.add_parser(
        "remove", help="forget a source and delete its documents from the knowledge base"
    )
    forget.add_argument("source", help="its id (see `grace sources`) or its location")

    ask = sub.add_parser("ask", help="ask a question and run the whole agent")
    ask.add_argument("question")
    ask.add_argument("--collection")
    ask.add_argument("--json", action="store_true", help="print one JSON object")
    ask.add_argument("--no-input", action="store_true", help="never prompt; stop at a pause")
    ask.add_argument("--as", dest="user", default="local-user")

    runs = sub.add_parser("runs", help="list runs")
    runs.add_argument("--status", choices=RUN_STATUSES)
    runs.add_argument("--json", action="store_true")

    show = sub.add_parser("show", help="show one run")
    show.add_argument("run_id")
    show.add_argument("--json", action="store_true")
    show.add_argument("--as", dest="user", default=None, help="show it only if USER may read it")

    resume = sub.add_parser("resume", help="answer a paused run")
    resume.add_argument("run_id")
    resume.add_argument("--action", required=True, choices=["proceed", "cancel", "modify", "input"])
    resume.add_argument("--text")
    resume.add_argument(
        "--option", type=int, help="pick option N, numbered from 1 as `grace show` lists them"
    )
    resume.add_argument("--as", dest="user", default="local-user")
    resume.add_argument("--json", action="store_true")

    feedback = sub.add_parser("feedback", help="👍 or 👎 on an answered run")
    feedback.add_argument("run_id")
    feedback.add_argument("vote", choices=["up", "down"])
    feedback.add_argument("--as", dest="user", default="local-user")

    verified = sub.add_parser(
        "verified", help="list, add or remove verified answers (searched with the knowledge base)"
    )
    verified_sub = verified.add_subparsers(dest="verified_command", required=True)
    verified_list = verified_sub.add_parser("list", help="the verified answers, newest first")
    verified_list.add_argument("--json", action="store_true")
    verified_add = verified_sub.add_parser("add", help="save a question's verified answer")
    verified_add.add_argument("--question", required=True)
    verified_add.add_argument("--answer", required=True)
    verified_add.add_argument("--by", required=True, help="who verified it (cited by this name)")
    verified_add.add_argument("--json", action="store_true")
    verified_remove = verified_sub.add_parser("remove", help="remove a verified answer by id")
    verified_remove.add_argument("answer_id")

    teams = sub.add_parser(
        "teams", help="the Slack workspaces GRACE is installed to (OAuth mode); forget one"
    )
    teams.add_argument("--json", action="store_true")
    teams_sub = teams.add_subparsers(dest="teams_command")
    teams_forget = teams_sub.add_parser(
        "forget", help="delete a team's runs, votes, verified answers and installation now"
    )
    teams_forget.add_argument("team", help="its team id (T…), or org id (E…) for an org install")

    sub.add_parser(
        "recover", help="finish runs whose worker died; apply answers a dead process claimed"
    )
    sub.add_parser("thresholds", help="show the current (learned) intervention thresholds")
    sub.add_parser("sweep", help="expire unanswered interventions that are past due")

    serve = sub.add_parser("serve", help="run the Slack bot (HTTP, or Socket Mode)")
    serve.add_argument(
        "--port",
        type=int,
        help="default GRACE_SLACK__PORT (3000); 0 picks a free one and prints it",
    )
    serve.add_argument("--host", default="0.0.0.0")
    serve.add_argument(
        "--one-process",
        action="store_true",
        help="the whole bot in one process (default in HTTP mode: a front process that "
        "stores and acks, and a worker process for the agent)",
    )
    # The worker process of a split `grace serve` (bot/service/worker_process.py).
    serve.add_argument("--worker-fd", type=int, default=None, help=argparse.SUPPRESS)
    serve.add_argument("--parent-pid", type=int, default=0, help=argparse.SUPPRESS)
    serve.add_argument("--gate-fd", type=int, default=None, help=argparse.SUPPRESS)

    dev = sub.add_parser(
        "dev", help="try the bot with no workspace: a local Slack simulator in your browser"
    )
    dev.add_argument("--port", type=int, default=3000, help="the simulator's port (3000)")
    dev.add_argument("--host", default="127.0.0.1")
    dev.add_argument(
        "--pace",
        type=_pace,
        default=0.0,
        metavar="SECONDS",
        help="wait this long before each model call, to watch a plan progress (e.g. 0.8)",
    )
    dev.add_argument(
        "--no-streaming",
        action="store_true",
        help="the simulated workspace refuses chat.startStream: see the plan-message fallback",
    )
    dev.add_argument(
        "--workspaces",
        type=int,
        choices=(1, 2),
        default=1,
        help="2: simulate two workspaces and install GRACE to each through OAuth (Add to "
        "Slack on the page; install pages on the next port)",
    )

    from bot.cli.channels import add_channel_parser

    add_channel_parser(sub)

    from bot.cli.purge import add_purge_parser

    add_purge_parser(sub)

    from bot.cli.reembed import add_reembed_parser

    add_reembed_parser(sub)

    from bot.cli.eval_cli import add_eval_parser

    add_eval_parser(sub)
    from bot.cli.calibrate import add_calibrate_parser

    add_calibrate_parser(sub)
    return parser
