"""The CLI tests copy the data dir that `grace ingest --sample` made once for the run."""

from __future__ import annotations

from tests.durable.conftest import sample_data_dir

__all__ = ["sample_data_dir"]
