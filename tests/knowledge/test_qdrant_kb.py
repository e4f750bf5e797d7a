"""Search over the sample knowledge base, errors, locking and the hybrid (RRF) path."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from pathlib import Path

import pytest
from qdrant_client import AsyncQdrantClient

from agent.errors import (
    InvalidInputError,
    KnowledgeBaseLockedError,
    LLMError,
    VectorStoreError,
)
from agent.knowledge.chunks import Chunk
from agent.knowledge.ingest import SAMPLE_KB_DIR, ingest_paths
from agent.knowledge.qdrant_kb import QdrantKnowledgeBase, open_knowledge_base
from agent.ports import KnowledgeBase
from agent.schemas import Source


def sources_of(hits: Sequence[Source]) -> list[str]:
    return [hit.source for hit in hits]


# --------------------------------------------------------------------------- offline search


async def test_is_a_knowledge_base(sample_kb: QdrantKnowledgeBase) -> None:
    kb: KnowledgeBase = sample_kb
    assert kb.default_collection == "grace_docs"
    assert await kb.collections() == ["grace_docs"]


@pytest.mark.parametrize(
    ("question", "source", "fact"),
    [
        ("How many vacation days do new employees get?", "vacation-policy.md", "15 days"),
        ("What is the meal expense limit per day?", "expense-policy.md", "$60 per day"),
        ("How long must my password be?", "security-faq.md", "14 characters"),
        ("What is the latest version of Beacon Mobile?", "product-faq.csv", "2.7"),
        ("経費精算の締め切りはいつですか？", "経費精算ガイド.md", "翌月5日"),
        ("出張中の食事代の上限は？", "経費精算ガイド.md", "8,000円"),
        ("新入社員の有給休暇は何日ですか？", "休暇制度.md", "年15日"),
    ],
)
async def test_single_document_facts_are_found(
    sample_kb: QdrantKnowledgeBase, question: str, source: str, fact: str
) -> None:
    hits = await sample_kb.search(question, collection=None, limit=5)
    assert hits, question
    top = hits[0]
    assert top.source == source
    assert fact in top.text
    assert top.similarity >= 0.75
    assert top.collection == "grace_docs"
    assert top.chunk_id.startswith(f"{source}#")
    assert top.score > 0


async def test_results_are_bounded(sample_kb: QdrantKnowledgeBase) -> None:
    hits = await sample_kb.search("vacation days", collection="grace_docs", limit=2)
    assert len(hits) == 2
    assert all(0.0 <= hit.similarity <= 1.0 for hit in hits)
    assert len({hit.chunk_id for hit in hits}) == 2


async def test_keyword_rerank_prefers_passages_with_every_keyword(
    sample_kb: QdrantKnowledgeBase,
) -> None:
    """The seed's rule: hits containing more of the query's kanji/katakana keywords win."""
    hits = await sample_kb.search("有給休暇 繰り越し", collection=None, limit=3)
    assert hits[0].source == "休暇制度.md"
    assert "有給休暇" in hits[0].text and "繰り越" in hits[0].text


async def test_contradicting_documents_are_both_returned(
    sample_kb: QdrantKnowledgeBase,
) -> None:
    hits = await sample_kb.search(
        "How many days per week can I work remotely?", collection=None, limit=5
    )
    found = sources_of(hits)
    assert "remote-work-policy.md" in found
    assert "employee-handbook-2022.md" in found
    texts = " ".join(h.text for h in hits)
    assert "up to 3 days per week" in texts
    assert "limited to one day per week" in texts


async def test_ambiguous_latest_version_hits_every_component(
    sample_kb: QdrantKnowledgeBase,
) -> None:
    hits = await sample_kb.search("What is the latest version?", collection=None, limit=3)
    texts = " ".join(h.text for h in hits)
    for component in ("Beacon Server is 4.2", "Beacon Mobile is 2.7", "Beacon CLI is 1.9"):
        assert component in texts


@pytest.mark.parametrize(
    "question",
    ["What is the capital of Mongolia?", "Explain quantum computing", "モンゴルの首都は？"],
)
async def test_unanswerable_questions_find_nothing(
    sample_kb: QdrantKnowledgeBase, question: str
) -> None:
    assert await sample_kb.search(question, collection=None, limit=5) == []


async def test_query_without_content_words(sample_kb: QdrantKnowledgeBase) -> None:
    assert await sample_kb.search("what is it?", collection=None, limit=5) == []


async def test_bad_limit(sample_kb: QdrantKnowledgeBase) -> None:
    with pytest.raises(InvalidInputError, match="limit"):
        await sample_kb.search("vacation", collection=None, limit=0)


async def test_unknown_collection_names_the_known_ones(sample_kb: QdrantKnowledgeBase) -> None:
    with pytest.raises(InvalidInputError, match=r"unknown collection 'hr'.*grace_docs"):
        await sample_kb.search("vacation", collection="hr", limit=5)


async def test_unknown_collection_on_an_empty_store(kb: QdrantKnowledgeBase) -> None:
    with pytest.raises(InvalidInputError, match="none yet"):
        await kb.search("vacation", collection=None, limit=5)
    assert await kb.count("grace_docs") == 0
    assert await kb.delete_source("grace_docs", "x.md") == 0


async def test_delete_source(sample_kb: QdrantKnowledgeBase) -> None:
    before = await sample_kb.count("grace_docs")
    removed = await sample_kb.delete_source("grace_docs", "vacation-policy.md")
    assert removed > 0
    assert await sample_kb.count("grace_docs") == before - removed
    hits = await sample_kb.search("vacation days new employees", collection=None, limit=5)
    assert "vacation-policy.md" not in sources_of(hits)


async def test_in_memory_mode_works() -> None:
    kb = open_knowledge_base(path=None, url=None, default_collection="mem")
    try:
        chunk = Chunk(source="a.txt", index=0, text="The office dog is called Biscuit.")
        assert await kb.upsert_chunks("mem", [chunk]) == 1
        hits = await kb.search("What is the dog called?", collection=None, limit=3)
        assert sources_of(hits) == ["a.txt"]
    finally:
        await kb.close()


# --------------------------------------------------------------------------- store errors


async def test_locked_directory_explains_what_to_do(tmp_path: Path) -> None:
    directory = tmp_path / "qdrant"
    first = open_knowledge_base(path=directory, url=None)
    try:
        with pytest.raises(KnowledgeBaseLockedError) as caught:
            open_knowledge_base(path=directory, url=None)
        message = str(caught.value)
        assert str(directory) in message
        assert "one process at a time" in message
        assert "GRACE_DATA_DIR" in message
        assert "QDRANT_URL" in message
        assert isinstance(caught.value, VectorStoreError)
    finally:
        await first.close()
    reopened = open_knowledge_base(path=directory, url=None)  # the lock is released
    await reopened.close()


async def test_unreachable_server_is_a_vector_store_error() -> None:
    kb = open_knowledge_base(path=None, url="http://127.0.0.1:1", timeout=2)
    started = time.monotonic()
    try:
        with pytest.raises(VectorStoreError, match=r"127\.0\.0\.1:1.*unreachable"):
            await kb.search("vacation", collection=None, limit=5)
        with pytest.raises(VectorStoreError, match="unreachable"):
            await kb.collections()
        with pytest.raises(VectorStoreError):
            await kb.upsert_chunks("grace_docs", [Chunk(source="a.md", index=0, text="x")])
    finally:
        await kb.close()
    assert time.monotonic() - started < 10


# --------------------------------------------------------------------------- hybrid


class ConceptEmbedder:
    """A tiny deterministic stand-in for a multilingual embedding model: one dimension
    per topic, in both languages, so that meaning can match across languages."""

    CONCEPTS: tuple[tuple[str, ...], ...] = (
        ("vacation", "holiday", "leave", "休暇", "有給"),
        ("remote", "home", "在宅", "リモート"),
        ("expense", "meal", "receipt", "経費", "食事", "領収書"),
        ("password", "phishing", "security", "vpn"),
    )

    def __init__(self, *, dimension: int = 5, fail: bool = False) -> None:
        self._dimension = dimension
        self._fail = fail
        self.calls = 0

    @property
    def name(self) -> str:
        return "test-concepts"

    @property
    def dimension(self) -> int:
        return self._dimension

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += 1
        if self._fail:
            raise LLMError("embedding service down")
        vectors = []
        for text in texts:
            lowered = text.lower()
            vector = [float(sum(lowered.count(t) for t in terms)) for terms in self.CONCEPTS]
            vector += [0.1] * (self._dimension - len(vector))
            norm = math.sqrt(sum(v * v for v in vector))
            vectors.append([v / norm for v in vector])
        return vectors


async def test_hybrid_collection_has_dense_and_sparse_vectors(tmp_path: Path) -> None:
    client = AsyncQdrantClient(path=str(tmp_path / "q"))
    kb = QdrantKnowledgeBase(client=client, embedder=ConceptEmbedder())
    try:
        await ingest_paths(kb, [SAMPLE_KB_DIR / "vacation-policy.md"])
        info = await client.get_collection("grace_docs")
        vectors = info.config.params.vectors
        assert isinstance(vectors, dict)
        assert vectors["dense"].size == 5
        assert info.config.params.sparse_vectors is not None
        assert "sparse" in info.config.params.sparse_vectors
    finally:
        await kb.close()


async def test_hybrid_rrf_fuses_lexical_and_dense_hits(tmp_path: Path) -> None:
    embedder = ConceptEmbedder()
    kb = open_knowledge_base(path=tmp_path / "q", url=None, embedder=embedder)
    try:
        await ingest_paths(kb, [SAMPLE_KB_DIR])
        calls = embedder.calls

        hits = await kb.search(
            "How many vacation days do new employees get?", collection=None, limit=5
        )
        assert embedder.calls == calls + 1  # the query was embedded
        assert hits[0].source == "vacation-policy.md"
        assert "15 days" in hits[0].text
        assert all(0.0 <= h.similarity <= 1.0 for h in hits)

        # "holiday leave" shares no word with the Japanese leave policy: only the dense
        # prefetch can find it, and RRF merges it with the lexical hits.
        hybrid = sources_of(await kb.search("holiday leave", collection=None, limit=10))
        assert "休暇制度.md" in hybrid
        assert "vacation-policy.md" in hybrid
    finally:
        await kb.close()

    offline = open_knowledge_base(path=tmp_path / "offline", url=None)
    try:
        await ingest_paths(offline, [SAMPLE_KB_DIR])
        lexical = sources_of(await offline.search("holiday leave", collection=None, limit=10))
        assert "休暇制度.md" not in lexical
        assert "vacation-policy.md" in lexical
    finally:
        await offline.close()


async def test_hybrid_falls_back_to_lexical_when_query_embedding_fails(tmp_path: Path) -> None:
    client = AsyncQdrantClient(path=str(tmp_path / "q"))
    try:
        builder = QdrantKnowledgeBase(client=client, embedder=ConceptEmbedder())
        await ingest_paths(builder, [SAMPLE_KB_DIR / "expense-policy.md"])
        broken = QdrantKnowledgeBase(client=client, embedder=ConceptEmbedder(fail=True))
        hits = await broken.search("meal expense limit", collection=None, limit=3)
        assert hits[0].source == "expense-policy.md"
    finally:
        await client.close()


async def test_embedding_dimension_mismatch_is_explained(tmp_path: Path) -> None:
    client = AsyncQdrantClient(path=str(tmp_path / "q"))
    try:
        builder = QdrantKnowledgeBase(client=client, embedder=ConceptEmbedder(dimension=5))
        await ingest_paths(builder, [SAMPLE_KB_DIR / "expense-policy.md"])
        other = QdrantKnowledgeBase(client=client, embedder=ConceptEmbedder(dimension=7))
        with pytest.raises(VectorStoreError, match=r"5-dimensional.*7-dimensional"):
            await other.search("meal", collection=None, limit=3)
        # Without an embedding model the same collection is still searchable lexically.
        offline = QdrantKnowledgeBase(client=client, embedder=None)
        hits = await offline.search("meal expense limit", collection=None, limit=3)
        assert hits[0].source == "expense-policy.md"
    finally:
        await client.close()
