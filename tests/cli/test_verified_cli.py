"""`grace verified list | add | remove` (issue 19, point 4) through the `grace` command:
an answer added by an operator answers `grace ask` at once, cited as verified by that
person; removed, it no longer does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.schemas import utcnow
from tests.durable.helpers import grace_env, grace_here

QUESTION = "What is the capital of Mongolia?"
ANSWER = "It is Ulaanbaatar, according to our travel guide."


@pytest.fixture
def env(data_dir: Path) -> dict[str, str]:
    return grace_env(data_dir, GRACE_LLM__PROVIDER="offline")


def test_add_list_ask_and_remove(env: dict[str, str]) -> None:
    empty = grace_here(env, "verified", "list")
    assert (empty.returncode, empty.stdout.strip()) == (0, "no verified answers")

    added = grace_here(
        env, "verified", "add", "--question", QUESTION, "--answer", ANSWER, "--by", "@alice",
        "--json",
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    saved = json.loads(added.stdout)
    today = utcnow()
    citation = f"Verified by @alice on {today.day} {today:%b %Y}"
    assert saved["citation"] == citation and saved["fresh"] is True
    assert (saved["question"], saved["answer"], saved["verified_by"]) == (QUESTION, ANSWER, "alice")

    listed = grace_here(env, "verified", "list")
    assert listed.returncode == 0
    assert f"{saved['answer_id']}  {citation}" in listed.stdout
    assert f"Q: {QUESTION}" in listed.stdout and f"A: {ANSWER}" in listed.stdout

    asked = grace_here(env, "ask", QUESTION, "--json", "--no-input")
    run = json.loads(asked.stdout)
    assert run["status"] == "answered", run
    assert "Ulaanbaatar" in run["answer"]
    assert run["sources"] == [f"verified answer {saved['answer_id']}"]
    assert run["level"] == "silent", "a fresh verified answer is a strong source"

    removed = grace_here(env, "verified", "remove", saved["answer_id"])
    assert removed.returncode == 0 and saved["answer_id"] in removed.stdout
    again = grace_here(env, "verified", "remove", saved["answer_id"])
    assert again.returncode == 2 and "no verified answer" in again.stderr
    asked = grace_here(env, "ask", QUESTION, "--json", "--no-input")
    assert json.loads(asked.stdout)["status"] == "paused", "escalates again once it is gone"


def test_empty_fields_are_refused(env: dict[str, str]) -> None:
    result = grace_here(env, "verified", "add", "--question", " ", "--answer", "A", "--by", "x")
    assert result.returncode == 2 and "must not be empty" in result.stderr
