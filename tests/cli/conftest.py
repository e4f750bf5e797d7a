"""The CLI tests copy the data dir that `grace ingest --sample` made once for the run;
the web-site ones crawl the handbook site served locally."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.durable.conftest import data_dir, sample_data_dir
from tests.durable.helpers import grace_env
from tests.knowledge.test_crawl import Serve, Site, serve, start_handbook

__all__ = ["data_dir", "sample_data_dir", "serve"]


@dataclass
class Handbook:
    """The served handbook site, and the environment of a data dir that crawls it."""

    site: Site
    env: dict[str, str]

    @property
    def start(self) -> str:
        return f"{self.site.base}/handbook/"


@pytest.fixture
async def handbook(tmp_path: Path, serve: Serve) -> Handbook:
    """No delay between page fetches: the site is local."""
    site, _ = await start_handbook(serve)
    env = grace_env(tmp_path / "data") | {"GRACE_KNOWLEDGE__CRAWL_DELAY_SECONDS": "0"}
    return Handbook(site, env)
