"""Issue 9 point 7, the files-and-logs half, through the real `grace` command: owner-only
data files, no question text in logs unless asked for, one line for a damaged database."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

from tests.durable.helpers import clean_env, grace_here

QUESTION = "Zebracorn parking permits for new employees?"


def _env(data_dir: Path, **extra: str) -> dict[str, str]:
    return clean_env(GRACE_DATA_DIR=str(data_dir), GRACE_LLM__PROVIDER="offline", **extra)


def test_data_directory_is_0700_and_its_files_0600(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    result = grace_here(_env(data_dir), "ask", "--json", QUESTION)
    assert result.returncode in (0, 1), result.stderr  # 1: nothing ingested, so no answer
    found = {p: stat.S_IMODE(p.stat().st_mode) for p in [data_dir, *data_dir.rglob("*")]}
    assert data_dir / "grace.db" in found and data_dir / "qdrant" in found
    wrong = {
        str(p): oct(mode) for p, mode in found.items() if mode != (0o700 if p.is_dir() else 0o600)
    }
    assert wrong == {}, wrong


def test_question_text_is_not_logged_unless_log_content_is_set(tmp_path: Path) -> None:
    quiet = grace_here(_env(tmp_path / "a", GRACE_LOG_LEVEL="DEBUG"), "ask", "--json", QUESTION)
    assert "Zebracorn" not in quiet.stderr, "question text in DEBUG logs"
    assert "Zebracorn" in quiet.stdout, "the answer itself still names the question"

    loud = grace_here(
        _env(tmp_path / "b", GRACE_LOG_LEVEL="DEBUG", GRACE_LOG_CONTENT="true"),
        "ask",
        "--json",
        QUESTION,
    )
    assert "Zebracorn" in loud.stderr, "GRACE_LOG_CONTENT=true lets it through"


def test_a_damaged_database_is_one_line_naming_the_file_and_exit_2(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage"
    garbage.mkdir()
    (garbage / "grace.db").write_bytes(os.urandom(64 * 1024))
    result = grace_here(_env(garbage), "runs")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    [line] = [x for x in result.stderr.splitlines() if x.startswith("error:")]
    assert str(garbage / "grace.db") in line and "damaged" in line

    # A valid database with a page overwritten: it opens, then fails on first read.
    healthy = tmp_path / "healthy"
    assert grace_here(_env(healthy), "ask", "--json", QUESTION).returncode in (0, 1)
    broken = tmp_path / "broken"
    broken.mkdir()
    shutil.copy(healthy / "grace.db", broken / "grace.db")
    with (broken / "grace.db").open("r+b") as db:
        db.seek(2 * 4096)
        db.write(b"\xde\xad" * 3000)
    result = grace_here(_env(broken), "runs")
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    errors = [x for x in result.stderr.splitlines() if x.startswith("error:")]
    assert len(errors) == 1 and str(broken / "grace.db") in errors[0]
