"""The sample knowledge base ingested once by the real `grace ingest`, for every test
here to copy."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.durable.helpers import grace_env, run_grace


@pytest.fixture(scope="session")
def sample_data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data_dir = tmp_path_factory.mktemp("grace-data")
    result = run_grace(grace_env(data_dir), "ingest", "--sample")
    assert result.returncode == 0, result.stderr
    return data_dir
