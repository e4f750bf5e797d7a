"""Ingest is streamed: chunks of a file are written to the knowledge base while the rest
of the file has not been written yet, so memory does not grow with the file's size.

The file is a named pipe fed by a thread that writes its first half, then waits to hear
that ingest has written chunks to the knowledge base before writing the second half. A
pipeline that read the whole file first (or held every chunk until the end) would never
report progress mid-file: the writer's wait would time out and the test fails."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from agent.knowledge.ingest import SAMPLE_KB_DIR, WRITE_BATCH, ingest
from agent.knowledge.qdrant_kb import QdrantKnowledgeBase, open_knowledge_base

SECTIONS = 3 * WRITE_BATCH
"""Sections in each half: several write batches."""


def _section(n: int) -> str:
    return f"## Section {n}\n\nRoom {n} keeps the spare keyboards and the blue {n} cables.\n\n"


async def test_chunks_are_written_before_the_file_is_complete(
    kb: QdrantKnowledgeBase, tmp_path: Path
) -> None:
    pipe = tmp_path / "handbook.md"
    os.mkfifo(pipe)
    stored_mid_file = threading.Event()
    outcome: dict[str, bool] = {}

    def feed() -> None:
        with pipe.open("w", encoding="utf-8") as out:
            out.write("# Handbook\n\n")
            out.writelines(_section(n) for n in range(SECTIONS))
            out.flush()
            outcome["released"] = stored_mid_file.wait(120)
            out.writelines(_section(n) for n in range(SECTIONS, 2 * SECTIONS))

    progress: list[int] = []

    def on_read(size: int) -> None:
        progress.append(size)
        if "released" not in outcome:
            stored_mid_file.set()

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    result = await ingest(kb, [pipe], on_read=on_read)
    writer.join(10)

    assert outcome == {"released": True}
    assert result.chunks == 2 * SECTIONS
    assert await kb.count(kb.default_collection) == 2 * SECTIONS
    assert len(progress) >= 2
    hits = await kb.search("Which room keeps the blue 1700 cables?", limit=3)
    assert hits and hits[0].chunk_id == "handbook.md#1700"


async def test_vectors_from_the_worker_process_are_the_ones_computed_inline(
    tmp_path: Path,
) -> None:
    """Large inputs compute sparse vectors in a second process: same index, same hits."""
    generated = tmp_path / "handbook.md"
    generated.write_text("".join(_section(n) for n in range(2 * WRITE_BATCH + 50)), "utf-8")
    inline = open_knowledge_base(path=tmp_path / "inline", url=None)
    worker = open_knowledge_base(path=tmp_path / "worker", url=None)
    try:
        await ingest(inline, [SAMPLE_KB_DIR, generated])
        read: list[int] = []
        result = await ingest(
            worker, [SAMPLE_KB_DIR, generated], parallel_bytes=0, on_read=read.append
        )
        assert result.chunks > 2 * WRITE_BATCH + 50  # several batches through the worker
        total = generated.stat().st_size + sum(
            f.stat().st_size for f in SAMPLE_KB_DIR.rglob("*") if f.is_file()
        )
        assert sum(read) == total  # a progress bar in bytes ends at 100 %
        for kb in (inline, worker):
            assert await kb.count(kb.default_collection) == result.chunks
        for query in (
            "How many vacation days do employees get?",
            "経費精算の締め切り",
            "Which room keeps the blue 1030 cables?",
        ):
            a = await inline.search(query, limit=5)
            b = await worker.search(query, limit=5)
            assert a and a[0].chunk_id == b[0].chunk_id, query
            # Ties may swap; Edge sums in float32, so the last digits may differ.
            assert [h.score for h in a] == pytest.approx([h.score for h in b], rel=1e-5), query
    finally:
        await inline.close()
        await worker.close()
