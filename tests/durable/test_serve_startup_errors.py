"""Issue 23 point 1, the `grace serve` half, through the real process: a database GRACE
cannot use (unreachable, wrong scheme, a failed migration) and a bad GRACE_* value stop
start-up with one `error:` line saying what to do and the documented exit code — never a
traceback, never pydantic's block."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from bot.simulator.webapi import FakeSlack
from tests.durable.helpers import run_grace
from tests.faults.helpers import free_port, serve_env


async def _serve(env: dict[str, str]) -> tuple[int, str]:
    port = str(free_port())
    result = await asyncio.to_thread(
        run_grace, env, "serve", "--port", port, "--host", "127.0.0.1", timeout=90
    )
    return result.returncode, result.stderr


def _one_error_line(stderr: str) -> str:
    assert "Traceback" not in stderr, stderr
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    [line] = lines
    assert line.startswith("error: "), stderr
    return line


@pytest.mark.parametrize(
    ("setting", "value", "code", "says"),
    [
        (
            "GRACE_DATABASE_URL",
            "postgresql://grace:pw@127.0.0.1:{port}/grace",
            1,
            "127.0.0.1:{port}",
        ),
        ("GRACE_DATABASE_URL", "mysql://grace:pw@127.0.0.1/grace", 2, "SQLite or PostgreSQL"),
        ("GRACE_SLACK__PORT", "eighty", 2, "GRACE_SLACK__PORT"),
        ("GRACE_LOG_LEVEL", "LOUD", 2, "GRACE_LOG_LEVEL"),
    ],
    ids=["unreachable-postgres", "mysql-url", "bad-number", "bad-choice"],
)
async def test_serve_refuses_to_start_in_one_line(
    tmp_path: Path, setting: str, value: str, code: int, says: str
) -> None:
    port = free_port()
    async with FakeSlack() as fake:
        env = serve_env(tmp_path / "data", fake)
        env[setting] = value.format(port=port)
        returncode, stderr = await _serve(env)
    line = _one_error_line(stderr)
    assert returncode == code, stderr
    assert says.format(port=port) in line
    assert "pw" not in line
    if setting != "GRACE_DATABASE_URL":
        assert "invalid configuration" in line and ".env" in line


async def test_serve_with_a_config_file_that_does_not_parse_is_one_line(tmp_path: Path) -> None:
    config = tmp_path / "grace.yaml"
    config.write_text("llm:\n  model: [unclosed\n", encoding="utf-8")
    async with FakeSlack() as fake:
        env = serve_env(tmp_path / "data", fake)
        env["GRACE_CONFIG_FILE"] = str(config)
        returncode, stderr = await _serve(env)
    line = _one_error_line(stderr)
    assert returncode == 2, stderr
    assert "GRACE_CONFIG_FILE" in line and str(config) in line and "line 2" in line


async def test_serve_with_a_database_it_cannot_migrate_is_one_line(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    async with FakeSlack() as fake:
        env = serve_env(data_dir, fake)
        listed = await asyncio.to_thread(run_grace, env, "runs")  # creates the database
        assert listed.returncode == 0, listed.stderr
        with sqlite3.connect(data_dir / "grace.db") as db:  # as a newer GRACE left it
            db.execute("UPDATE alembic_version SET version_num = '9999_from_the_future'")
        returncode, stderr = await _serve(env)
    line = _one_error_line(stderr)
    assert returncode == 1, stderr
    assert "9999_from_the_future" in line and "older" in line


@pytest.mark.parametrize("key", [None, "not-a-fernet-key"], ids=["no-key", "bad-key"])
async def test_oauth_mode_refuses_to_start_without_a_valid_encryption_key(
    tmp_path: Path, key: str | None
) -> None:
    """Issue 21: SLACK_CLIENT_ID and SLACK_CLIENT_SECRET without SLACK_BOT_TOKEN is OAuth
    mode, which stores tokens encrypted: no valid GRACE_ENCRYPTION_KEY, no start (exit 2)."""
    async with FakeSlack() as fake:
        env = serve_env(tmp_path / "data", fake)
        env.pop("SLACK_BOT_TOKEN", None)
        env |= {"SLACK_CLIENT_ID": "111.222", "SLACK_CLIENT_SECRET": "shh"}
        if key is not None:
            env["GRACE_ENCRYPTION_KEY"] = key
        returncode, stderr = await _serve(env)
    line = _one_error_line(stderr)
    assert returncode == 2, stderr
    assert "GRACE_ENCRYPTION_KEY" in line
    assert "shh" not in stderr
