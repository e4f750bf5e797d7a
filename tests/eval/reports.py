"""One `grace eval --json` run on a development set folder (`cases.jsonl` and `kb/`), in
this process, and its records by kind: what the dev-set tests share."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.durable.helpers import grace_env, grace_here


def eval_report(tmp_path_factory: pytest.TempPathFactory, folder: Path) -> dict[str, object]:
    """`grace eval` of the set in `folder` on a fresh data directory: its JSON report."""
    env = grace_env(tmp_path_factory.mktemp(folder.name) / "data")
    cases, kb = str(folder / "cases.jsonl"), str(folder / "kb")
    result = grace_here(env, "eval", cases, "--kb", kb, "--json")
    assert result.returncode == 0, (result.stdout + result.stderr)[-2000:]
    parsed = json.loads(result.stdout)
    assert isinstance(parsed, dict)
    return parsed


def records(report: dict[str, object], kind: str | None = None) -> list[dict[str, object]]:
    """The report's per-question records, of one kind (`answerable`, …) or all."""
    found = report["records"]
    assert isinstance(found, list)
    return [r for r in found if kind is None or r["kind"] == kind]


def kind_counts(report: dict[str, object]) -> dict[str, int]:
    """How many questions the report scored, by kind (and "all"): a set's size check."""
    metrics = report["metrics"]
    assert isinstance(metrics, dict)
    per_kind = metrics["per_kind"]
    assert metrics["cases"] == per_kind["all"]["n"]
    return {kind: figures["n"] for kind, figures in per_kind.items()}
