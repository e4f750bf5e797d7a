"""Expensive read-only directories (an ingested sample knowledge base) built once per test
session, even when pytest-xdist runs the suite in several worker processes.

Without xdist the directory is built in this session's temporary directory. Under xdist
every worker asks for it; the first one builds it under a file lock in the directory the
workers share (the parent of each worker's `basetemp`), the others wait and reuse it.
Tests only ever copy these directories, never write to them.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest


def built_once(
    tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]
) -> Path:
    """The directory `name`, filled by `build(path)` once for all workers of this run."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        path = tmp_path_factory.mktemp(name, numbered=True)
        build(path)
        return path
    shared = tmp_path_factory.getbasetemp().parent
    target = shared / name
    with (shared / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file is closed
        if not target.is_dir():
            partial = shared / f"{name}.partial-{os.getpid()}"
            shutil.rmtree(partial, ignore_errors=True)
            partial.mkdir()
            build(partial)
            partial.rename(target)  # complete or absent: a failed build leaves no target
    return target
