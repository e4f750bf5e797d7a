"""`grace calibrate`: fit the confidence map on a team's own questions and store it.

`grace calibrate CASES.jsonl (--kb DIR | --collection NAME)` runs the cases the way
`grace eval` does (runs in a throw-away database, default thresholds; `--kb` ingests into
a throw-away store), fits the configured model's map on the answers, judges it k-fold
(`agent.evaluation.refit`) and stores it in the database: every process started after
that scores with it. `--show` prints the map in force and where it came from; `--reset`
forgets the fit, so the shipped map applies again.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.cli.calibrate_output import map_lines, provenance, render
from bot.cli.eval_cli import (
    add_concurrency,
    add_where_to_search,
    check_concurrency_and_kb,
    quiet_run_logs,
    scratch_services,
)
from bot.cli.progress import EvalProgress

# `grace` builds this command's parser on every start: the fitting is imported only when
# `grace calibrate` runs.
if TYPE_CHECKING:
    from agent.confidence import Calibration
    from agent.evaluation import CaseRecord, EvalCase
    from agent.evaluation.refit import Refit
    from bot.service.settings import Settings
    from bot.service.wiring import Services
    from storage.calibrations import SqlCalibrationStore


def add_calibrate_parser(sub: Any) -> None:
    """Register `grace calibrate` on the CLI's subparsers."""
    cal = sub.add_parser(
        "calibrate",
        help="fit how sure GRACE is to your own questions with known answers",
        description="Run a JSON Lines file of your questions with known answers (30 or "
        "more, as for `grace eval`), fit the configured model's confidence map on how "
        "often its answers were right, and store it: every grace process started from "
        "then on uses it. Before/after figures are cross-validated: each fold of cases "
        "is scored by a map fitted on the other folds.",
    )
    cal.add_argument("cases", type=Path, nargs="?", help="JSON Lines file, one case per line")
    add_where_to_search(cal)
    cal.add_argument(
        "--show", action="store_true", help="print the map in force and where it came from"
    )
    cal.add_argument(
        "--reset", action="store_true", help="forget the fitted map: back to the shipped one"
    )
    cal.add_argument(
        "--folds", type=int, default=5, metavar="K", help="cross-validation folds (default 5)"
    )
    add_concurrency(cal)
    cal.add_argument(
        "--force",
        action="store_true",
        help="store the fit even when it ranks answers worse than the map in force",
    )
    cal.add_argument("--json", action="store_true", help="print one JSON object")


def configured_provider(settings: Settings) -> str:
    """The provider whose map the configured model scores with (`provider_of`)."""
    from agent.confidence import provider_of

    return provider_of(settings.llm.model) if settings.use_gemini else "offline"


async def run_calibrate_command(args: argparse.Namespace, settings: Settings) -> int:
    from agent.errors import InvalidInputError

    modes = [args.cases is not None, args.show, args.reset]
    if sum(modes) != 1:
        raise InvalidInputError(
            "Give a case file to calibrate on, or --show, or --reset (one of them)."
        )
    if (args.show or args.reset) and (args.kb is not None or args.collection is not None):
        raise InvalidInputError("--kb and --collection go with a case file, not --show/--reset.")
    if args.show:
        return await _show(settings, as_json=args.json)
    if args.reset:
        return await _reset(settings, as_json=args.json)
    return await _calibrate(args, settings)


@asynccontextmanager
async def _stored(settings: Settings) -> AsyncIterator[SqlCalibrationStore]:
    """The store of fitted maps in the configured database (migrated first), for one
    read or write: its engine is disposed of on the way out."""
    from storage.calibrations import SqlCalibrationStore
    from storage.db import make_engine, migrate

    url = settings.resolved_database_url
    settings.data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    await migrate(url)
    engine = make_engine(url)
    try:
        yield SqlCalibrationStore(engine)
    finally:
        await engine.dispose()


async def _show(settings: Settings, *, as_json: bool) -> int:
    from agent.confidence import CALIBRATIONS

    provider = configured_provider(settings)
    async with _stored(settings) as store:
        fit = await store.get(provider)
    calibration = fit.calibration if fit else CALIBRATIONS.get(provider)
    source = "fitted" if fit else "shipped" if calibration else "default"
    if as_json:
        out: dict[str, Any] = {
            "provider": provider,
            "source": source,
            "calibration": calibration.model_dump() if calibration else None,
            "fitted": fit.model_dump(mode="json", exclude={"calibration"}) if fit else None,
        }
        print(json.dumps(out, ensure_ascii=False))
        return 0
    print(f"Confidence map for {provider}: {provenance(fit, calibration)}")
    if calibration is not None:
        print(map_lines(calibration))
    return 0


