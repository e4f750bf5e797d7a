"""The index-format stamp: a collection indexed by an older tokeniser is named in a
warning, and re-ingesting all its documents re-indexes them and stamps it current."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from agent.knowledge.ingest import ingest, load_file
from agent.knowledge.lexical import sparse_vector
from agent.knowledge.qdrant_kb import LEXICAL_VERSION_KEY, open_knowledge_base
from agent.knowledge.tokenize import LEXICAL_VERSION, search_terms
from tests.knowledge.documents_made import write_docs

COLLECTION = "grace_docs"
MEETINGS = "# Meetings\n\nWeekly 1:1 meetings with your manager last 30 minutes.\n"
TRAVEL = "# Travel\n\nHotels are reimbursed up to $200 per night.\n"
STALE_MESSAGE = "indexed by an older GRACE"


def _old_terms(text: str) -> list[str]:
    """What a tokeniser before "1:1" became one token kept of a text (in this test)."""
    return [t for t in search_terms(text) if t not in {"1-1", "1"}]


async def _older_grace_collection(data: Path, docs: Path) -> None:
    """A collection as an older GRACE left it: old sparse vectors, no stamp."""
    kb = open_knowledge_base(path=data, url=None)
    try:
        await ingest(kb, [docs])
        for name in ("meetings.md", "travel.md"):
            chunks = load_file(docs / name)
            old = [sparse_vector(_old_terms(c.title) + _old_terms(c.text)) for c in chunks]
            await kb.upsert_chunks(COLLECTION, chunks, sparse=old, lexical_version=1)
    finally:
        await kb.close()
    meta_file = data / "edge" / COLLECTION / "grace.json"
    meta = json.loads(meta_file.read_text(encoding="utf-8"))
    assert meta["metadata"].pop(LEXICAL_VERSION_KEY) == LEXICAL_VERSION
    meta_file.write_text(json.dumps(meta), encoding="utf-8")


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    return write_docs(tmp_path / "docs", {"meetings.md": MEETINGS, "travel.md": TRAVEL})


async def test_fresh_ingest_is_stamped_current_and_never_warns(
    tmp_path: Path, docs: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data = tmp_path / "data"
    kb = open_knowledge_base(path=data, url=None)
    try:
        result = await ingest(kb, [docs])
        assert result.not_reindexed == []
    finally:
        await kb.close()
    kb = open_knowledge_base(path=data, url=None)  # the stamp survives a restart
    try:
        assert await kb.lexical_version(COLLECTION) == LEXICAL_VERSION
        assert not await kb.index_is_stale(COLLECTION)
        with caplog.at_level(logging.WARNING):
            hits = await kb.search("one-on-one")
        assert [h.source for h in hits] == ["meetings.md"]
        assert STALE_MESSAGE not in caplog.text
    finally:
        await kb.close()


async def test_older_collection_warns_and_full_reingest_reindexes_and_stamps(
    tmp_path: Path, docs: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data = tmp_path / "data"
    await _older_grace_collection(data, docs)
    kb = open_knowledge_base(path=data, url=None)
    try:
        assert await kb.lexical_version(COLLECTION) is None
        with caplog.at_level(logging.WARNING):
            assert await kb.search("one-on-one") == []  # answering goes on
            await kb.search("hotel")
        warnings = [r for r in caplog.records if STALE_MESSAGE in r.getMessage()]
        assert len(warnings) == 1  # once per collection, not per question
        assert "grace ingest" in warnings[0].getMessage()
        assert f"--collection {COLLECTION}" in warnings[0].getMessage()

        result = await ingest(kb, [docs])  # the same, unchanged files
        assert sorted(r.source for r in result.reports) == ["meetings.md", "travel.md"]
        assert result.not_reindexed == []
        assert await kb.lexical_version(COLLECTION) == LEXICAL_VERSION
        assert [h.source for h in await kb.search("one-on-one")] == ["meetings.md"]
    finally:
        await kb.close()
    kb = open_knowledge_base(path=data, url=None)
    try:
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            await kb.search("one-on-one")
        assert STALE_MESSAGE not in caplog.text
    finally:
        await kb.close()


async def test_partial_reingest_of_older_collection_keeps_it_stale(
    tmp_path: Path, docs: Path
) -> None:
    data = tmp_path / "data"
    await _older_grace_collection(data, docs)
    kb = open_knowledge_base(path=data, url=None)
    try:
        result = await ingest(kb, [docs / "travel.md"])
        assert result.not_reindexed == ["meetings.md"]
        assert await kb.index_is_stale(COLLECTION)
        assert await kb.search("one-on-one") == []

        result = await ingest(kb, [docs / "meetings.md"])
        assert result.not_reindexed == []  # travel.md was re-indexed by the first ingest
        assert await kb.lexical_version(COLLECTION) == LEXICAL_VERSION
        assert [h.source for h in await kb.search("one-on-one")] == ["meetings.md"]
    finally:
        await kb.close()
