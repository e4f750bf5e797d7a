"""`grace eval CASES.jsonl`: the wiring around `agent.evaluation`.

The evaluation never touches the person's run history or learned thresholds: runs go
to a fresh SQLite file in a temporary directory (so the default thresholds apply), and
with `--kb DIR` the documents are ingested into a throw-away Qdrant store there too.
With `--collection NAME` (or neither option) the configured knowledge base is searched,
read-only.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.cli.progress import EvalProgress

# `grace` builds this command's parser on every start: the evaluation itself is imported
# only when `grace eval` runs.
if TYPE_CHECKING:
    from agent.evaluation import EvalReport
    from bot.service.settings import Settings
    from bot.service.wiring import Services

EVAL_COLLECTION = "grace_eval"
"""The collection `--kb DIR` is ingested into (inside the temporary store)."""


def add_eval_parser(sub: Any) -> None:
    """Register `grace eval` on the CLI's subparsers."""
    ev = sub.add_parser(
        "eval",
        help="ask questions with known answers and measure how well GRACE does",
        description="Run a JSON Lines file of questions with known answers through the "
        "agent and report how often it is right, when it pauses, and whether its "
        "confidence means something.",
    )
    ev.add_argument("cases", type=Path, help="JSON Lines file, one case per line")
    add_where_to_search(ev)
    ev.add_argument("--json", action="store_true", help="print one JSON object")
    ev.add_argument(
        "--report", type=Path, metavar="DIR", help="write report.json, summary.md and charts"
    )
    add_concurrency(ev)
    ev.add_argument(
        "--no-proceed",
        action="store_true",
        help="score only where each run first stops; do not click Proceed to see its answer",
    )


def add_where_to_search(parser: argparse.ArgumentParser) -> None:
    """`--collection NAME` or `--kb DIR`: what the cases of `grace eval` and `grace
    calibrate` are asked against."""
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--collection", help="search this collection of the configured KB")
    where.add_argument(
        "--kb", type=Path, help="ingest this directory into a temporary KB and search that"
    )


def add_concurrency(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--concurrency",
        type=int,
        default=1,
        metavar="N",
        help="ask N questions at once (worth it with Gemini; default 1)",
    )


def check_concurrency_and_kb(args: argparse.Namespace) -> None:
    """The `--concurrency` and `--kb` checks `grace eval` and `grace calibrate` share,
    made before anything is built."""
    from agent.errors import InvalidInputError

    if not 1 <= args.concurrency <= 32:
        raise InvalidInputError("--concurrency must be between 1 and 32.")
    if args.kb is not None and not args.kb.exists():
        raise InvalidInputError(f"--kb {args.kb}: no such file or directory")


def quiet_run_logs(settings: Settings) -> None:
    """Every run step logs at INFO; a hundred questions would bury the table, so the
    level is WARNING unless the user set one."""
    from bot.service.logs import configure_logging

    if "log_level" not in settings.model_fields_set:
        configure_logging("WARNING", settings.log_format)


@asynccontextmanager
async def scratch_services(
    settings: Settings, args: argparse.Namespace, *, command: str, verb: str
) -> AsyncIterator[tuple[Services, str]]:
    """Services whose runs go to a fresh SQLite file in a temporary directory (and, with
    `--kb DIR`, whose knowledge base is a throw-away store the directory is ingested
    into), with the collection the cases are asked against; refused when it is empty.
    The caller has checked that `--kb` exists.
    `verb` completes the refusal's advice: "…, or {verb} on a directory with --kb DIR"."""
    from agent.errors import InvalidInputError
    from agent.knowledge.ingest import ingest_paths
    from bot.service.wiring import build_services

    with tempfile.TemporaryDirectory(prefix=f"grace-{command}-", dir=_scratch_root()) as tmp:
        scratch = Path(tmp)
        update: dict[str, object] = {
            "database_url": f"sqlite+aiosqlite:///{scratch / 'runs.db'}",
        }
        if args.kb is not None:
            update |= {"data_dir": scratch / "data", "qdrant_url": None}
            update["knowledge"] = settings.knowledge.model_copy(
                update={"collection": EVAL_COLLECTION}
            )
        services = await build_services(settings.model_copy(update=update))
        try:
            kb = services.knowledge_base
            if args.kb is not None:
                await ingest_paths(kb, [args.kb])
            collection = await services.orchestrator.validate_collection(args.collection)
            if await kb.count(collection) == 0:
                raise InvalidInputError(
                    f"The collection {collection!r} is empty: `grace ingest` documents into "
                    f"it, or {verb} on a directory with --kb DIR."
                )
            yield services, collection
        finally:
            await services.close()


async def run_eval_command(args: argparse.Namespace, settings: Settings) -> int:
    from agent.errors import InvalidInputError
    from agent.evaluation import load_cases, run_eval

    cases = load_cases(args.cases)  # a bad file is refused before anything is built
    check_concurrency_and_kb(args)
    if args.report is not None and args.report.exists() and not args.report.is_dir():
        raise InvalidInputError(f"--report {args.report}: exists and is not a directory")
    quiet_run_logs(settings)
    async with scratch_services(settings, args, command="eval", verb="evaluate") as (
        services,
        collection,
    ):
        with EvalProgress(len(cases)) as advance:
            report = await run_eval(
                services.orchestrator,
                cases,
                collection=collection,
                proceed=not args.no_proceed,
                progress=advance,
                cases_file=str(args.cases),
                concurrency=args.concurrency,
            )
    return _output(report, args)


def _scratch_root() -> str | None:
    """A RAM-backed directory when the system has one: the throw-away stores then cost
    no disk syncs (ingesting into local Qdrant commits once per chunk)."""
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK):
        return str(shm)
    return None


def _output(report: EvalReport, args: argparse.Namespace) -> int:
    from agent.errors import GraceError
    from agent.evaluation import render_text, report_json
    from agent.evaluation.report import write_report

    written: list[Path] = []
    if args.report is not None:
        try:
            written = write_report(report, args.report)
        except OSError as exc:
            raise GraceError(
                f"cannot write the report to {args.report}: {exc.strerror or exc}"
            ) from exc
    if args.json:
        print(json.dumps(report_json(report), ensure_ascii=False))
    else:
        print(render_text(report))
        if written:
            print(f"\nReport written to {args.report}: " + ", ".join(p.name for p in written))
    return 0