async def _reset(settings: Settings, *, as_json: bool) -> int:
    provider = configured_provider(settings)
    async with _stored(settings) as store:
        removed = await store.reset(provider)
    if as_json:
        print(json.dumps({"provider": provider, "reset": removed}))
    elif removed:
        print(
            f"Forgot the fitted map for {provider}: the shipped one applies to every grace "
            "process started from now on (restart a running `grace serve`)."
        )
    else:
        print(f"No fitted map was stored for {provider}: the shipped one is in force.")
    return 0


async def _calibrate(args: argparse.Namespace, settings: Settings) -> int:
    from agent.confidence import in_force
    from agent.errors import InvalidInputError
    from agent.evaluation import load_cases
    from agent.evaluation.calibration import CalibrationDataError
    from agent.evaluation.refit import check_cases, refit

    cases = load_cases(args.cases)  # a bad file is refused before anything is built
    try:
        check_cases(len(cases))
    except CalibrationDataError as exc:
        raise InvalidInputError(str(exc)) from None
    if not 2 <= args.folds <= 10:
        raise InvalidInputError("--folds must be between 2 and 10.")
    check_concurrency_and_kb(args)
    quiet_run_logs(settings)
    provider = configured_provider(settings)
    async with _stored(settings) as store:
        current = await store.load()
    maps = in_force(current)
    before_fit = next((f for f in current if f.provider == provider), None)
    async with scratch_services(settings, args, command="calibrate", verb="calibrate") as (
        services,
        collection,
    ):
        runner = _Runner(services, cases, collection, args.concurrency, maps, provider)
        with EvalProgress(3 * len(cases)) as advance:  # before, in sample, out of sample
            runner.progress = advance
            records = await runner.run(cases, maps.get(provider))
            try:
                result = await refit(
                    records,
                    runner.score,
                    provider=provider,
                    cases_file=str(args.cases),
                    k=args.folds,
                    now=datetime.now(UTC),
                )
            except CalibrationDataError as exc:
                raise InvalidInputError(str(exc)) from None
    stored = args.force or not worse(result)
    if stored:
        async with _stored(settings) as store:
            await store.save(result.fit)
    before = provenance(before_fit, maps.get(provider))
    if args.json:
        out = {
            "model": services.llm.name,
            "before_map": before,
            "stored": stored,
            **result.model_dump(mode="json"),
        }
        print(json.dumps(out, ensure_ascii=False))
    else:
        print(render(result, model=services.llm.name, before=before, stored=stored))
    return 0


def worse(result: Refit) -> bool:
    """The fit ranks right and wrong answers worse, out of sample, than the map in force
    does: storing it would make confidence mean less (unless `--force`)."""
    before, after = result.before.auroc, result.after.auroc
    return before is not None and after is not None and after < before


class _Runner:
    """Runs cases through an orchestrator over the throw-away parts, under a given map for
    the configured provider (the other providers keep the maps in force)."""

    def __init__(
        self,
        services: Services,
        cases: Sequence[EvalCase],
        collection: str,
        concurrency: int,
        maps: dict[str, Calibration],
        provider: str,
    ) -> None:
        self.services = services
        self.cases = {case.id: case for case in cases}
        self.collection = collection
        self.concurrency = concurrency
        self.maps = maps
        self.provider = provider
        self.progress: Any = None

    async def run(
        self, cases: Sequence[EvalCase], calibration: Calibration | None
    ) -> list[CaseRecord]:
        from agent.evaluation import run_eval

        maps = dict(self.maps)
        if calibration is None:
            maps.pop(self.provider, None)
        else:
            maps[self.provider] = calibration
        orchestrator = self.services.another_orchestrator(observers=[], calibrations=maps)
        report = await run_eval(
            orchestrator,
            cases,
            collection=self.collection,
            progress=self.progress,
            concurrency=self.concurrency,
        )
        return report.records

    async def score(self, ids: Sequence[str], calibration: Calibration) -> list[CaseRecord]:
        return await self.run([self.cases[i] for i in ids], calibration)
