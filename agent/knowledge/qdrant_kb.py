"""The knowledge base on Qdrant: hybrid (sparse BM25 + optional dense) search fused with RRF.

One class serves the embedded engine (the default: Qdrant Edge in-process, no server,
one process per directory) and a Qdrant server (`QDRANT_URL`); `engine.py` opens either.
Both speak `store.VectorStore`. qdrant-client's own local mode still works
(`client=AsyncQdrantClient(path=...)`, with `in_process_index=True`) but is no longer the
default: it keeps every point in memory and searches by brute force in Python.

`QdrantKnowledgeBase` is built in layers, one module each: `qdrant_collections.py`
(client, errors, collection admin, index format), `qdrant_writes.py` (what ingestion
stores), and here the search. When a collection has dense vectors, searches fuse sparse
and dense with Reciprocal Rank Fusion; hits are then re-ranked by the query's own words
(`rerank.py`, pure text).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent.embedding import dense_only_keep, embed_query  # task types, deadline, threshold
from agent.errors import GraceError, InvalidInputError
from agent.knowledge.engine import EDGE_DIR, open_vector_store
from agent.knowledge.lexical import QueryTerms, query_sparse_vector
from agent.knowledge.qdrant_collections import (
    DENSE_VECTOR,
    LEXICAL_VERSION_KEY,
    SPARSE_VECTOR,
)
from agent.knowledge.qdrant_writes import SCROLL_BATCH, QdrantWrites, StoredDocument
from agent.knowledge.rerank import Candidate, rerank
from agent.knowledge.store import (
    RRF,
    Prefetch,
    QueryRequest,
    ScrollRequest,
    SparseVector,
    every_point,
)
from agent.ports import Embedder
from agent.schemas import Source

if TYPE_CHECKING:
    from agent.knowledge.sparse_index import SparseIndex

__all__ = [
    "DENSE_VECTOR",
    "EDGE_DIR",
    "LEXICAL_VERSION_KEY",
    "SPARSE_VECTOR",
    "QdrantKnowledgeBase",
    "StoredDocument",
    "open_knowledge_base",
]

log = logging.getLogger(__name__)

CANDIDATE_FACTOR = 3
"""Fetch this many times `limit` candidates, so re-ranking has something to choose from."""
MIN_CANDIDATES = 10


class QdrantKnowledgeBase(QdrantWrites):
    """`KnowledgeBase` (agent/ports.py) on Qdrant, plus the write side used by ingestion."""

    async def _query_vector(self, query: str) -> list[float] | None:
        """The query's dense vector; None (lexical search only) when the model fails."""
        if self._embedder is None:
            return None
        try:
            return await embed_query(self._embedder, query)
        except GraceError as exc:
            log.warning("query embedding failed, searching lexically only: %s", exc)
            return None

    async def search(
        self, query: str, *, collection: str | None = None, limit: int = 5
    ) -> list[Source]:
        """Hybrid search, re-ranked by the query's keywords; best first, at most `limit`."""
        if limit < 1:
            raise InvalidInputError(f"search limit must be at least 1, got {limit}")
        name = collection or self._default_collection
        await self._require(name)
        await self.warn_if_stale(name)
        terms = QueryTerms.from_query(query)
        if not terms.tokens and not terms.keywords:
            return []
        indices, values = query_sparse_vector(terms.tokens)
        sparse = SparseVector(indices=list(indices), values=list(values))
        candidates = max(limit * CANDIDATE_FACTOR, MIN_CANDIDATES)

        dense_size = await self._dense_size(name)
        query_vector = await self._query_vector(query) if dense_size is not None else None
        if query_vector is None and self._in_process_index:
            index = await self._sparse_index(name)
            found = [
                Candidate(point.point_id, score, point.payload, point.indices)
                for score, point in index.search(indices, values, candidates)
            ]
        else:
            found = await self._query_qdrant(name, sparse, query_vector, candidates)
        keep = dense_only_keep(self._embedder) if self._embedder is not None else 1.0
        return rerank(found, terms, query_vector, name, limit, keep)

    async def _query_qdrant(
        self,
        name: str,
        sparse: SparseVector,
        query_vector: list[float] | None,
        candidates: int,
    ) -> list[Candidate]:
        """Sparse search, or sparse + dense fused with Qdrant's RRF, on Qdrant itself."""
        with self._store_errors(f"searching {name!r}"):
            if query_vector is not None:
                request = QueryRequest(
                    prefetch=[
                        Prefetch(query=sparse, using=SPARSE_VECTOR, limit=candidates),
                        Prefetch(query=query_vector, using=DENSE_VECTOR, limit=candidates),
                    ],
                    query=RRF,
                    limit=candidates,
                    with_payload=True,
                    with_vectors=[DENSE_VECTOR, SPARSE_VECTOR],
                )
            else:
                request = QueryRequest(
                    query=sparse,
                    using=SPARSE_VECTOR,
                    limit=candidates,
                    with_payload=True,
                    with_vectors=[SPARSE_VECTOR],
                )
            points = await self._client.query_points(name, request)
        return [
            Candidate(
                str(point.id),
                float(point.score),
                point.payload,
                _sparse_indices(point.vector),
                _stored_dense(point.vector),
            )
            for point in points
        ]

    async def _sparse_index(self, name: str) -> SparseIndex:
        """The collection's in-process index, read from Qdrant on first use after a write."""
        index = self._indexes.get(name)
        if index is not None:
            return index
        from agent.knowledge.sparse_index import SparseIndex  # numpy: local mode only

        rows: list[tuple[str, dict[str, Any], list[int], list[float]]] = []
        request = ScrollRequest(limit=SCROLL_BATCH, with_vectors=[SPARSE_VECTOR])
        with self._store_errors(f"reading {name!r}"):
            async for point in every_point(self._client, name, request):
                vector = (point.vector or {}).get(SPARSE_VECTOR)
                if isinstance(vector, SparseVector):
                    rows.append((point.id, point.payload, vector.indices, vector.values))
        index = SparseIndex(rows)
        self._indexes[name] = index
        return index


def _stored_dense(stored: Any) -> list[float] | None:
    """A hit's stored dense vector, when the search fetched it."""
    vector = stored.get(DENSE_VECTOR) if isinstance(stored, dict) else None
    return [float(v) for v in vector] if isinstance(vector, list) else None


def _sparse_indices(stored: Any) -> frozenset[int] | None:
    """The sparse indices of a hit returned with its vectors, if any."""
    if isinstance(stored, dict):
        vector = stored.get(SPARSE_VECTOR)
        if isinstance(vector, SparseVector):
            return frozenset(vector.indices)
    return None


def open_knowledge_base(
    *,
    path: Path | None,
    url: str | None,
    api_key: str | None = None,
    embedder: Embedder | None = None,
    default_collection: str = "grace_docs",
    timeout: float = 10.0,
) -> QdrantKnowledgeBase:
    """Open a Qdrant server at `url`, else the embedded engine (Qdrant Edge) at `path`,
    else the embedded engine in a temporary directory removed on close.

    The embedded engine locks its directory: a second process (or a second client in the
    same process) gets `KnowledgeBaseLockedError` explaining what to do. A directory
    written by qdrant-client's local mode (before Edge) is moved to Edge on first open."""
    client, location = open_vector_store(path=path, url=url, api_key=api_key, timeout=timeout)
    return QdrantKnowledgeBase(
        client=client,
        embedder=embedder,
        default_collection=default_collection,
        location=location,
    )
