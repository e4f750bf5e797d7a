"""Questions about the shipped sample knowledge base, English and Japanese, that tests
comparing two search paths (Edge, local mode, the in-process index) ask both."""

from __future__ import annotations

import pytest

from agent.knowledge.qdrant_kb import QdrantKnowledgeBase
from agent.schemas import Source

SAMPLE_QUERIES = [
    "How many vacation days do employees get?",
    "hotel limit per night when travelling",
    "経費精算の締め切りはいつですか",
    "What is the VPN policy?",
    "有給休暇",
]


async def same_ranking(
    ours: QdrantKnowledgeBase, theirs: QdrantKnowledgeBase, *, rel: float
) -> list[tuple[list[Source], list[Source]]]:
    """Ask both every sample query: each finds something, the same chunks in the same
    order, with scores equal within `rel`. The hits of both, for further checks."""
    found = []
    for query in SAMPLE_QUERIES:
        a = await ours.search(query, limit=5)
        b = await theirs.search(query, limit=5)
        assert a, query
        assert [h.chunk_id for h in a] == [h.chunk_id for h in b], query
        assert [h.score for h in a] == pytest.approx([h.score for h in b], rel=rel), query
        found.append((a, b))
    return found
