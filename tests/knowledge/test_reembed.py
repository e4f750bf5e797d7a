"""Issue 23 point 5: a collection ingested before an embedding model was configured is
named as lexical-only and given dense vectors by `add_dense_vectors` (what `grace reembed`
runs) from its stored text — then searched by meaning too, with nothing else changed."""

from __future__ import annotations

from pathlib import Path

import pytest
from qdrant_client import AsyncQdrantClient

from agent.errors import InvalidInputError
from agent.knowledge.ingest import SAMPLE_KB_DIR, ingest_paths
from agent.knowledge.qdrant_kb import QdrantKnowledgeBase, open_knowledge_base
from agent.knowledge.qdrant_writes import REEMBED_SUFFIX
from tests.knowledge.test_qdrant_kb import ConceptEmbedder, sources_of

HOLIDAY = "holiday leave"  # no word in common with 休暇制度.md: only meaning finds it


def _open(path: Path, engine: str, embedder: ConceptEmbedder | None) -> QdrantKnowledgeBase:
    if engine == "edge":
        return open_knowledge_base(path=path, url=None, embedder=embedder)
    client = AsyncQdrantClient(path=str(path))
    return QdrantKnowledgeBase(client=client, embedder=embedder, in_process_index=True)


@pytest.mark.parametrize("engine", ["edge", "local-mode"])
async def test_reembed_adds_dense_vectors_to_a_lexical_collection(
    tmp_path: Path, engine: str
) -> None:
    path = tmp_path / "q"
    lexical = _open(path, engine, None)
    try:
        await ingest_paths(lexical, [SAMPLE_KB_DIR])
        chunks = await lexical.count("grace_docs")
        before = {s: d.ids for s, d in (await lexical.documents("grace_docs")).items()}
        stamp = await lexical.lexical_version("grace_docs")
        assert await lexical.collections_lacking_dense() == [], "no model: nothing to say"
        with pytest.raises(InvalidInputError, match="GOOGLE_API_KEY"):
            await lexical.add_dense_vectors("grace_docs")
    finally:
        await lexical.close()

    embedder = ConceptEmbedder()
    kb = _open(path, engine, embedder)
    try:
        assert await kb.lacks_dense("grace_docs")
        assert await kb.collections_lacking_dense() == ["grace_docs"]
        assert "休暇制度.md" not in sources_of(await kb.search(HOLIDAY, limit=10))

        assert await kb.add_dense_vectors("grace_docs") == chunks

        assert not await kb.lacks_dense("grace_docs")
        assert await kb.collections() == ["grace_docs"], "the working copy is gone"
        assert await kb.count("grace_docs") == chunks
        after = {s: d.ids for s, d in (await kb.documents("grace_docs")).items()}
        assert {s: sorted(i) for s, i in after.items()} == {s: sorted(i) for s, i in before.items()}
        assert await kb.lexical_version("grace_docs") == stamp
        hits = sources_of(await kb.search(HOLIDAY, limit=10))
        assert "休暇制度.md" in hits and "vacation-policy.md" in hits
        assert await kb.add_dense_vectors("grace_docs") == 0, "twice is a no-op"
    finally:
        await kb.close()


async def test_reembed_finishes_from_the_copy_when_interrupted(tmp_path: Path) -> None:
    """Killed after the original was removed, before the copy was moved back: the next
    run finishes the move (the copy already has the dense vectors)."""
    path = tmp_path / "q"
    lexical = _open(path, "edge", None)
    try:
        await ingest_paths(lexical, [SAMPLE_KB_DIR / "vacation-policy.md"])
        chunks = await lexical.count("grace_docs")
    finally:
        await lexical.close()
    embedder = ConceptEmbedder()
    kb = _open(path, "edge", embedder)
    try:
        info = await kb._collection_info("grace_docs")
        copy = "grace_docs" + REEMBED_SUFFIX
        await kb._create_like(copy, info.metadata)
        await kb._copy_points("grace_docs", copy, embed=True)
        await kb._drop("grace_docs")  # the process dies here
        calls = embedder.calls

        assert await kb.add_dense_vectors("grace_docs") == chunks
        assert embedder.calls == calls, "nothing embedded twice"
        assert await kb.collections() == ["grace_docs"]
        assert not await kb.lacks_dense("grace_docs")
    finally:
        await kb.close()
