"""The embedded engine (Qdrant Edge): the same hits and scores as exact scoring and as
qdrant-client's local mode, data that survives a restart, and old local-mode
directories moved to it on first open."""

from __future__ import annotations

import asyncio
import multiprocessing
from pathlib import Path
from typing import Any

import pytest
from qdrant_client import AsyncQdrantClient

from agent.errors import KnowledgeBaseLockedError
from agent.knowledge.chunks import Chunk
from agent.knowledge.edge_client import EdgeClient
from agent.knowledge.ingest import SAMPLE_KB_DIR, ingest_paths
from agent.knowledge.local_migration import BACKUP_DIR
from agent.knowledge.qdrant_kb import EDGE_DIR, QdrantKnowledgeBase, open_knowledge_base
from tests.knowledge.sample_queries import SAMPLE_QUERIES, same_ranking


def _local(directory: Path) -> QdrantKnowledgeBase:
    """qdrant-client local mode, searched by its in-process index (the old default)."""
    return QdrantKnowledgeBase(
        client=AsyncQdrantClient(path=str(directory)), embedder=None, in_process_index=True
    )


async def test_edge_ranks_and_scores_like_local_mode(tmp_path: Path) -> None:
    edge = open_knowledge_base(path=tmp_path / "edge", url=None)
    local = _local(tmp_path / "local")
    try:
        for kb in (edge, local):
            await ingest_paths(kb, [SAMPLE_KB_DIR])
        assert isinstance(edge._client, EdgeClient)
        assert await edge.count(edge.default_collection) == await local.count(
            local.default_collection
        )
        for a, b in await same_ranking(edge, local, rel=1e-5):
            assert [h.stale for h in a] == [h.stale for h in b]
    finally:
        await edge.close()
        await local.close()


async def test_data_survives_a_restart_and_deletes_stick(tmp_path: Path) -> None:
    directory = tmp_path / "kb"
    kb = open_knowledge_base(path=directory, url=None)
    chunks = [
        Chunk(source="dog.txt", index=0, text="The office dog is called Biscuit."),
        Chunk(source="cat.txt", index=0, text="The office cat is called Pepper."),
    ]
    await kb.upsert_chunks(kb.default_collection, chunks)
    assert await kb.delete_source(kb.default_collection, "cat.txt") == 1
    await kb.close()
    reopened = open_knowledge_base(path=directory, url=None)
    try:
        assert await reopened.collections() == ["grace_docs"]
        assert await reopened.count("grace_docs") == 1
        hits = await reopened.search("What is the dog called?", limit=3)
        assert [h.source for h in hits] == ["dog.txt"]
        assert await reopened.search("Pepper", limit=3) == []
    finally:
        await reopened.close()


def _hold(directory: str, ready: Any, done: Any) -> None:
    """In another process: open the directory, say so, keep it until told to stop."""
    client = EdgeClient(Path(directory))
    ready.set()
    done.wait(30)
    asyncio.run(client.close())


async def test_another_process_holding_the_directory_is_explained(tmp_path: Path) -> None:
    directory = tmp_path / "kb"
    context = multiprocessing.get_context("spawn")
    ready, done = context.Event(), context.Event()
    holder = context.Process(target=_hold, args=(str(directory / EDGE_DIR), ready, done))
    holder.start()
    try:
        assert ready.wait(60)
        with pytest.raises(KnowledgeBaseLockedError, match="one process at a time"):
            open_knowledge_base(path=directory, url=None)
    finally:
        done.set()
        holder.join(30)
    kb = open_knowledge_base(path=directory, url=None)  # released with the process
    await kb.close()


async def test_a_local_mode_directory_is_moved_to_edge(tmp_path: Path) -> None:
    directory = tmp_path / "qdrant"
    old = _local(directory)
    await ingest_paths(old, [SAMPLE_KB_DIR])
    await old.upsert_chunks(
        "other", [Chunk(source="dog.txt", index=0, text="The office dog is called Biscuit.")]
    )
    expected = {q: [h.chunk_id for h in await old.search(q, limit=5)] for q in SAMPLE_QUERIES}
    stored = await old.count(old.default_collection)
    documents = await old.documents(old.default_collection)
    await old.close()

    kb = open_knowledge_base(path=directory, url=None)
    try:
        assert (directory / EDGE_DIR).is_dir()
        assert (directory / BACKUP_DIR / "meta.json").is_file()
        assert not (directory / "meta.json").exists()
        assert await kb.collections() == ["grace_docs", "other"]
        assert await kb.count(kb.default_collection) == stored
        moved = await kb.documents(kb.default_collection)
        assert {s: d.superseded_by for s, d in moved.items()} == {
            s: d.superseded_by for s, d in documents.items()
        }
        for query, ids in expected.items():
            assert [h.chunk_id for h in await kb.search(query, limit=5)] == ids, query
        hits = await kb.search("dog called", collection="other", limit=3)
        assert [h.source for h in hits] == ["dog.txt"]
    finally:
        await kb.close()
