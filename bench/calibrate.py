"""Fit the offline model's confidence map on the dev sets and judge it out of sample.

    python -m bench.calibrate [--devsets DIR] [--sets NAME|PATH,...] [--l2 L2]
                              [--no-heldout] [--json]

Each set's `kb/` is ingested into an in-memory knowledge base and its questions are run
with `agent.evaluation.run_eval` (the code behind `grace eval`: a plan approval is
granted, a paused run is moved on with Proceed) through a real orchestrator with the
offline model. Under the shipped map (`CALIBRATIONS["offline"]`, agent/confidence.py)
that gives every answer's evidence features and whether it held the expected fact.

Then, with `agent.evaluation.calibration` (L2-regularised logistic regression, and a
Platt link on its log-odds; `fit_nested`):

- **in sample**: a map fitted on every dev set scores each set;
- **out of sample (leave one set out)**: for each set, a map fitted on every *other*
  set scores it. Goals apply to these figures.

Every fit makes its choices on its own training sets only: the penalty and the link come
from leaving one training set out at a time (nested), never from the set it will score.
`--l2 X` instead fits one penalty, X, with no link (the map before 2026-11-27 was L2 1.5).

"Scores" means the set's questions are run again with that map in force, so a different
level changes what the run does next (a pause, Proceed), as it would in the product.
Printed per set: one fact right at SILENT/NOTIFY, NOTIFY right, confidently wrong, AUROC,
ECE, recall@5 (one fact) and not-in-the-docs held back, in sample → out of sample; then
the shipped map's figures on every set, the held-out set's among them (aggregate figures
only: it is run to report, never looked into, never fitted on); then the map fitted on
all dev sets, as a `Calibration(...)` to paste into agent/confidence.py.

It is a benchmark: nothing here runs in the product, and the exit code is always 0.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent.confidence import CALIBRATIONS, Calibration, provider_of
from agent.evaluation import CaseRecord, EvalCase, compute_metrics, load_cases, run_eval
from agent.evaluation.calibration import (
    CrossValidation,
    Figures,
    NestedFit,
    cross_validate,
    fit_calibration,
    fit_nested,
)
from agent.knowledge.ingest import ingest_paths
from agent.knowledge.lexical import HashingEmbedder
from agent.knowledge.qdrant_kb import QdrantKnowledgeBase, open_knowledge_base
from agent.llm.offline import OfflineModel
from agent.memory_store import InMemoryRunStore
from agent.orchestrator import Orchestrator
from bench import SHARED_DEVSETS

ROOT = Path(__file__).resolve().parent.parent

DEFAULT_DEVSETS = SHARED_DEVSETS
"""The shared dev sets (beside the repository: `../shared/devsets`)."""
DEV_SETS = (
    "en-sourcegraph",
    "ja-tuqulore",
    "tests/eval/devset-extra",
    "tests/eval/devset-docs",
    "tests/eval/devset-rust",
    "tests/eval/devset-faq",
)
"""Handbooks (English, Japanese), man pages, licence texts, Rust toolchain pages, FAQs."""
HELD_OUT = "tests/eval/heldout-faq"
"""Run only to report, in aggregate; never fitted on, never looked into."""


@dataclass
class LoadedSet:
    name: str
    cases: list[EvalCase]
    kb: QdrantKnowledgeBase


def _locate(devsets: Path, name: str) -> Path:
    """A set named under the shared dev-set directory, else a path (from the repository
    root when relative)."""
    shared = devsets / name
    if shared.is_dir():
        return shared
    path = Path(name)
    return path if path.is_absolute() or path.is_dir() else ROOT / path


async def load(devsets: Path, name: str) -> LoadedSet:
    path = _locate(devsets, name)
    kb = open_knowledge_base(path=None, url=None)
    await ingest_paths(kb, [path / "kb"])
    return LoadedSet(name=path.name, cases=load_cases(path / "cases.jsonl"), kb=kb)


@contextlib.contextmanager
def installed(calibration: Calibration | None) -> Iterator[None]:
    """The offline model's map in force while the block runs (None: the shipped one)."""
    key = provider_of(OfflineModel().name)
    shipped = CALIBRATIONS[key]
    CALIBRATIONS[key] = calibration or shipped
    try:
        yield
    finally:
        CALIBRATIONS[key] = shipped


async def run(loaded: LoadedSet, calibration: Calibration | None) -> list[CaseRecord]:
    """Every question of the set, under `calibration`, the way `grace eval` asks them."""
    orchestrator = Orchestrator(
        llm=OfflineModel(),
        knowledge_base=loaded.kb,
        store=InMemoryRunStore(),
        embedder=HashingEmbedder(),
    )
    with installed(calibration):
        report = await run_eval(orchestrator, loaded.cases)
    return report.records


def _frac(part: int, whole: int) -> str:
    return f"{part}/{whole}" if whole else "–"


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def _cells(f: Figures) -> dict[str, str]:
    return {
        "one fact right at SILENT/NOTIFY": _frac(f.one_fact, f.one_fact_n),
        "NOTIFY right": _frac(f.notify_right, f.notify_n),
        "SILENT right": _frac(f.silent_right, f.silent_n),
        "confidently wrong": _frac(f.confidently_wrong, f.cases),
        "AUROC": _num(f.auroc),
        "ECE": _num(f.ece),
        "not in the docs held back": _frac(f.held_back, f.held_back_n),
    }


