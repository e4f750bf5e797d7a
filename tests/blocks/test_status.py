"""Ephemeral `/grace` answers."""

from __future__ import annotations

from agent.schemas import RunStatus
from blocks.status import (
    error_blocks,
    help_blocks,
    run_detail_blocks,
    runs_list_blocks,
    stats_blocks,
    thresholds_blocks,
)
from tests.blocks import samples
from tests.blocks.samples import all_text, assert_valid


def test_help_lists_every_command() -> None:
    text = all_text(assert_valid(help_blocks()))
    for command in ("status", "cancel", "retry", "stats", "thresholds", "help"):
        assert f"/grace {command}" in text


def test_runs_list() -> None:
    runs = [samples.state(answer="a"), samples.state(status=RunStatus.PAUSED)]
    text = all_text(assert_valid(runs_list_blocks(runs)))
    assert "`run123abc456`" in text and "answered" not in text.split("\n")[0]
    assert "🟡 notify 0.82" in text
    assert "waiting for input" in text


def test_runs_list_empty_and_huge() -> None:
    assert "No active or paused runs here" in all_text(assert_valid(runs_list_blocks([])))
    many = [samples.state(query="q " * 20_000) for _ in range(200)]
    text = all_text(assert_valid(runs_list_blocks(many)))
    assert "…and 160 older runs" in text


def test_run_detail() -> None:
    state = samples.state(
        n_steps=5, answer="a", pending=samples.confirm_request("x"), status=RunStatus.PAUSED
    )
    text = all_text(assert_valid(run_detail_blocks(state)))
    assert "Step 2 found weak evidence" in text
    assert "step_failed → partial: step 3 timed out" in text
    assert "$0.0012" in text and "1,200 in" in text
    assert "*0.82* 🟡 notify" in text
    assert "search_quality 0.31" in text


def test_run_detail_of_huge_run() -> None:
    state = samples.state(n_steps=300, description_chars=500, query="x" * 40_000)
    state.replan_history = state.replan_history * 50
    payload = assert_valid(run_detail_blocks(state))
    assert len(payload) <= 50


def test_stats_and_thresholds() -> None:
    stats = {"runs_total": 1234, "mean_confidence": 0.8123, "cost_usd_today": 12.5}
    text = all_text(assert_valid(stats_blocks(stats)))
    assert "runs total*: 1,234" in text and "0.812" in text and "12.50" in text
    assert "No figures" in all_text(assert_valid(stats_blocks({})))
    thresholds = {"silent": 0.92, "notify": 0.7, "confirm": 0.45, "learning_rate": 0.05}
    text = all_text(assert_valid(thresholds_blocks(thresholds)))
    assert "🟢 *silent* — score ≥ 0.92" in text
    assert "🔴 *escalate* — score < 0.45" in text
    assert "learning_rate" in text
    many = {f"k{i}": float(i) for i in range(2000)}
    assert_valid(stats_blocks(many))


def test_error_blocks() -> None:
    text = all_text(assert_valid(error_blocks("No run <abc>")))
    assert "⚠️ No run &lt;abc&gt;" in text
    assert_valid(error_blocks("e" * 50_000))
    assert_valid(error_blocks("   "))
