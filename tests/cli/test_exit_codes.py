"""`--json` is always exactly one JSON object on stdout — errors included — and every
outcome has its documented exit code: 0 done, 1 failed, 2 bad input, 3 not allowed.
Most cases run `grace` in this process (`bot.cli.main` returns the exit code); a real
process shows the exit code a shell sees for "not allowed" and "data directory in use"."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agent.knowledge.edge_client import EdgeClient
from agent.knowledge.qdrant_kb import EDGE_DIR
from tests.durable.helpers import GRACE, grace_env, grace_here

AMBIGUOUS_Q = "What is the latest version?"


def grace_json(
    env: dict[str, str], *args: str, process: bool = False
) -> tuple[int, dict[str, Any]]:
    """Run `grace ARGS`; its exit code and the one JSON object on stdout. In this process
    (`bot.cli.main`, whose return value is the exit code) unless `process`: then a real
    `grace` process, for the exit code the shell sees."""
    if process:
        result = subprocess.run(
            [*GRACE, *args], env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
            timeout=120, check=False,
        )  # fmt: skip
    else:
        result = grace_here(env, *args)
    assert result.stdout.count("\n") == 1, (result.stdout, result.stderr)
    value = json.loads(result.stdout)
    assert isinstance(value, dict), value
    assert "Traceback" not in result.stderr
    return result.returncode, value


def check_error(value: dict[str, Any], code: str, words: str) -> None:
    assert set(value) == {"status", "error"}
    assert value["status"] == "error"
    assert set(value["error"]) == {"code", "message"}
    assert value["error"]["code"] == code
    assert words in value["error"]["message"]


@pytest.mark.parametrize(
    ("args", "code", "words"),
    [
        (["ask", "", "--json"], "invalid_input", "The question is empty"),
        (["ask", "hi", "--collection", "nosuch", "--json"], "invalid_input", "'nosuch'"),
        (["ask", "--json"], "bad_arguments", "required: question"),
        (["show", "nope", "--json"], "not_found", "No run 'nope'"),
        (["resume", "nope", "--action", "proceed", "--json"], "not_found", "No run 'nope'"),
        (["resume", "x", "--action", "maybe", "--json"], "bad_arguments", "invalid choice"),
    ],
)
def test_bad_input_is_one_json_error_and_exit_2(
    data_dir: Path, args: list[str], code: str, words: str
) -> None:
    status, value = grace_json(grace_env(data_dir), *args)
    assert status == 2
    check_error(value, code, words)


def test_resume_as_someone_else_is_not_allowed_and_an_answered_run_is_not_waiting(
    data_dir: Path,
) -> None:
    env = grace_env(data_dir)
    status, paused = grace_json(env, "ask", AMBIGUOUS_Q, "--no-input", "--as", "U0ALICE", "--json")
    assert status == 0 and paused["status"] == "paused"
    run_id = paused["run_id"]

    proceed = ["resume", run_id, "--action", "proceed", "--json"]
    status, value = grace_json(env, *proceed, "--as", "U0BOB")
    assert status == 3
    check_error(value, "not_allowed", "U0BOB may not answer")
    plain = subprocess.run(
        [*GRACE, "resume", run_id, "--action", "proceed", "--as", "U0BOB"],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert plain.returncode == 3 and plain.stdout == ""
    assert plain.stderr.strip().splitlines() == [f"error: {value['error']['message']}"]

    status, answered = grace_json(
        env, "resume", run_id, "--action", "input", "--option", "1", "--as", "U0ALICE", "--json"
    )
    assert status == 0 and answered["status"] == "answered"

    status, value = grace_json(env, *proceed, "--as", "U0ALICE")
    assert status == 2
    check_error(value, "not_waiting", "is answered, not waiting for an answer")


def test_a_data_directory_in_use_is_one_clear_line_and_exit_1(data_dir: Path) -> None:
    env = grace_env(data_dir)
    holder = EdgeClient(data_dir / "qdrant" / EDGE_DIR)  # another process's lock
    try:
        status, value = grace_json(env, "runs", "--status", "paused", "--json", process=True)
        plain = subprocess.run(
            [*GRACE, "thresholds"], env=env, capture_output=True, text=True, timeout=120,
            check=False,
        )  # fmt: skip
    finally:
        asyncio.run(holder.close())
    assert status == 1
    check_error(value, "data_dir_in_use", "already in use by another grace process")
    assert "GRACE_DATA_DIR" in value["error"]["message"]
    assert plain.returncode == 1
    lines = plain.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: the data directory")
