"""The sample knowledge base ingested once by the real `grace ingest` (once per run, for
every xdist worker), for every test here to copy (`data_dir`: a test's own copy)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.durable.helpers import copy_data_dir, grace_env, run_grace
from tests.shared_dirs import built_once


@pytest.fixture(scope="session")
def sample_data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    def ingest(data_dir: Path) -> None:
        result = run_grace(grace_env(data_dir), "ingest", "--sample")
        assert result.returncode == 0, result.stderr
        assert "vacation-policy.md" in result.stdout

    return built_once(tmp_path_factory, "grace-data", ingest)


@pytest.fixture
def data_dir(sample_data_dir: Path, tmp_path: Path) -> Path:
    """This test's own copy of the data dir `grace ingest --sample` made once."""
    return copy_data_dir(sample_data_dir, tmp_path / "data")
