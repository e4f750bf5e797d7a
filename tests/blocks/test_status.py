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
from tests import samples
from tests.blocks.payloads import all_text, assert_valid


def test_help_lists_every_command() -> None:
    text = all_text(assert_valid(help_blocks()))
    for command in ("status", "status all", "cancel", "retry", "stats", "thresholds", "help"):
        assert f"/grace {command}" in text
    assert "your recent questions" in text and "first 6 characters" in text
    unknown = all_text(assert_valid(help_blocks(unknown="frobnicate")))
    assert "`/grace frobnicate` is not a command I know" in unknown
    assert "/grace status" in unknown


def test_runs_list() -> None:
    runs = [samples.state(answer="a"), samples.state(status=RunStatus.PAUSED)]
    text = all_text(assert_valid(runs_list_blocks(runs)))
    assert "`run123`" in text and "answered" not in text.split("\n")[0]
    assert "waiting for input" in text and "0.82" not in text
    assert "<@U0ASKER001>" not in text
    channel = all_text(assert_valid(runs_list_blocks(runs, with_asker=True)))
    assert "<@U0ASKER001>" in channel


def test_runs_list_empty_and_huge() -> None:
    assert "You have no questions with me yet" in all_text(assert_valid(runs_list_blocks([])))
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
    assert "*0.82* 👍 Fairly sure" in text  # the Details view keeps the numbers
    assert text.count("how well the search matched 0.31") == 1
    assert "run id `run123abc456`" in text


def test_run_detail_of_huge_run() -> None:
    state = samples.state(n_steps=300, description_chars=500, query="x" * 40_000)
    state.replan_history = state.replan_history * 50
    payload = assert_valid(run_detail_blocks(state))
    assert len(payload) <= 50


def test_stats_and_thresholds() -> None:
    stats = {
        "runs": 1234,
        "answered": 1000,
        "hitl_rate": 0.25,
        "avg_confidence": 0.8123,
        "cost_usd": 12.5,
        "some_new_figure": 3,
    }
    text = all_text(assert_valid(stats_blocks(stats, feedback=(9, 3, 100))))
    assert "*questions asked*: 1,234" in text and "*questions answered*: 1,000" in text
    assert "*asked a person*: 25%" in text and "*cost (USD)*: $12.5000" in text
    assert "*average confidence of answers*: 0.81" in text
    assert "*some new figure*: 3" in text
    assert "hitl" not in text and "cost usd" not in text
    assert "👍 9 · 👎 3 · 75% helpful" in text
    assert "No questions yet today" in all_text(assert_valid(stats_blocks({})))
    assert "no 👍 / 👎 votes yet" in all_text(assert_valid(stats_blocks({}, feedback=(0, 0, 100))))
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
