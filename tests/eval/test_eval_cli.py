"""`grace eval` as a person runs it: the JSON contract, the report files, the person's
own data left alone, and bad case files refused with the line and the field."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

from agent.config import Thresholds
from bot.cli.main import main
from storage.db import make_engine, migrate
from storage.run_store import SqlRunStore
from tests.durable.helpers import GRACE, clean_env, grace_here, grace_here_async, run_grace
from tests.fakes.fake_gemini import BATCH_EMBED, GENERATE, FakeGemini

DATA = Path(__file__).parent / "data"
CASES = DATA / "cases.jsonl"
KB = DATA / "kb"
REPORT_KEYS = {
    "model", "collection", "cases_file", "proceed", "thresholds", "started_at", "seconds",
    "metrics", "records",
}  # fmt: skip
METRIC_KEYS = {
    "cases", "correct", "accuracy", "per_kind", "confidently_wrong", "confidently_wrong_rate",
    "confidently_wrong_ids", "per_level", "answers", "auroc", "ece", "reliability", "grace",
    "mean_seconds", "p95_seconds", "recall_n", "recall_hits", "recall_at_5",
}  # fmt: skip
GRACE_METRIC_KEYS = {
    "plan_generation_rate", "completion_rate", "confidence_accuracy", "false_positive_rate",
    "unnecessary_hitl_rate", "replan_success_rate", "avg_replan_count", "avg_cost_usd",
    "tokens_per_correct",
}  # fmt: skip


def grace_env(data_dir: Path) -> dict[str, str]:
    return clean_env(GRACE_DATA_DIR=str(data_dir))


def test_json_is_one_object_the_report_four_files_and_the_users_data_untouched(
    tmp_path: Path,
) -> None:
    data_dir, out = tmp_path / "data", tmp_path / "report"
    result = run_grace(
        grace_env(data_dir),
        *("eval", str(CASES), "--kb", str(KB), "--json", "--report", str(out)),
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)  # the whole of stdout is one object
    assert set(report) == REPORT_KEYS
    assert set(report["metrics"]) == METRIC_KEYS
    assert set(report["metrics"]["grace"]) == GRACE_METRIC_KEYS
    assert report["proceed"] is True and report["collection"] == "grace_eval"
    assert [r["id"] for r in report["records"]][:3] == ["t-a01", "t-a02", "t-a03"]
    assert len(report["records"]) == 8
    assert report["metrics"]["per_kind"]["all"]["n"] == 8
    assert report["metrics"]["recall_n"] == 6
    # not a TTY: no progress bar, and no per-step log lines at the default log level
    assert result.stderr == ""
    # --kb evaluates in a throw-away store: nothing was written to the data directory
    assert not (data_dir / "grace.db").exists()
    assert not (data_dir / "qdrant").exists()

    assert sorted(p.name for p in out.iterdir()) == [
        "confidence_hist.png",
        "reliability.png",
        "report.json",
        "summary.md",
    ]
    for png in ("reliability.png", "confidence_hist.png"):
        head = (out / png).read_bytes()[:24]
        assert head[:8] == b"\x89PNG\r\n\x1a\n"
        width, height = int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")
        assert width >= 400 and height >= 300
    saved = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert saved["records"] == report["records"]
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert summary.startswith("# GRACE evaluation")
    assert "![reliability diagram](reliability.png)" in summary
    assert "| t-c01 | contradictory |" in summary


async def learn_thresholds(url: str, thresholds: Thresholds) -> None:
    await migrate(url)
    engine = make_engine(url)
    try:
        await SqlRunStore(engine).save_thresholds(thresholds)
    finally:
        await engine.dispose()


def test_an_existing_collection_is_searched_without_the_users_runs_or_thresholds(
    tmp_path: Path,
) -> None:
    env = grace_env(tmp_path / "data")  # each command in this process: grace_here
    ingested = grace_here(env, "ingest", str(KB), "--collection", "fixture")
    assert ingested.returncode == 0, ingested.stderr
    asyncio.run(
        learn_thresholds(
            f"sqlite+aiosqlite:///{tmp_path / 'data' / 'grace.db'}",
            Thresholds(silent=0.5, notify=0.4, confirm=0.3),
        )
    )
    result = grace_here(
        env, "eval", str(CASES), "--collection", "fixture", "--no-proceed", "--json"
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["collection"] == "fixture" and report["proceed"] is False
    assert report["thresholds"] == {"silent": 0.9, "notify": 0.7, "confirm": 0.4}
    paused = [r for r in report["records"] if r["status"] == "paused"]
    assert all(r["proceeded"] == 0 and r["final_answer"] == "" for r in paused)
    runs = grace_here(env, "runs", "--json")
    assert runs.returncode == 0, runs.stderr
    assert json.loads(runs.stdout) == []  # the evaluation's runs went to a temporary store
    learned = grace_here(env, "thresholds")
    assert learned.stdout.startswith("silent 0.50  notify 0.40  confirm 0.30"), learned.stdout


def test_on_a_terminal_a_progress_bar_and_a_table_in_words(tmp_path: Path) -> None:
    child = pexpect.spawn(
        GRACE[0],
        [*GRACE[1:], "eval", str(CASES), "--kb", str(KB)],
        env=grace_env(tmp_path / "data"),
        encoding="utf-8",
        timeout=300,
        dimensions=(40, 160),
    )
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    # tqdm's counter (its last refresh may be any case: the bar is cleared when done)
    assert re.search(r"\b[0-8]/8 \[", child.before), child.before
    assert "How often it got each kind of question right" in child.before
    assert "documents disagree" in child.before and "AUROC" in child.before


async def test_the_configured_model_answers(tmp_path: Path) -> None:
    """With Gemini configured, the evaluation asks Gemini (here the fake Gemini server)
    and ingests with its embeddings."""
    cases = tmp_path / "two.jsonl"
    cases.write_text("\n".join(CASES.read_text(encoding="utf-8").splitlines()[:2]) + "\n")
    async with FakeGemini() as fake:
        env = grace_env(tmp_path / "data") | fake.grace_env()
        code, out, err = await grace_here_async(
            env, "eval", str(cases), "--kb", str(KB), "--json", "--concurrency", "2"
        )
        generated, embedded = len(fake.calls(GENERATE)), len(fake.calls(BATCH_EMBED))
    assert code == 0, err
    report = json.loads(out)
    assert report["model"] == "gemini-2.5-flash"
    assert [r["id"] for r in report["records"]] == ["t-a01", "t-a02"]
    assert generated >= 2 and embedded >= 1


@pytest.fixture
def local_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for key in list(os.environ):
        if key.startswith(("GRACE_", "GOOGLE_")):
            monkeypatch.delenv(key)
    monkeypatch.setenv("GRACE_DATA_DIR", str(tmp_path / "data"))
    return tmp_path


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("{oops", "line 3: not valid JSON"),
        ('{"id": "x", "kind": "answerable", "expect_any": ["a"]}', "line 3: q: missing"),
        (
            '{"id": "x", "kind": "maybe", "q": "?", "expect_any": ["a"]}',
            "line 3: kind: 'maybe' is not one of",
        ),
    ],
)
def test_a_bad_case_file_is_one_line_with_exit_code_2(
    local_env: Path, capsys: pytest.CaptureFixture[str], bad: str, message: str
) -> None:
    lines = CASES.read_text(encoding="utf-8").splitlines()
    cases = local_env / "bad.jsonl"
    cases.write_text("\n".join([lines[0], "", bad, *lines[1:]]) + "\n", encoding="utf-8")
    code = main(["eval", str(cases), "--kb", str(KB)])
    captured = capsys.readouterr()
    assert code == 2
    assert captured.out == ""
    assert captured.err.startswith(f"error: {cases} {message}"), captured.err
    # stderr is not a terminal here, so JSON log lines for machines may follow
    for_people = [line for line in captured.err.splitlines() if not line.startswith("{")]
    assert len(for_people) == 1 and "Traceback" not in captured.err


def test_other_bad_input_exits_2(local_env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", str(local_env / "none.jsonl"), "--kb", str(KB)]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main(["eval", str(CASES), "--kb", str(local_env / "nowhere")]) == 2
    assert "--kb" in capsys.readouterr().err
    assert main(["eval", str(CASES), "--collection", "nothing-here"]) == 2
    assert "Unknown collection 'nothing-here'" in capsys.readouterr().err
    (local_env / "file").write_text("x", encoding="utf-8")
    assert main(["eval", str(CASES), "--kb", str(KB), "--report", str(local_env / "file")]) == 2
    assert "is not a directory" in capsys.readouterr().err
    assert main(["eval", str(CASES), "--kb", str(KB), "--collection", "x"]) == 2
    assert "not allowed with argument" in capsys.readouterr().err


def test_charts_and_the_progress_bar_are_imported_only_when_used() -> None:
    probe = (
        "import sys; from bot.cli.main import build_parser; "
        "import bot.cli.eval_cli, agent.evaluation; build_parser(); "
        "print(sorted(m for m in ('matplotlib', 'tqdm') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    assert result.stdout.strip() == "[]"
