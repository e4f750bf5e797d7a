"""The in-process sparse index (local mode) gives exactly Qdrant's own ranking and
scores, and notices writes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from qdrant_client import AsyncQdrantClient

from agent.knowledge.ingest import SAMPLE_KB_DIR, ingest_paths
from agent.knowledge.qdrant_kb import QdrantKnowledgeBase
from agent.knowledge.sparse_index import SparseIndex, idf
from tests.knowledge.sample_queries import same_ranking


@pytest.fixture
async def pair(tmp_path: Path) -> AsyncIterator[tuple[QdrantKnowledgeBase, QdrantKnowledgeBase]]:
    """The sample KB twice: searched in process, and searched by Qdrant itself."""
    ours = QdrantKnowledgeBase(
        client=AsyncQdrantClient(path=str(tmp_path / "a")), embedder=None, in_process_index=True
    )
    theirs = QdrantKnowledgeBase(
        client=AsyncQdrantClient(path=str(tmp_path / "b")), embedder=None, in_process_index=False
    )
    try:
        for kb in (ours, theirs):
            await ingest_paths(kb, [SAMPLE_KB_DIR])
        yield ours, theirs
    finally:
        await ours.close()
        await theirs.close()


async def test_same_hits_and_scores_as_qdrant(
    pair: tuple[QdrantKnowledgeBase, QdrantKnowledgeBase],
) -> None:
    ours, theirs = pair
    # Qdrant keeps float32 weights; the in-process index float64.
    for a, b in await same_ranking(ours, theirs, rel=1e-6):
        assert [h.similarity for h in a] == [h.similarity for h in b]


async def test_a_write_rebuilds_the_index(
    pair: tuple[QdrantKnowledgeBase, QdrantKnowledgeBase], tmp_path: Path
) -> None:
    ours, _ = pair
    assert await ours.search("zeppelin hangar", limit=5) == []
    extra = tmp_path / "airships.md"
    extra.write_text("# Airships\n\nThe zeppelin hangar opens at 9.", encoding="utf-8")
    await ingest_paths(ours, [extra])
    assert [h.source for h in await ours.search("zeppelin hangar", limit=5)] == ["airships.md"]
    await ours.delete_source(ours.default_collection, "airships.md")
    assert await ours.search("zeppelin hangar", limit=5) == []


def test_scores_are_idf_weighted_dot_products() -> None:
    index = SparseIndex(
        [
            ("p1", {"n": 1}, [1, 2], [1.0, 0.5]),
            ("p2", {"n": 2}, [2], [2.0]),
            ("p3", {"n": 3}, [3], [1.0]),
        ]
    )
    hits = index.search([2, 1], [1.0, 1.0], limit=5)
    assert [point.point_id for _, point in hits] == ["p1", "p2"]  # the rarer term weighs more
    assert hits[0][0] == pytest.approx(1.0 * idf(1, 3) + 0.5 * idf(2, 3))
    assert hits[1][0] == pytest.approx(2.0 * idf(2, 3))
    assert index.search([9], [1.0], limit=5) == []
    assert len(index.search([1, 2, 3], [1.0, 1.0, 1.0], limit=2)) == 2
