"""`grace` command line: ingest, ask, inspect and resume runs, serve the Slack bot.

Errors are one line on stderr (with `--json`: one JSON object on stdout), never a
traceback. Exit codes: 0 done (answered, paused or cancelled), 1 the run failed or GRACE
could not do the work, 2 bad input, 3 not allowed, 130 interrupted.
"""

from __future__ import annotations

import argparse
import errno
import gc
import json
import logging
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from bot.cli_errors import CommandError, ExitCode, Parser, report_error

# Heavy modules (pydantic, SQLAlchemy, Qdrant, google-genai, Slack) are imported inside the
# commands that use them, so `grace --help` answers at once and each command pays only for
# its own parts; tests/cli/test_startup_imports.py keeps it so.
if TYPE_CHECKING:
    from tqdm import tqdm

    from agent.knowledge.chunks import IngestResult
    from agent.ports import RunEvent
    from agent.schemas import ExecutionPlan, InterventionAnswer, InterventionRequest, RunState
    from bot.settings import Settings
    from bot.wiring import Services

SAMPLE_KB = Path(__file__).resolve().parent.parent / "agent" / "sample_kb"
SERVERS = ("serve", "dev")

log = logging.getLogger(__name__)


def _plan_lines(plan: ExecutionPlan) -> list[tuple[int, str, str]]:
    return [(s.step_id, s.action.value, s.description) for s in plan.steps]


class TerminalObserver:
    """Prints progress as it happens, for a person watching stderr on a terminal."""

    def __init__(self) -> None:
        self.shown_plan: list[tuple[int, str, str]] | None = None

    def showed(self, plan: ExecutionPlan | None) -> bool:
        """Whether this plan is the one last printed (the summary need not repeat it)."""
        return plan is not None and self.shown_plan == _plan_lines(plan)

    async def on_event(self, event: RunEvent, state: RunState) -> None:
        from agent.ports import RunEventType
        from bot.report import STEP_ICON

        out = sys.stderr
        if event.type is RunEventType.PLAN_CREATED and state.plan is not None:
            self.shown_plan = _plan_lines(state.plan)
            print(f"Plan (complexity {state.plan.complexity:.2f}):", file=out)
            for step in state.plan.steps:
                deps = f" (after {step.depends_on})" if step.depends_on else ""
                print(
                    f"  {step.step_id}. {step.action.value}: {step.description}{deps}",
                    file=out,
                )
        elif event.type is RunEventType.STEP_FINISHED and event.step_id is not None:
            result = state.step_results.get(event.step_id)
            if result is not None:
                level = f" [{result.level.value}]" if result.level else ""
                print(
                    f"  {STEP_ICON[result.status.value]} step {event.step_id} "
                    f"{result.status.value}, confidence {result.confidence:.2f}{level}",
                    file=out,
                )
        elif event.type is RunEventType.REPLANNED:
            print(f"  ↻ replanned: {event.message}", file=out)
            if state.plan is not None and self.shown_plan is not None:
                lines = _plan_lines(state.plan)
                for step_id, action, description in lines:
                    if (step_id, action, description) not in self.shown_plan:
                        print(f"    {step_id}. {action}: {description}", file=out)
                self.shown_plan = lines
        elif event.type in (RunEventType.RUN_FAILED, RunEventType.RUN_CANCELLED):
            print(f"  {event.message}", file=out)


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


