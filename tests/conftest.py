"""Suite-wide fixtures, and the order tests start in."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest_plugins = ["tests.fakes.gemini_fixtures"]

TESTS = Path(__file__).resolve().parent

SLOW_FIRST = (
    "faults/test_crash_after_ack.py",
    "faults/test_slack_faults.py",
    "faults/test_database_locked.py",
    "faults/",
    "durable/",
    "browser/",
    "simulator/",
    "cli/",
    "eval/",
)
"""Where the long tests are (real processes, restarts, 40 s of faults), longest first.

Under pytest-xdist (`scripts/test.sh` runs `-n`) each worker takes the next test in this
order when it is free, so starting the long ones first lets the many short tests fill
in around them and the run does not end waiting on one late, slow test."""


def _rank(item: pytest.Item) -> int:
    try:
        where = item.path.resolve().relative_to(TESTS).as_posix()
    except ValueError:
        return len(SLOW_FIRST)
    return next(
        (n for n, prefix in enumerate(SLOW_FIRST) if where.startswith(prefix)), len(SLOW_FIRST)
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under xdist, long tests first (a stable sort: within a file, tests keep their
    order). A plain `pytest` run keeps the usual order, quick tests first."""
    if "PYTEST_XDIST_WORKER" in os.environ:
        items.sort(key=_rank)
