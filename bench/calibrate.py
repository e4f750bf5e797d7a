"""Refit the offline model's confidence calibration on the dev sets, and check it.

    python -m bench.calibrate [--devsets DIR] [--sets en-sourcegraph,ja-tuqulore,PATH] [--l2 1.5]

Each dev set's `kb/` is ingested into an in-memory knowledge base and every question
is run through the real orchestrator with the offline model (paused runs are moved
on with Proceed, so every question ends in an answer). An answer is labelled right
when it holds the expected fact (unanswerable and ambiguous questions: never right).
An L2-regularised logistic regression is then fitted on the answer features the
calibrated score uses (`CALIBRATIONS["offline"]` in agent/confidence.py):

- on each set alone, scored on the other (AUROC both ways: the check against
  overfitting), and on all sets together (the numbers to ship);
- printed as a `Calibration(...)` to paste into agent/confidence.py.

It is a benchmark: nothing here runs in the product, and the exit code is always 0.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import sys
from pathlib import Path

from agent.confidence import CALIBRATIONS, _feature_value
from agent.knowledge.ingest import ingest_paths
from agent.knowledge.lexical import HashingEmbedder
from agent.knowledge.qdrant_kb import open_knowledge_base
from agent.llm.offline import OfflineModel
from agent.memory_store import InMemoryRunStore
from agent.orchestrator import Orchestrator
from agent.schemas import InterventionAction, InterventionAnswer, RunStatus

DEFAULT_DEVSETS = Path("/work/shared/devsets")
FEATURES = list(CALIBRATIONS["offline"].weights)

EXTRA_DEVSETS = ("tests/eval/devset-extra", "tests/eval/devset-docs")
"""Long reference pages (Debian man pages) and legal prose (licence texts): the shapes the
two handbook sets lack."""

Row = tuple[list[float], int]


def _devset(devsets: Path, name: str) -> Path:
    """A set named under the shared dev-set directory, else a path to one."""
    shared = devsets / name
    return shared if shared.is_dir() else Path(name)


def _right(case: dict[str, object], answer: str) -> bool:
    text = answer.casefold()
    kind = case["kind"]
    if kind in ("unanswerable", "ambiguous"):
        return False
    if kind == "multi":
        return all(str(e).casefold() in text for e in case.get("expect_all", []))  # type: ignore[union-attr]
    return any(str(e).casefold() in text for e in case.get("expect_any", []))  # type: ignore[union-attr]


async def collect(devset: Path) -> list[Row]:
    """(features, right) for every question of one dev set."""
    kb = open_knowledge_base(path=None, url=None)
    await ingest_paths(kb, [devset / "kb"])
    orchestrator = Orchestrator(
        llm=OfflineModel(),
        knowledge_base=kb,
        store=InMemoryRunStore(),
        embedder=HashingEmbedder(),
    )
    rows: list[Row] = []
    for line in (devset / "cases.jsonl").read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        case = json.loads(line)
        state = await orchestrator.start(case["q"], asker="bench")
        for _ in range(6):
            if state.status is not RunStatus.PAUSED or state.pending is None:
                break
            proceed = InterventionAnswer(action=InterventionAction.PROCEED, user="bench")
            await orchestrator.answer(state.run_id, state.pending.intervention_id, proceed)
            state = await orchestrator.store.load(state.run_id) or state
        detail = state.overall_detail
        if state.status is not RunStatus.ANSWERED or detail is None:
            continue
        if "calibrated" not in detail.breakdown:
            continue
        x = [_feature_value(name, detail.breakdown) for name in FEATURES]
        rows.append((x, int(_right(case, state.final_answer))))
    await kb.close()
    return rows


def fit(rows: list[Row], l2: float, steps: int = 5000, rate: float = 1.0) -> list[float]:
    """[intercept, *weights] by gradient descent on the penalised log loss."""
    width = len(rows[0][0])
    theta = [0.0] * (width + 1)
    n = len(rows)
    for _ in range(steps):
        grad = [0.0] * (width + 1)
        for x, y in rows:
            p = _sigmoid(theta[0] + sum(w * v for w, v in zip(theta[1:], x, strict=True)))
            grad[0] += p - y
            for i, v in enumerate(x):
                grad[i + 1] += (p - y) * v
        for i in range(width + 1):
            penalty = l2 * theta[i] if i else 0.0
            theta[i] -= rate * (grad[i] + penalty) / n
    return theta


def predict(theta: list[float], x: list[float]) -> float:
    return _sigmoid(theta[0] + sum(w * v for w, v in zip(theta[1:], x, strict=True)))


def auroc(scores: list[float], labels: list[int]) -> float:
    pos = [s for s, y in zip(scores, labels, strict=True) if y]
    neg = [s for s, y in zip(scores, labels, strict=True) if not y]
    if not pos or not neg:
        return float("nan")
    wins = sum((p > q) + 0.5 * (p == q) for p in pos for q in neg)
    return wins / (len(pos) * len(neg))


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z))


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--devsets", type=Path, default=DEFAULT_DEVSETS)
    parser.add_argument(
        "--sets",
        default=",".join(("en-sourcegraph", "ja-tuqulore", *EXTRA_DEVSETS)),
        help="names under --devsets, or paths to other sets in the same format",
    )
    parser.add_argument("--l2", type=float, default=1.5)
    args = parser.parse_args()
    data = {
        Path(name).name: await collect(_devset(args.devsets, name)) for name in args.sets.split(",")
    }
    for train, rows in data.items():
        theta = fit(rows, args.l2)
        for test, other in data.items():
            if test == train:
                continue
            scores = [predict(theta, x) for x, _ in other]
            print(f"fit on {train}, AUROC on {test}: {auroc(scores, [y for _, y in other]):.3f}")
    pooled = [row for rows in data.values() for row in rows]
    theta = fit(pooled, args.l2)
    scores = [predict(theta, x) for x, _ in pooled]
    print(f"fit on all, AUROC on all: {auroc(scores, [y for _, y in pooled]):.3f}")
    weights = ", ".join(f'"{n}": {w:.3f}' for n, w in zip(FEATURES, theta[1:], strict=True))
    print(f"Calibration(intercept={theta[0]:.3f}, weights={{{weights}}})")
    sys.stdout.flush()


if __name__ == "__main__":
    asyncio.run(main())