def loso_table(result: CrossValidation, sizes: dict[str, int]) -> list[str]:
    """Markdown: per set, each figure in sample → out of sample."""
    rows = [(s.name, sizes[s.name], s.in_sample, s.out_of_sample) for s in result.sets]
    rows.append(
        ("all (pooled)", sum(sizes.values()), result.pooled_in_sample, result.pooled_out_of_sample)
    )
    header = ["set (questions)", *_cells(result.pooled_in_sample), "recall@5 (one fact)"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for name, n, inside, outside in rows:
        a, b = _cells(inside), _cells(outside)
        cells = [f"{a[k]} → {b[k]}" for k in a]
        recall = _frac(outside.recall_hits, outside.recall_n)
        lines.append("| " + " | ".join([f"`{name}` ({n})", *cells, recall]) + " |")
    return lines


def plain_table(rows: Sequence[tuple[str, int, Figures]]) -> list[str]:
    header = ["set (questions)", *_cells(rows[0][2]), "recall@5 (one fact)"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for name, n, f in rows:
        cells = [*_cells(f).values(), _frac(f.recall_hits, f.recall_n)]
        lines.append("| " + " | ".join([f"{name} ({n})", *cells]) + " |")
    return lines


def _paste(calibration: Calibration) -> str:
    weights = ", ".join(f'"{n}": {w:.3f}' for n, w in calibration.weights.items())
    link = calibration.link
    tail = (
        f", link=Link(slope={link.slope:.3f}, offset={link.offset:.3f}, edges={link.edges})"
        if link is not None
        else ""
    )
    return f"Calibration(intercept={calibration.intercept:.3f}, weights={{{weights}}}{tail})"


def _choice(fit: NestedFit) -> str:
    """How the nested fit chose: per penalty, its inner out-of-fold confidently wrong
    and one-fact right at NOTIFY or above (on the training sets only)."""
    seen = ", ".join(
        f"{c.l2:g}: {c.confidently_wrong}/{c.cases} wrong, {c.one_fact} right"
        for c in fit.candidates
    )
    return f"L2 {fit.chosen.l2:g} chosen (inner leave-one-set-out: {seen})"


async def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--devsets", type=Path, default=DEFAULT_DEVSETS)
    parser.add_argument(
        "--sets",
        default=",".join(DEV_SETS),
        help="dev sets: names under --devsets, or paths to sets in the same format",
    )
    parser.add_argument(
        "--l2",
        type=float,
        default=None,
        help="fit this one penalty, with no link (default: chosen nested, with a link)",
    )
    parser.add_argument(
        "--no-heldout", action="store_true", help=f"do not run the held-out set ({HELD_OUT})"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    started = time.perf_counter()

    loaded = {s.name: s for s in [await load(args.devsets, n) for n in args.sets.split(",")]}
    shipped = {name: await run(s, None) for name, s in loaded.items()}

    async def score(name: str, calibration: Calibration) -> list[CaseRecord]:
        return await run(loaded[name], calibration)

    choices: dict[tuple[str, ...], NestedFit] = {}

    def nested(train: Mapping[str, Sequence[CaseRecord]]) -> Calibration:
        fitted = fit_nested(train)
        choices[tuple(train)] = fitted
        return fitted.calibration

    if args.l2 is None:
        result = await cross_validate(shipped, score, fit_sets=nested)
    else:
        result = await cross_validate(
            shipped, score, fit=lambda records: fit_calibration(records, l2=args.l2)
        )
    sizes = {name: len(s.cases) for name, s in loaded.items()}
    shipped_rows = [(n, sizes[n], Figures.of(compute_metrics(r))) for n, r in shipped.items()]
    held_out: dict[str, Figures] = {}
    if not args.no_heldout:
        heldout = await load(args.devsets, HELD_OUT)
        for label, calibration in (
            ("shipped", None),
            ("fitted on all dev sets", result.fitted_on_all),
        ):
            records = await run(heldout, calibration)
            held_out[label] = Figures.of(compute_metrics(records))  # aggregate figures only
        await heldout.kb.close()
    for s in loaded.values():
        await s.kb.close()
    seconds = time.perf_counter() - started

    if args.json:
        out: dict[str, Any] = {
            "cross_validation": result.model_dump(),
            "choices": {
                "+".join(train): {
                    "l2": fitted.chosen.l2,
                    "candidates": [
                        {
                            "l2": c.l2,
                            "cases": c.cases,
                            "confidently_wrong": c.confidently_wrong,
                            "one_fact": c.one_fact,
                        }
                        for c in fitted.candidates
                    ],
                }
                for train, fitted in choices.items()
            },
            "shipped": {n: f.model_dump() for n, _, f in shipped_rows},
            "held_out": {k: f.model_dump() for k, f in held_out.items()},
            "seconds": round(seconds, 1),
        }
        print(json.dumps(out, ensure_ascii=False))
        return
    print("Leave one set out: in sample (map fitted on every dev set) → out of sample")
    print("(map fitted on every other dev set). Goals apply to the out-of-sample figures.\n")
    print("\n".join(loso_table(result, sizes)))
    print("\nThe shipped map (agent/confidence.py), as `grace eval` measures today:\n")
    rows = [(f"`{name}`", n, figures) for name, n, figures in shipped_rows]
    for label, figures in held_out.items():
        rows.append((f"`{Path(HELD_OUT).name}`, held out, {label} map", figures.cases, figures))
    print("\n".join(plain_table(rows)))
    how = f"L2 {args.l2:g}, no link" if args.l2 is not None else "nested"
    print(f"\nFitted on all dev sets ({how}): {_paste(result.fitted_on_all)}")
    if tuple(loaded) in choices:
        print(f"  {_choice(choices[tuple(loaded)])}")
    for s in result.sets:
        print(f"  without {s.name}: {_paste(s.fitted_without)}")
        train = tuple(name for name in loaded if name != s.name)
        if train in choices:
            print(f"    {_choice(choices[train])}")
    print(f"\n{seconds:.0f} s")
    sys.stdout.flush()


if __name__ == "__main__":
    asyncio.run(main())
