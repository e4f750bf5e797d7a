"""Issue 23 point 1, the database half, through the real `grace` command: an unreachable
PostgreSQL, a driver that is not installed and a URL GRACE cannot use are one `error:`
line saying what to do — never a traceback — with the documented exit code."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.durable.helpers import clean_env, free_port, grace_here


def _env(data_dir: Path, url: str) -> dict[str, str]:
    return clean_env(
        GRACE_DATA_DIR=str(data_dir), GRACE_LLM__PROVIDER="offline", GRACE_DATABASE_URL=url
    )


@pytest.mark.parametrize(
    ("url", "code", "says"),
    [
        ("postgres://grace:pw@127.0.0.1:{port}/grace", 1, "127.0.0.1:{port}"),
        ("postgresql+nosuchdriver://grace@127.0.0.1/grace", 2, "pip install"),
        ("mysql://grace@127.0.0.1/grace", 2, "SQLite or PostgreSQL"),
    ],
    ids=["unreachable", "missing-driver", "wrong-scheme"],
)
def test_a_database_that_cannot_be_used_is_one_line(
    tmp_path: Path, url: str, code: int, says: str
) -> None:
    port = free_port()
    result = grace_here(_env(tmp_path / "data", url.format(port=port)), "runs")
    assert result.returncode == code, result.stderr
    assert "Traceback" not in result.stderr
    [line] = [x for x in result.stderr.splitlines() if x.startswith("error:")]
    assert says.format(port=port) in line
    assert "pw" not in line
