"""Fixtures: the real embedded engine (Qdrant Edge) in a temporary directory, real
Sudachi."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agent.knowledge.ingest import SAMPLE_KB_DIR, ingest_paths
from agent.knowledge.qdrant_kb import QdrantKnowledgeBase, open_knowledge_base


@pytest.fixture
async def kb(tmp_path: Path) -> AsyncIterator[QdrantKnowledgeBase]:
    """An empty, offline (sparse-only) knowledge base on disk."""
    base = open_knowledge_base(path=tmp_path / "qdrant", url=None)
    try:
        yield base
    finally:
        await base.close()


@pytest.fixture
async def sample_kb(kb: QdrantKnowledgeBase) -> QdrantKnowledgeBase:
    """The shipped Northwind Labs sample, ingested into the default collection."""
    await ingest_paths(kb, [SAMPLE_KB_DIR])
    return kb
