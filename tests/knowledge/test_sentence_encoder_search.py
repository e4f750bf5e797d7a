"""The shipped sentence encoder as the dense half of the search: a question in another
language finds its passage, the encoder's own keep threshold decides, and a collection
built without dense vectors is still searched (lexically, with a message)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from agent.knowledge.ingest import ingest_paths
from agent.knowledge.qdrant_kb import open_knowledge_base
from agent.llm.sentence_encoder import SentenceEncoder
from tests.knowledge.documents_made import write_docs

PARKING_JA = (
    "# 駐車場の利用\n\n"
    "来客用駐車場の料金は1日500円です。受付で駐車券を受け取ってください。\n\n"
    "社員の月極駐車場は月額8,000円で、総務部に申し込みます。\n"
)
CANTEEN_EN = "# Canteen\n\nThe canteen serves lunch from noon to two in the afternoon.\n"
QUESTION = "How much does visitor parking cost per day?"


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    return write_docs(tmp_path / "docs", {"駐車場.md": PARKING_JA, "canteen.md": CANTEEN_EN})


async def test_an_english_question_finds_the_japanese_passage(tmp_path: Path, docs: Path) -> None:
    encoder = SentenceEncoder()
    kb = open_knowledge_base(path=tmp_path / "q", url=None, embedder=encoder)
    try:
        await ingest_paths(kb, [docs])
        hits = await kb.search(QUESTION, collection=None, limit=3)
        assert [h.source for h in hits][:1] == ["駐車場.md"]
        assert hits[0].vector is not None and len(hits[0].vector) == encoder.dimension

        lexical = open_knowledge_base(path=tmp_path / "lexical", url=None)
        try:
            await ingest_paths(lexical, [docs])
            assert "駐車場.md" not in [h.source for h in await lexical.search(QUESTION)]
        finally:
            await lexical.close()
    finally:
        await kb.close()


async def test_the_embedders_own_keep_threshold_decides(tmp_path: Path, docs: Path) -> None:
    """A hit sharing no word with the question is kept at the encoder's threshold and
    dropped when the same model demands Gemini's 0.8."""
    encoder = SentenceEncoder()
    kb = open_knowledge_base(path=tmp_path / "q", url=None, embedder=encoder)
    try:
        await ingest_paths(kb, [docs])
        assert "駐車場.md" in [h.source for h in await kb.search(QUESTION)]
        encoder.dense_only_keep = 0.8
        assert "駐車場.md" not in [h.source for h in await kb.search(QUESTION)]
    finally:
        await kb.close()


async def test_a_collection_without_dense_vectors_is_searched_lexically_with_a_message(
    tmp_path: Path, docs: Path, caplog: pytest.LogCaptureFixture
) -> None:
    lexical = open_knowledge_base(path=tmp_path / "q", url=None)
    try:
        await ingest_paths(lexical, [docs])
    finally:
        await lexical.close()

    kb = open_knowledge_base(path=tmp_path / "q", url=None, embedder=SentenceEncoder())
    try:
        with caplog.at_level(logging.WARNING):
            hits = await kb.search("when does the canteen serve lunch?")
            await kb.search("canteen lunch")
        assert hits[0].source == "canteen.md"
        assert hits[0].vector is None
        messages = [r.getMessage() for r in caplog.records if "no dense vector" in r.getMessage()]
        assert len(messages) == 1  # once per collection, not once per search
        assert "searched by keywords only" in messages[0]
        assert "grace reembed --collection grace_docs" in messages[0]
        assert "use-multilingual-v3" in messages[0]
        # ingesting more into it keeps it lexical: no error, and it stays searchable
        (docs / "more.md").write_text("# Lockers\n\nLockers are on the second floor.\n")
        await ingest_paths(kb, [docs / "more.md"])
        assert (await kb.search("where are the lockers?"))[0].source == "more.md"
    finally:
        await kb.close()
