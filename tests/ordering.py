"""The order tests start in under pytest-xdist (`scripts/test.sh` runs `-n`): long first.

Each worker takes the next test in this order when it is free (`--maxschedchunk 1`), so
starting the long ones first — real processes, restarts, 40 s of faults — lets the many
short tests fill in around them, and the run does not end waiting on one late, slow
test. A plain `pytest` run keeps the usual order, quick tests first.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

SLOW_FIRST = (
    "faults/test_two_replicas.py",
    # mostly waiting (40 s of a locked database, 40 s of 429s): early, so CPU-bound tests
    # fill the waits instead of the waits ending the run
    "faults/test_database_locked.py",
    "faults/test_slack_faults.py",
    "faults/test_crash_after_ack.py",
    "faults/",
    "durable/",
    "browser/",
    "simulator/",
    "cli/",
    "eval/",
)
"""Where the long tests are, longest first; everything else comes after them."""


def _rank(item: pytest.Item) -> int:
    try:
        where = item.path.resolve().relative_to(TESTS).as_posix()
    except ValueError:
        return len(SLOW_FIRST)
    return next(
        (n for n, prefix in enumerate(SLOW_FIRST) if where.startswith(prefix)), len(SLOW_FIRST)
    )


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under xdist, long tests first (a stable sort: within a file, tests keep their order)."""
    if "PYTEST_XDIST_WORKER" in os.environ:
        items.sort(key=_rank)
