"""GeminiEmbedder through the real SDK: batching, dimension, order, normalisation."""

from __future__ import annotations

import math

import pytest

from agent.errors import LLMError
from agent.llm.gemini import GeminiEmbedder
from tests.fakes.fake_gemini import BATCH_EMBED, FakeGemini, fake_embedding


def _cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


async def test_embed_batch_returns_one_vector_per_text(
    fake: FakeGemini, embedder: GeminiEmbedder
) -> None:
    texts = ["VPN policy for laptops", "VPN policy for phones", "有給休暇の申請方法"]

    vectors = await embedder.embed(texts)

    assert len(vectors) == 3
    assert all(len(v) == 64 for v in vectors)
    assert all(math.isclose(math.fsum(x * x for x in v), 1.0) for v in vectors)
    assert vectors[0] == pytest.approx(fake_embedding(texts[0], 64))
    assert _cosine(vectors[0], vectors[1]) > _cosine(vectors[0], vectors[2])

    (request,) = fake.calls(BATCH_EMBED)
    assert request.path == "/v1beta/models/gemini-embedding-001:batchEmbedContents"
    assert request.embed_texts == texts
    assert {r["outputDimensionality"] for r in request.body["requests"]} == {64}
    assert embedder.name == "gemini-embedding-001"
    assert embedder.dimension == 64


async def test_embed_splits_into_chunks_of_100(fake: FakeGemini, embedder: GeminiEmbedder) -> None:
    texts = [f"text number {i}" for i in range(250)]

    vectors = await embedder.embed(texts)

    assert len(vectors) == 250
    assert [len(r.body["requests"]) for r in fake.calls(BATCH_EMBED)] == [100, 100, 50]
    assert vectors[249] == pytest.approx(fake_embedding("text number 249", 64))


async def test_embed_nothing_makes_no_request(fake: FakeGemini, embedder: GeminiEmbedder) -> None:
    assert await embedder.embed([]) == []
    assert fake.calls() == []


async def test_single_text_also_uses_batch_endpoint(
    fake: FakeGemini, embedder: GeminiEmbedder
) -> None:
    await embedder.embed(["only one"])

    assert [r.route for r in fake.calls()] == [BATCH_EMBED]


async def test_wrong_dimension_from_server_is_llm_error(
    fake: FakeGemini, embedder: GeminiEmbedder
) -> None:
    fake.enqueue(BATCH_EMBED, {"embeddings": [{"values": [0.1, 0.2, 0.3]}]})

    with pytest.raises(LLMError, match="3 dimensions, expected 64"):
        await embedder.embed(["x"])


async def test_missing_vectors_is_llm_error(fake: FakeGemini, embedder: GeminiEmbedder) -> None:
    fake.enqueue(BATCH_EMBED, {"embeddings": [{"values": [0.0] * 64}]})

    with pytest.raises(LLMError, match="1 vectors for 2 texts"):
        await embedder.embed(["x", "y"])
