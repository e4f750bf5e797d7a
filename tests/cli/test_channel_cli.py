"""`grace channel show | set | list` (issue 20, point 4): an operator's change is stored
with who made it, an unset field falls back to the global setting, and what is not a
Slack id, an unknown collection or thresholds out of order are refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.durable.helpers import grace_env, grace_here


@pytest.fixture
def env(data_dir: Path) -> dict[str, str]:
    return grace_env(data_dir, GRACE_LLM__PROVIDER="offline", GRACE_APPROVERS="U0GLOBAL01")


def test_set_show_unset_and_list(env: dict[str, str]) -> None:
    empty = grace_here(env, "channel", "list")
    assert (empty.returncode, empty.stdout.strip()) == (0, "no channel has settings of its own")

    put = grace_here(
        env, "channel", "set", "C0HR000001", "--collection", "grace_docs",
        "--experts", "U0EXPERT01,<!subteam^S0HR00001|hr>", "--approvers", "U0APPR001",
        "--silent", "0.95", "--answer", "all", "--reply", "ephemeral", "--follow-ups", "on",
        "--by", "ops-alice", "--json",
    )  # fmt: skip
    assert put.returncode == 0, put.stderr
    shown = json.loads(put.stdout)
    assert shown["collections"] == ["grace_docs"]
    assert shown["experts"] == ["U0EXPERT01", "S0HR00001"]
    assert shown["effective"]["approvers"] == ["U0APPR001"]
    assert shown["effective"]["thresholds"] == {"silent": 0.95, "notify": 0.7, "confirm": 0.4}
    assert (shown["answer_mode"], shown["reply_mode"], shown["follow_ups"]) == (
        "all",
        "ephemeral",
        True,
    )
    assert {c["changed_by"] for c in shown["history"]} == {"ops-alice"}

    unset = grace_here(
        env, "channel", "set", "<#C0HR000001|hr>", "--unset", "approvers", "--unset",
        "thresholds", "--json",
    )  # fmt: skip
    assert unset.returncode == 0, unset.stderr
    after = json.loads(unset.stdout)
    assert after["approvers"] is None and after["silent"] is None
    assert after["effective"]["approvers"] == ["U0GLOBAL01"], "back to GRACE_APPROVERS"
    assert after["effective"]["thresholds"] is None
    newest = after["history"][0]
    assert newest["field"] in ("approvers", "silent") and newest["changed_by"].startswith("cli:")

    text = grace_here(env, "channel", "show", "C0HR000001")
    assert text.returncode == 0
    assert "experts      U0EXPERT01, S0HR00001" in text.stdout
    assert "approvers    (global)" in text.stdout
    assert "silent 0.95 → (global)" in text.stdout
    assert "approvers U0APPR001 → (global)" in text.stdout

    listed = grace_here(env, "channel", "list")
    assert listed.stdout.startswith("C0HR000001  collections=grace_docs")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--experts", "@channel"], "'@channel' is not one of"),
        (["--collection", "no_such_docs"], "Unknown collection 'no_such_docs'"),
        (["--notify", "0.99"], "silent ≥ notify ≥ confirm"),
        ([], "nothing to change"),
    ],
)
def test_bad_changes_are_refused(env: dict[str, str], args: list[str], message: str) -> None:
    result = grace_here(env, "channel", "set", "C0HR000001", *args)
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert grace_here(env, "channel", "list").stdout.strip() == "no channel has settings of its own"


def test_every_field_can_be_unset() -> None:
    from bot.cli.channels import UNSET_NAMES
    from storage.channel_settings import FIELDS

    assert set(UNSET_NAMES) == {*FIELDS, "thresholds"}


def test_team_is_for_oauth_mode_only(env: dict[str, str]) -> None:
    result = grace_here(env, "channel", "show", "C0HR000001", "--team", "T0OTHER01")
    assert result.returncode == 2 and "--team is for OAuth mode" in result.stderr, result.stderr
