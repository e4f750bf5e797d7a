"""`grace` command line: ingest, ask, inspect and resume runs, serve the Slack bot.

Errors a user can fix are printed as one line on stderr with a non-zero exit code
(2 for bad input, 1 for everything else), never as a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from tqdm import tqdm

from agent.errors import GraceError, InvalidInputError
from agent.knowledge.chunks import IngestResult
from agent.knowledge.ingest import ingest
from agent.ports import RunEvent, RunEventType
from agent.schemas import (
    InterventionAction,
    InterventionAnswer,
    InterventionKind,
    RunState,
    RunStatus,
)
from bot.logs import configure_logging
from bot.report import STEP_ICON, run_json, run_text
from bot.settings import Settings, load_settings
from bot.wiring import Services, build_services

SAMPLE_KB = Path(__file__).resolve().parent.parent / "agent" / "sample_kb"


class TerminalObserver:
    """Prints progress as it happens (to stderr, so `--json` stdout stays one object)."""

    async def on_event(self, event: RunEvent, state: RunState) -> None:
        out = sys.stderr
        if event.type is RunEventType.PLAN_CREATED and state.plan is not None:
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
        elif event.type in (RunEventType.RUN_FAILED, RunEventType.RUN_CANCELLED):
            print(f"  {event.message}", file=out)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="grace", description=__doc__)
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
    runs.add_argument("--status", choices=[s.value for s in RunStatus])
    runs.add_argument("--json", action="store_true")

    show = sub.add_parser("show", help="show one run")
    show.add_argument("run_id")
    show.add_argument("--json", action="store_true")

    resume = sub.add_parser("resume", help="answer a paused run")
    resume.add_argument("run_id")
    resume.add_argument("--action", required=True, choices=["proceed", "cancel", "modify", "input"])
    resume.add_argument("--text")
    resume.add_argument("--option", type=int)
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

    from bot.eval_cli import add_eval_parser

    add_eval_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        settings = load_settings()
    except Exception as exc:  # pydantic's ValidationError lists every bad variable
        print(f"error: invalid configuration:\n{exc}", file=sys.stderr)
        return 2
    configure_logging(settings.log_level, settings.log_format)
    try:
        return asyncio.run(_dispatch(args, settings))
    except InvalidInputError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 2
    except GraceError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


async def _dispatch(args: argparse.Namespace, settings: Settings) -> int:
    if args.command == "serve":
        from bot.runners import serve

        return await serve(settings, port=args.port, host=args.host)
    if args.command == "dev":
        from bot.dev import run_dev

        if "log_format" not in settings.model_fields_set:
            configure_logging(settings.log_level, "text")  # a person reads this terminal
        return await run_dev(settings, port=args.port, host=args.host)
    if args.command == "eval":
        from bot.eval_cli import run_eval_command

        return await run_eval_command(args, settings)
    quiet = getattr(args, "json", False)
    observers = [] if quiet or args.command in ("runs", "show") else [TerminalObserver()]
    services = await build_services(settings, observers=observers)
    try:
        handler = _COMMANDS[args.command]
        return await handler(args, services)
    finally:
        await services.close()


async def _ingest(args: argparse.Namespace, services: Services) -> int:
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
    return line + "."


class _IngestProgress:
    """A progress bar on stderr (only used when stderr is a terminal)."""

    def __init__(self) -> None:
        self._bar: tqdm[None] | None = None

    def start(self, files: int) -> None:
        self._bar = tqdm(total=files, unit="file", file=sys.stderr, leave=False)

    def advance(self, path: Path, chunks: int) -> None:
        if self._bar is not None:
            self._bar.set_postfix_str(path.name[-30:], refresh=False)
            self._bar.update(1)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


async def _ask(args: argparse.Namespace, services: Services) -> int:
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
    return _print(state, args.json)


def _prompt(state: RunState, user: str) -> InterventionAnswer | None:
    request = state.pending
    assert request is not None
    print(f"\n⏸  {request.question}", file=sys.stderr)
    if request.reason:
        print(f"   why: {request.reason}", file=sys.stderr)
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
        for i, option in enumerate(request.options):
            print(f"   [{i}] {option}", file=sys.stderr)
        text = input("   your answer (empty = proceed, 'cancel' = stop) > ").strip()
    except EOFError:
        return None
    if text.lower() == "cancel":
        return InterventionAnswer(action=InterventionAction.CANCEL, user=user)
    if text.isdigit() and int(text) < len(request.options):
        return InterventionAnswer(action=InterventionAction.INPUT, option=int(text), user=user)
    if not text:
        return InterventionAnswer(action=InterventionAction.PROCEED, user=user)
    return InterventionAnswer(action=InterventionAction.INPUT, text=text, user=user)


def _print(state: RunState, as_json: bool) -> int:
    if as_json:
        print(json.dumps(run_json(state), ensure_ascii=False))
    else:
        print(run_text(state))
        if state.status is RunStatus.PAUSED:
            print(
                f"\nResume with: grace resume {state.run_id} --action proceed|cancel|modify|input"
            )
    return 1 if state.status is RunStatus.FAILED else 0


async def _runs(args: argparse.Namespace, services: Services) -> int:
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
        raise InvalidInputError(f"No run {run_id!r}. `grace runs` lists them.")
    return state


async def _show(args: argparse.Namespace, services: Services) -> int:
    state = await _load(services, args.run_id)
    if args.json:
        print(json.dumps(run_json(state), ensure_ascii=False))
    else:
        print(run_text(state))
    return 0


async def _resume(args: argparse.Namespace, services: Services) -> int:
    state = await _load(services, args.run_id)
    if state.pending is None:
        raise InvalidInputError(
            f"Run {args.run_id} is {state.status.value}, not waiting for an answer."
        )
    action = InterventionAction(args.action)
    if action in (InterventionAction.MODIFY, InterventionAction.INPUT) and not (
        args.text or args.option is not None
    ):
        raise InvalidInputError(f"--action {action.value} needs --text (or --option N).")
    if args.option is not None and not 0 <= args.option < len(state.pending.options):
        raise InvalidInputError(
            f"--option must be between 0 and {len(state.pending.options) - 1}."
            if state.pending.options
            else "This question has no options; answer with --text."
        )
    answer = InterventionAnswer(action=action, text=args.text, option=args.option, user=args.user)
    outcome = await services.orchestrator.answer(
        state.run_id, state.pending.intervention_id, answer
    )
    if not outcome.claimed:
        print(f"error: not resumed: {outcome.reason}", file=sys.stderr)
        return 1
    assert outcome.state is not None
    return _print(outcome.state, args.json)


async def _feedback(args: argparse.Namespace, services: Services) -> int:
    from bot.feedback import record_feedback

    state = await _load(services, args.run_id)
    message = await record_feedback(
        store=services.store,
        orchestrator=services.orchestrator,
        config=services.settings.intervention,
        state=state,
        user=args.user,
        up=args.vote == "up",
    )
    print(message)
    return 0


async def _recover(args: argparse.Namespace, services: Services) -> int:
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