def _parser() -> argparse.ArgumentParser:
    parser = Parser(prog="grace", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    ingest = sub.add_parser("ingest", help="add Markdown, text or CSV FAQ files to the KB")
    ingest.add_argument("paths", nargs="*", type=Path)
    ingest.add_argument("--collection")
    ingest.add_argument("--sample", action="store_true", help="ingest the shipped sample KB")

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

    sub.add_parser(
        "recover", help="finish runs whose worker died; apply answers a dead process claimed"
    )
    sub.add_parser("thresholds", help="show the current (learned) intervention thresholds")
    sub.add_parser("sweep", help="expire unanswered interventions that are past due")

    serve = sub.add_parser("serve", help="run the Slack bot (HTTP, or Socket Mode)")
    serve.add_argument("--port", type=int)
    serve.add_argument("--host", default="0.0.0.0")

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

    from bot.eval_cli import add_eval_parser

    add_eval_parser(sub)
    return parser


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
        args = _parser().parse_args(argv)
    except CommandError as exc:
        return report_error(exc, as_json="--json" in argv)
    as_json = bool(getattr(args, "json", False))
    from bot.logs import configure_logging
    from bot.settings import load_settings

    try:
        settings = load_settings()
    except Exception as exc:  # pydantic's ValidationError lists every bad variable
        error = CommandError(
            "invalid_configuration", f"invalid configuration:\n{exc}", ExitCode.BAD_INPUT
        )
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


def _run(args: argparse.Namespace, settings: Settings, *, as_json: bool) -> int:
    """Run the command; every way it can end becomes an exit code (and one error line or
    JSON object)."""
    import asyncio

    from agent.errors import GraceError, InvalidInputError, KnowledgeBaseLockedError
    from storage.errors import StorageError

    try:
        return asyncio.run(_dispatch(args, settings))
    except CommandError as exc:
        error = exc
    except KnowledgeBaseLockedError:
        error = CommandError("data_dir_in_use", _locked(settings), ExitCode.FAILED)
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
        error = _unexpected(args, settings, exc)
    return report_error(error, as_json=as_json)


def _unexpected(args: argparse.Namespace, settings: Settings, exc: Exception) -> CommandError:
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


def _locked(settings: Settings) -> str:
    return (
        f"the data directory {settings.data_dir} is already in use by another grace process "
        "(grace dev, grace serve or a running grace ask); only one process can open it at a "
        "time. Stop that process, or give this one another directory "
        "(GRACE_DATA_DIR=/tmp/grace-2 grace …), or share a Qdrant server with QDRANT_URL."
    )


async def _dispatch(args: argparse.Namespace, settings: Settings) -> int:
    if args.command in ("serve", "dev", "eval"):
        _started()  # long-running: they start up their own way
    if args.command == "serve":
        from bot.runners import serve

        return await serve(settings, port=args.port, host=args.host)
    if args.command == "dev":
        from bot.dev import run_dev

        return await run_dev(
            settings,
            port=args.port,
            host=args.host,
            pace=args.pace,
            refuse_streaming=args.no_streaming,
        )
    if args.command == "eval":
        from bot.eval_cli import run_eval_command

        return await run_eval_command(args, settings)
    progress = None
    if not getattr(args, "json", False) and args.command not in ("runs", "show"):
        if sys.stderr.isatty():  # elsewhere the INFO logs tell the same story
            progress = TerminalObserver()
    args.progress = progress
    from bot.wiring import build_services

    services = await build_services(settings, observers=[progress] if progress else [])
    _started()
    try:
        handler = _COMMANDS[args.command]
        return await handler(args, services)
    finally:
        await services.close()


async def _ingest(args: argparse.Namespace, services: Services) -> int:
    from agent.errors import InvalidInputError
    from agent.knowledge.ingest import ingest

    paths = list(args.paths) + ([SAMPLE_KB] if args.sample else [])
    if not paths:
        raise InvalidInputError("Give files or directories to ingest, or --sample.")
    progress = _IngestProgress() if sys.stderr.isatty() else None
    try:
        result = await ingest(
            services.knowledge_base,
            paths,
            collection=args.collection,
            on_start=progress.start if progress else None,
            on_file=progress.advance if progress else None,
            on_read=progress.read if progress else None,
        )
    finally:
        if progress is not None:
            progress.close()
    collection = args.collection or services.knowledge_base.default_collection
    if len(result.reports) <= INGEST_LISTED_FILES:
        for report in result.reports:
            verb = "replaced" if report.replaced else "added"
            print(f"{verb} {report.chunks:3d} chunks from {report.source}")
    total = await services.knowledge_base.count(collection)
    print(ingest_summary(result, collection=collection, total=total))
    return 0


INGEST_LISTED_FILES = 20
"""Above this many files, `grace ingest` prints only its summary line."""


def ingest_summary(result: IngestResult, *, collection: str, total: int) -> str:
    """One line: files, chunks, what was skipped and why, seconds, the collection's size."""
    files = f"{result.files} file{'s' if result.files != 1 else ''}"
    line = (
        f"Ingested {files} ({result.chunks} chunks) into {collection!r} in "
        f"{result.seconds:.1f} s; it now holds {total} chunks"
    )
    if result.skipped:
        named = "; ".join(f"{item.path} ({item.reason})" for item in result.skipped)
        line += f". Skipped {len(result.skipped)}: {named}"
    if result.not_reindexed:
        line += (
            f". {len(result.not_reindexed)} other document(s) in {collection!r} were "
            f"indexed by an older GRACE and will be missed by some searches: ingest them "
            f"again too"
        )
    return line + "."


class _IngestProgress:
    """A progress bar on stderr (only used when stderr is a terminal), in bytes, so it
    moves through one large file as well as through many small ones."""

    def __init__(self) -> None:
        self._bar: tqdm[None] | None = None
        self._files = 0
        self._done = 0

    def start(self, files: int, size: int) -> None:
        from tqdm import tqdm  # only when a bar is shown: `grace` starts faster without it

        self._files = files
        self._bar = tqdm(
            total=size, unit="B", unit_scale=True, file=sys.stderr, leave=False, smoothing=0.1
        )

    def read(self, size: int) -> None:
        if self._bar is not None:
            self._bar.update(size)

    def advance(self, path: Path, chunks: int) -> None:
        self._done += 1
        if self._bar is not None:
            self._bar.set_postfix_str(f"{self._done}/{self._files} {path.name[-30:]}")

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


async def _ask(args: argparse.Namespace, services: Services) -> int:
    from agent.schemas import RunStatus

    orchestrator = services.orchestrator
    state = await orchestrator.start(args.question, asker=args.user, collection=args.collection)
    interactive = not args.no_input and not args.json and sys.stdin.isatty()
    while state.status is RunStatus.PAUSED and interactive:
        answer = _prompt(state, args.user)
        if answer is None:
            break
        assert state.pending is not None
        outcome = await orchestrator.answer(state.run_id, state.pending.intervention_id, answer)
        if outcome.state is None:
            break
        state = outcome.state
    return _print(state, args.json, progress=args.progress)


def _terminal(mrkdwn: str) -> str:
    """Slack mrkdwn from the card builders as terminal text."""
    text = mrkdwn.replace("*", "").replace("&lt;", "<").replace("&gt;", ">")
    return text.replace("&amp;", "&")


def prompt_lines(state: RunState, request: InterventionRequest) -> list[str]:
    """What the terminal says at a pause: the same plain words as the Slack cards (the
    scores are in `grace show RUN`)."""
    from agent.schemas import InterventionKind
    from blocks.explain import found_sentence, why_unsure
    from blocks.intervention import plain_question

    lines = [f"\n⏸  {_terminal(plain_question(request))}"]
    if request.kind in (InterventionKind.CONFIRM, InterventionKind.ESCALATE):
        result = state.step_results.get(request.step_id) if request.step_id else None
        found = result.sources if result is not None else state.sources
        lines.append(f"   {_terminal(found_sentence(found))}")
        lines.append(f"   why I am unsure: {_terminal(why_unsure(request.confidence, found))}")
    else:  # a plan approval or a clarifying question: its own words (no internal notes)
        lines[0] = f"\n⏸  {request.question}"
    return lines


def _prompt(state: RunState, user: str) -> InterventionAnswer | None:
    from agent.schemas import InterventionAction, InterventionAnswer, InterventionKind

    request = state.pending
    assert request is not None
    for line in prompt_lines(state, request):
        print(line, file=sys.stderr)
    try:
        if request.kind in (InterventionKind.PLAN_APPROVAL, InterventionKind.CONFIRM):
            first = "[r]un" if request.kind is InterventionKind.PLAN_APPROVAL else "[p]roceed"
            choice = input(f"   {first} / [m]odify / [c]ancel > ").strip().lower()
            if choice.startswith("c"):
                return InterventionAnswer(action=InterventionAction.CANCEL, user=user)
            if choice.startswith(("m", "e")):
                text = input("   how should the plan change? > ")
                return InterventionAnswer(action=InterventionAction.MODIFY, text=text, user=user)
            return InterventionAnswer(action=InterventionAction.PROCEED, user=user)
        for number, option in enumerate(request.options, start=1):
            print(f"   [{number}] {option}", file=sys.stderr)
        hint = f"1–{len(request.options)} picks an option, " if request.options else ""
        text = input(f"   your answer ({hint}empty = proceed, 'cancel' = stop) > ").strip()
    except EOFError:
        return None
    if text.lower() == "cancel":
        return InterventionAnswer(action=InterventionAction.CANCEL, user=user)
    if text.isdigit() and 1 <= int(text) <= len(request.options):
        # Options are numbered from 1 everywhere (Slack, this prompt, --option).
        return InterventionAnswer(action=InterventionAction.INPUT, option=int(text) - 1, user=user)
    if not text:
        return InterventionAnswer(action=InterventionAction.PROCEED, user=user)
    return InterventionAnswer(action=InterventionAction.INPUT, text=text, user=user)


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


def _print(state: RunState, as_json: bool, progress: TerminalObserver | None = None) -> int:
    from agent.schemas import RunStatus
    from bot.report import run_json, run_text

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


async def _runs(args: argparse.Namespace, services: Services) -> int:
    from agent.schemas import RunStatus
    from bot.report import run_json

    status = RunStatus(args.status) if args.status else None
    states = await services.store.list_runs(status=status)
    if args.json:
        print(json.dumps([run_json(s) for s in states], ensure_ascii=False))
        return 0
    if not states:
        print("no runs" + (f" with status {status.value}" if status else ""))
        return 0
    print(f"{'RUN':14} {'STATUS':10} {'CONF':>5} {'UPDATED':20} QUESTION")
    for s in states:
        conf = f"{s.overall_confidence:.2f}" if s.overall_confidence is not None else "-"
        print(
            f"{s.run_id:14} {s.status.value:10} {conf:>5} "
            f"{s.updated_at:%Y-%m-%d %H:%M:%S}  {s.query[:60]}"
        )
    return 0


async def _load(services: Services, run_id: str) -> RunState:
    state = await services.store.load(run_id)
    if state is None:
        raise CommandError(
            "not_found", f"No run {run_id!r}. `grace runs` lists them.", ExitCode.BAD_INPUT
        )
    return state


async def _show(args: argparse.Namespace, services: Services) -> int:
    from bot.report import run_json, run_text

    state = await _load(services, args.run_id)
    if args.json:
        print(json.dumps(run_json(state), ensure_ascii=False))
    else:
        print(run_text(state))
    return 0


async def _resume(args: argparse.Namespace, services: Services) -> int:
    from agent.errors import InvalidInputError
    from agent.schemas import InterventionAction, InterventionAnswer

    state = await _load(services, args.run_id)
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
    return _print(outcome.state, args.json, progress=args.progress)


async def _feedback(args: argparse.Namespace, services: Services) -> int:
    from bot.feedback import record_feedback

    state = await _load(services, args.run_id)
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


async def _recover(args: argparse.Namespace, services: Services) -> int:
    from agent.schemas import RunStatus
    from bot.sweeper import finish_stranded_once, recover_once

    active = await services.store.runs_with_status(RunStatus.RUNNING)
    active += await services.store.runs_with_status(RunStatus.PLANNING)
    stranded = await finish_stranded_once(services)
    for line in [*await recover_once(services), *stranded]:
        print(line)
    for state in active:
        current = await services.store.load(state.run_id)
        if (
            current is not None
            and current.status.is_active
            and current.worker != services.orchestrator.worker_id
        ):
            until = current.lease_expires_at.isoformat() if current.lease_expires_at else "?"
            print(
                f"{state.run_id}: still running in {current.worker} (lease until {until}); "
                "left alone — it is taken over once that lease runs out"
            )
    if not active and not stranded:
        print("nothing to recover")
    return 0


async def _sweep(args: argparse.Namespace, services: Services) -> int:
    from bot.sweeper import sweep_once

    outcomes = await sweep_once(services)
    for line in outcomes:
        print(line)
    if not outcomes:
        print("nothing expired")
    return 0


async def _thresholds(args: argparse.Namespace, services: Services) -> int:
    t = services.orchestrator.thresholds
    print(f"silent {t.silent:.2f}  notify {t.notify:.2f}  confirm {t.confirm:.2f}")
    return 0


_COMMANDS = {
    "thresholds": _thresholds,
    "ingest": _ingest,
    "ask": _ask,
    "runs": _runs,
    "show": _show,
    "resume": _resume,
    "feedback": _feedback,
    "recover": _recover,
    "sweep": _sweep,
}

if __name__ == "__main__":
    sys.exit(main())
