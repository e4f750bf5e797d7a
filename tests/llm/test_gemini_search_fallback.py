"""A slow or failing query embedding never holds a search up: it falls back to lexical
search within the query timeout (≤ 5 s), with the real SDK, fake server and Qdrant."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from google import genai

from agent.confidence import SourceAgreementCalculator
from agent.knowledge.chunks import Chunk
from agent.knowledge.qdrant_kb import QdrantKnowledgeBase, open_knowledge_base
from agent.llm.gemini import CallPolicy, GeminiEmbedder
from tests.fakes.fake_gemini import BATCH_EMBED, CannedResponse, FakeGemini

CHUNKS = [
    Chunk(source="vacation-policy.md", index=0, text="New employees get 15 vacation days."),
    Chunk(source="expense-policy.md", index=0, text="Submit expenses within 30 days."),
]


@pytest.fixture
async def dense_kb(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> AsyncIterator[QdrantKnowledgeBase]:
    embedder = GeminiEmbedder(
        client=client,
        dimension=32,
        query_timeout=0.5,
        policy=CallPolicy(deadline_seconds=10, initial_delay=0.01),
    )
    kb = open_knowledge_base(path=tmp_path / "qdrant", url=None, embedder=embedder)
    await kb.upsert_chunks("docs", CHUNKS)
    yield kb
    await kb.close()


async def test_a_hanging_query_embedding_falls_back_to_lexical_search(
    fake: FakeGemini, dense_kb: QdrantKnowledgeBase
) -> None:
    ingest_calls = len(fake.calls(BATCH_EMBED))
    assert ingest_calls == 2, "one request per document title"
    never = asyncio.Event()
    fake.set_responder(BATCH_EMBED, lambda _: CannedResponse(hold=never))
    started = time.monotonic()

    try:
        hits = await dense_kb.search("vacation days", collection="docs", limit=2)
    finally:
        never.set()

    elapsed = time.monotonic() - started
    assert elapsed <= 5.0, elapsed
    assert hits and hits[0].source == "vacation-policy.md"
    assert len(fake.calls(BATCH_EMBED)) > ingest_calls, "the query embedding was attempted"


async def test_a_failing_query_embedding_falls_back_to_lexical_search(
    fake: FakeGemini, dense_kb: QdrantKnowledgeBase
) -> None:
    fake.fail(503, times=5, route=BATCH_EMBED)

    hits = await dense_kb.search("expenses", collection="docs", limit=2)

    assert hits and hits[0].source == "expense-policy.md"


async def test_source_agreement_reuses_the_vectors_the_search_returned(
    fake: FakeGemini, dense_kb: QdrantKnowledgeBase
) -> None:
    hits = await dense_kb.search("vacation expenses days", collection="docs", limit=2)
    assert len({h.source for h in hits}) == 2
    assert all(h.vector is not None and len(h.vector) == 32 for h in hits)
    assert "vector" not in hits[0].model_dump(), "vectors are never saved with a run"
    requests = len(fake.calls(BATCH_EMBED))
    embedder = dense_kb.embedder
    assert embedder is not None

    agreement = await SourceAgreementCalculator(embedder).calculate(hits)

    assert 0.0 <= agreement < 1.0
    assert len(fake.calls(BATCH_EMBED)) == requests, "the passages were embedded again"
