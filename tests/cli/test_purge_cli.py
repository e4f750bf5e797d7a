"""`grace purge --before DATE` through the real command line: finished runs go, with what
people wrote in them; a run waiting for a person stays, whatever its age; a date that is
not one is bad input (exit 2)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tests.durable.helpers import copy_data_dir, grace_env, grace_here


def test_purge_forgets_finished_runs_and_keeps_a_paused_one(
    sample_data_dir: Path, tmp_path: Path
) -> None:
    env = grace_env(copy_data_dir(sample_data_dir, tmp_path / "data"))
    answered = json.loads(
        grace_here(env, "ask", "How many vacation days do new employees get?", "--json").stdout
    )
    assert answered["status"] == "answered"
    question = "Compare the remote work policy and the employee handbook: why do they differ?"
    paused = json.loads(grace_here(env, "ask", question, "--no-input", "--json").stdout)
    assert paused["status"] == "paused"

    yesterday = (datetime.now(UTC) - timedelta(days=1)).date().isoformat()
    nothing = grace_here(env, "purge", "--before", yesterday)
    assert nothing.returncode == 0, nothing.stderr
    assert nothing.stdout.startswith("forgot 0 finished runs")

    tomorrow = (datetime.now(UTC) + timedelta(days=1)).date().isoformat()
    result = grace_here(env, "purge", "--before", tomorrow)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("forgot 1 finished runs")

    gone = grace_here(env, "show", answered["run_id"])
    assert gone.returncode == 2 and "No run" in gone.stderr
    kept = json.loads(grace_here(env, "show", paused["run_id"], "--json").stdout)
    assert kept["status"] == "paused" and kept["pending"] is not None
    listed = json.loads(grace_here(env, "runs", "--json").stdout)
    assert [run["run_id"] for run in listed] == [paused["run_id"]]


def test_purge_wants_a_date(tmp_path: Path) -> None:
    result = grace_here(grace_env(tmp_path / "data"), "purge", "--before", "last week")
    assert result.returncode == 2
    assert "not a date" in result.stderr and "Traceback" not in result.stderr
