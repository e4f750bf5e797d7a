"""The knowledge base on Qdrant: hybrid (sparse BM25 + optional dense) search fused with RRF.

One class serves the embedded engine (the default: Qdrant Edge in-process, no server,
one process per directory; `edge_client.py`) and a Qdrant server (`QDRANT_URL`, through
qdrant-client in `server_client.py`, imported only then: it takes a second to load).
Both speak `store.VectorStore`. qdrant-client's own local mode still works
(`client=AsyncQdrantClient(path=...)`, with `in_process_index=True`) but is no longer the
default: it keeps every point in memory and searches by brute force in Python.

Every collection has a named sparse vector "sparse" with Qdrant's IDF modifier. When a
real embedding model is configured, it also has a named dense vector "dense" (cosine) and
searches fuse both with Reciprocal Rank Fusion. Hits are then re-ranked with the seed's
keyword rule (kanji/katakana runs, Latin content words), and every hit gets a 0–1
similarity so the confidence scorer can compare results across backends.
"""

from __future__ import annotations

import contextlib
import logging
import math
import sqlite3
import sys
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent.embedding import (  # gemini: task types, query deadline
    dense_only_keep,
    embed_documents,
    embed_query,
)
from agent.errors import (
    GraceError,
    InvalidInputError,
    KnowledgeBaseLockedError,
    VectorStoreError,
)
from agent.knowledge.chunks import Chunk
from agent.knowledge.edge_client import EdgeClient, EdgeLockedError
from agent.knowledge.lexical import QueryTerms, query_sparse_vector
from agent.knowledge.local_migration import has_local_mode_data, migrate_local_mode
from agent.knowledge.store import (
    RRF,
    CollectionInfo,
    FieldMatch,
    Filter,
    NewPoint,
    Prefetch,
    SparseVector,
    StoreResponseError,
    StoreUnreachableError,
    VectorStore,
)
from agent.knowledge.tokenize import LEXICAL_VERSION
from agent.knowledge.vectors import SparseValues, chunk_sparse_vector
from agent.knowledge.versions import DocumentInfo
from agent.ports import Embedder
from agent.schemas import Source

if TYPE_CHECKING:
    from qdrant_client import AsyncQdrantClient

    from agent.knowledge.sparse_index import SparseIndex

__all__ = [
    "DENSE_VECTOR",
    "SPARSE_VECTOR",
    "QdrantKnowledgeBase",
    "StoredDocument",
    "open_knowledge_base",
]

log = logging.getLogger(__name__)

SPARSE_VECTOR = "sparse"
DENSE_VECTOR = "dense"
CANDIDATE_FACTOR = 3
"""Fetch this many times `limit` candidates, so re-ranking has something to choose from."""
MIN_CANDIDATES = 10
KEYWORD_BOOST = 0.5
"""A hit containing all the query's keywords ranks as if its score were 1.5× higher."""
DENSE_WEIGHT = 0.5
"""Share of the dense cosine in a hybrid hit's similarity; the rest is lexical overlap."""
LEXICAL_VERSION_KEY = "grace_lexical_version"
"""Collection metadata key holding the `LEXICAL_VERSION` its sparse vectors were made with
(Qdrant collection metadata on a server; `grace.json` beside the shards on Edge)."""
EDGE_DIR = "edge"
"""Where the embedded engine keeps its shards inside the knowledge-base directory."""
EMBED_BATCH = 100  # gemini: the API takes up to 100 texts per request
UPSERT_BATCH = 256
SCROLL_BATCH = 1024
STALE_FACTOR = 0.8
"""An older copy of a document ranks as if its score were this much lower: the current
version comes first, the old one stays visible (its differing values matter)."""
_DOCUMENT_FIELDS = [
    "source",
    "doc_key",
    "doc_title",
    "name_date",
    "text_date",
    "superseded_by",
    "lexical_version",
]


@dataclass
class StoredDocument:
    """One source as stored: its point ids and what version resolution knows of it."""

    ids: list[str]
    info: DocumentInfo | None
    superseded_by: str | None = None
    lexical_version: int | None = None
    """The oldest `LEXICAL_VERSION` among its chunks (0: indexed before stamps existed)."""


@dataclass(frozen=True)
class _Candidate:
    """A search hit before re-ranking, whichever path found it."""

    point_id: str
    score: float
    payload: dict[str, Any]
    indices: frozenset[int] | None
    """The hit's sparse indices (its tokens), when known: no need to tokenise it again."""
    vector: Any = None


@dataclass(frozen=True)
class _Layout:
    """Which vectors a collection was created with."""

    dense_size: int | None


class QdrantKnowledgeBase:
    """`KnowledgeBase` (agent/ports.py) on Qdrant, plus the write side used by ingestion."""

    def __init__(
        self,
        *,
        client: VectorStore | AsyncQdrantClient,
        embedder: Embedder | None,
        default_collection: str = "grace_docs",
        location: str = "",
        in_process_index: bool = False,
    ) -> None:
        """`in_process_index`: keep an inverted index of the sparse vectors in memory and
        search it instead of asking Qdrant (local mode only: it has no index of its own,
        and no other process can write to its directory). An `AsyncQdrantClient` is
        wrapped in `ServerClient`."""
        self._client = _as_store(client)
        self._in_process_index = in_process_index
        self._indexes: dict[str, SparseIndex] = {}
        self._tuned: set[str] = set()
        self._embedder = embedder
        self._default_collection = default_collection
        self._location = location or "Qdrant"
        self._layouts: dict[str, _Layout] = {}
        self._warned_no_dense: set[str] = set()
        self._checked_format: set[str] = set()

    # ------------------------------------------------------------------ properties

    @property
    def default_collection(self) -> str:
        return self._default_collection

    @property
    def embedder(self) -> Embedder | None:
        return self._embedder

    @property
    def location(self) -> str:
        """Where the data lives (a directory or a URL), for messages and `/grace stats`."""
        return self._location

    # ------------------------------------------------------------------ errors

    @contextlib.contextmanager
    def _store_errors(self, action: str) -> Iterator[None]:
        """Turn the store's and network exceptions into `VectorStoreError` with context."""
        try:
            yield
        except GraceError:
            raise
        except StoreResponseError as exc:
            raise VectorStoreError(
                f"Qdrant ({self._location}) answered HTTP {exc.status_code} "
                f"{exc.reason} while {action}: {exc.detail}".rstrip(": ")
            ) from exc
        except (StoreUnreachableError, OSError, TimeoutError) as exc:
            raise VectorStoreError(
                f"Qdrant ({self._location}) is unreachable while {action}: "
                f"{exc or type(exc).__name__}. Check that the server is running and "
                f"QDRANT_URL is right."
            ) from exc
        except (ValueError, RuntimeError) as exc:
            raise VectorStoreError(
                f"Qdrant ({self._location}) failed while {action}: {exc}"
            ) from exc

    # ------------------------------------------------------------------ collections

    async def collections(self) -> list[str]:
        """Names of all collections, sorted."""
        with self._store_errors("listing collections"):
            names = await self._client.collection_names()
        return sorted(names)

    async def _exists(self, collection: str) -> bool:
        if collection in self._layouts:
            return True
        with self._store_errors(f"looking up collection {collection!r}"):
            return await self._client.collection_exists(collection)

    async def _layout(self, collection: str) -> _Layout:
        """The collection's vector layout (cached: it never changes after creation)."""
        layout = self._layouts.get(collection)
        if layout is not None:
            return layout
        await self._collection_info(collection)
        return self._layouts[collection]

    async def _collection_info(self, collection: str) -> CollectionInfo:
        """The collection's configuration and metadata, read now; its layout is cached
        on the way (a first search reads both: one read, not two)."""
        with self._store_errors(f"reading collection {collection!r}"):
            info = await self._client.get_collection(collection)
        self._layouts[collection] = _Layout(dense_size=info.dense.get(DENSE_VECTOR))
        return info

    async def _require(self, collection: str) -> None:
        """Raise `InvalidInputError` naming the known collections when one is missing."""
        if await self._exists(collection):
            return
        known = await self.collections()
        listing = ", ".join(known) if known else "none yet — run `grace ingest PATH` first"
        raise InvalidInputError(f"unknown collection {collection!r}; known collections: {listing}")

    async def ensure_collection(self, collection: str) -> None:
        """Create the collection (sparse always, dense when an embedder is set) if missing."""
        if await self._exists(collection):
            return
        vectors: dict[str, int] = {}
        if self._embedder is not None:
            vectors[DENSE_VECTOR] = self._embedder.dimension
        try:
            with self._store_errors(f"creating collection {collection!r}"):
                await self._client.create_collection(
                    collection, dense=vectors, sparse=[SPARSE_VECTOR], idf=True
                )
        except VectorStoreError:
            # Another writer may have created it in the meantime: that is fine.
            self._layouts.pop(collection, None)
            with self._store_errors(f"looking up collection {collection!r}"):
                if not await self._client.collection_exists(collection):
                    raise
            return
        with warnings.catch_warnings(), self._store_errors(f"indexing {collection!r}"):
            # Speeds up delete-by-source on a server; local mode says it has no effect.
            warnings.simplefilter("ignore", UserWarning)
            await self._client.create_keyword_index(collection, "source")
        await self.stamp_lexical_version(collection)
        log.info("created collection %s (dense=%s)", collection, bool(vectors))

    async def lexical_version(self, collection: str) -> int | None:
        """The `LEXICAL_VERSION` the collection was indexed with (None: not stamped, i.e.
        ingested before stamps existed)."""
        info = await self._collection_info(collection)
        value = info.metadata.get(LEXICAL_VERSION_KEY)
        return int(value) if isinstance(value, int | str) and str(value).isdigit() else None

    async def stamp_lexical_version(self, collection: str) -> None:
        """Record that every document in the collection was indexed by today's rules."""
        try:
            with self._store_errors(f"stamping collection {collection!r}"):
                await self._client.update_collection(
                    collection, metadata={LEXICAL_VERSION_KEY: LEXICAL_VERSION}
                )
        except VectorStoreError as exc:  # a server older than Qdrant 1.16 has no metadata
            log.warning("could not record the index format of %s: %s", collection, exc)
            return
        self._checked_format.add(collection)

    async def index_is_stale(self, collection: str) -> bool:
        """Whether the collection was indexed by older tokenisation rules."""
        version = await self.lexical_version(collection)
        return version is None or version < LEXICAL_VERSION

    async def warn_if_stale(self, collection: str) -> None:
        """Warn once per collection when its sparse vectors predate today's tokeniser:
        queries then miss terms whose spelling changed. Never stops answering."""
        if collection in self._checked_format:
            return
        try:
            stale = await self.index_is_stale(collection)
        except VectorStoreError as exc:
            log.debug("could not read the index format of %s: %s", collection, exc)
            return
        self._checked_format.add(collection)
        if stale:
            log.warning(
                "the knowledge base collection %s was indexed by an older GRACE; some "
                "searches will miss passages until it is re-indexed: run `grace ingest "
                "PATH... --collection %s` with all of its documents",
                collection,
                collection,
            )

    async def _dense_size(self, collection: str) -> int | None:
        """Dense dimension to use for this collection, or None for sparse-only."""
        layout = await self._layout(collection)
        if self._embedder is None or layout.dense_size is None:
            if self._embedder is not None and collection not in self._warned_no_dense:
                self._warned_no_dense.add(collection)
                log.warning(
                    "collection %s has no dense vector; searching it lexically only "
                    "(re-ingest into a new collection to use %s)",
                    collection,
                    self._embedder.name,
                )
            return None
        if layout.dense_size != self._embedder.dimension:
            raise VectorStoreError(
                f"collection {collection!r} stores {layout.dense_size}-dimensional vectors "
                f"but the embedding model {self._embedder.name} makes "
                f"{self._embedder.dimension}-dimensional ones; re-ingest into a new "
                f"collection or configure the model it was built with"
            )
        return layout.dense_size

    # ------------------------------------------------------------------ write side

    async def count(self, collection: str) -> int:
        """Number of chunks in the collection (0 when it does not exist)."""
        if not await self._exists(collection):
            return 0
        with self._store_errors(f"counting {collection!r}"):
            return await self._client.count(collection)

    async def delete_source(self, collection: str, source: str) -> int:
        """Remove every chunk of one source file; returns how many were removed."""
        if not await self._exists(collection):
            return 0
        selector = Filter(must=[FieldMatch(key="source", value=source)])
        with self._store_errors(f"deleting {source!r} from {collection!r}"):
            found = await self._client.count(collection, count_filter=selector)
            if found:
                self._indexes.pop(collection, None)
                await self._client.delete_matching(collection, selector)
        return found

    async def upsert_chunks(
        self,
        collection: str,
        chunks: Sequence[Chunk],
        *,
        sparse: Sequence[SparseValues] | None = None,
        lexical_version: int = LEXICAL_VERSION,
    ) -> int:
        """Store chunks (creating the collection if needed); returns how many were written.

        `sparse`: the chunks' `chunk_sparse_vector`s when already computed (ingest
        computes them in another process while it reads on); `lexical_version`: the
        tokeniser version they were made with, stored with each chunk."""
        await self.ensure_collection(collection)
        if not chunks:
            return 0
        dense_size = await self._dense_size(collection)
        dense: list[list[float]] | None = None
        if dense_size is not None and self._embedder is not None:
            dense = []
            for start in range(0, len(chunks), EMBED_BATCH):
                batch = chunks[start : start + EMBED_BATCH]
                texts, titles = [c.text for c in batch], [c.source for c in batch]
                dense.extend(await embed_documents(self._embedder, texts, titles))
        points: list[NewPoint] = []
        for i, chunk in enumerate(chunks):
            indices, values = (
                sparse[i] if sparse is not None else chunk_sparse_vector(chunk.title, chunk.text)
            )
            vector: dict[str, list[float] | SparseVector] = {
                SPARSE_VECTOR: SparseVector(indices=list(indices), values=list(values))
            }
            if dense is not None:
                vector[DENSE_VECTOR] = dense[i]
            points.append(
                NewPoint(
                    id=chunk.point_id,
                    vector=vector,
                    payload={
                        "source": chunk.source,
                        "chunk_id": chunk.chunk_id,
                        "chunk_index": chunk.index,
                        "title": chunk.title,
                        "path": chunk.path,
                        "text": chunk.text,
                        "doc_title": chunk.doc_title,
                        "doc_key": chunk.doc_key,
                        "name_date": chunk.name_date,
                        "text_date": chunk.text_date,
                        "superseded_by": chunk.superseded_by,
                        "lexical_version": lexical_version,
                    },
                )
            )
        self._indexes.pop(collection, None)
        self._tune_local_storage(collection)
        with self._store_errors(f"writing {len(points)} chunks to {collection!r}"):
            for start in range(0, len(points), UPSERT_BATCH):
                await self._client.upsert(collection, points[start : start + UPSERT_BATCH])
        return len(points)

    def _tune_local_storage(self, collection: str) -> None:
        """Local mode commits every point to SQLite on its own, each with an fsync: 2–30 ms
        per chunk on a busy disk, minutes for a large file. WAL with synchronous=NORMAL
        makes those commits cheap and stays safe if the process crashes (a power cut may
        lose the last writes, which re-running `grace ingest` restores). Reaches into
        qdrant-client's local storage; does nothing when that is not there (a server)."""
        if not self._in_process_index or collection in self._tuned:
            return
        self._tuned.add(collection)
        local = getattr(getattr(self._client, "client", None), "_client", None)
        stored = getattr(local, "collections", {}).get(collection)
        connection = getattr(getattr(stored, "storage", None), "storage", None)
        if isinstance(connection, sqlite3.Connection):
            try:
                connection.execute("PRAGMA journal_mode=WAL")
                connection.execute("PRAGMA synchronous=NORMAL")
            except sqlite3.Error as exc:
                log.warning("could not tune the local storage of %s: %s", collection, exc)

    async def delete_points(self, collection: str, ids: Sequence[str]) -> None:
        """Remove chunks by point id (ids that do not exist are ignored)."""
        if not ids or not await self._exists(collection):
            return
        self._indexes.pop(collection, None)
        self._tune_local_storage(collection)
        with self._store_errors(f"deleting {len(ids)} chunks from {collection!r}"):
            for start in range(0, len(ids), UPSERT_BATCH):
                await self._client.delete_ids(collection, list(ids[start : start + UPSERT_BATCH]))

    async def documents(self, collection: str) -> dict[str, StoredDocument]:
        """Every stored source with its point ids and document facts (one scroll)."""
        if not await self._exists(collection):
            return {}
        found: dict[str, StoredDocument] = {}
        offset: Any = None
        with self._store_errors(f"reading {collection!r}"):
            while True:
                records, offset = await self._client.scroll(
                    collection,
                    limit=SCROLL_BATCH,
                    offset=offset,
                    with_payload=list(_DOCUMENT_FIELDS),
                    with_vectors=False,
                )
                for record in records:
                    payload = record.payload
                    source = str(payload.get("source", ""))
                    document = found.setdefault(source, StoredDocument(ids=[], info=None))
                    document.ids.append(str(record.id))
                    document.info = _merge_info(document.info, _document_info(payload))
                    document.superseded_by = payload.get("superseded_by") or None
                    version = payload.get("lexical_version")
                    version = version if isinstance(version, int) else 0
                    known = document.lexical_version
                    document.lexical_version = version if known is None else min(known, version)
                if offset is None:
                    break
        return found

    async def mark_superseded(
        self,
        collection: str,
        ids: Sequence[str],
        *,
        superseded_by: str | None,
    ) -> None:
        """Mark stored chunks as an older copy of `superseded_by` (None: current)."""
        payload: dict[str, Any] = {"superseded_by": superseded_by}
        if not ids:
            return
        self._indexes.pop(collection, None)
        self._tune_local_storage(collection)
        with self._store_errors(f"updating {len(ids)} chunks in {collection!r}"):
            for start in range(0, len(ids), UPSERT_BATCH):
                await self._client.set_payload(
                    collection, payload, list(ids[start : start + UPSERT_BATCH])
                )

    # ------------------------------------------------------------------ search

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
                _Candidate(point.point_id, score, point.payload, point.indices)
                for score, point in index.search(indices, values, candidates)
            ]
        else:
            found = await self._query_qdrant(name, sparse, query_vector, candidates)
        return self._rerank(found, terms, query_vector, name, limit)

    async def _query_qdrant(
        self,
        name: str,
        sparse: SparseVector,
        query_vector: list[float] | None,
        candidates: int,
    ) -> list[_Candidate]:
        """Sparse search, or sparse + dense fused with Qdrant's RRF, on Qdrant itself."""
        with self._store_errors(f"searching {name!r}"):
            if query_vector is not None:
                points = await self._client.query_points(
                    name,
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
                points = await self._client.query_points(
                    name,
                    query=sparse,
                    using=SPARSE_VECTOR,
                    limit=candidates,
                    with_payload=True,
                    with_vectors=[SPARSE_VECTOR],
                )
        return [
            _Candidate(
                str(point.id),
                float(point.score),
                point.payload,
                _sparse_indices(point.vector),
                point.vector,
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
        offset: Any = None
        with self._store_errors(f"reading {name!r}"):
            while True:
                records, offset = await self._client.scroll(
                    name,
                    limit=SCROLL_BATCH,
                    offset=offset,
                    with_payload=True,
                    with_vectors=[SPARSE_VECTOR],
                )
                for record in records:
                    vector = (record.vector or {}).get(SPARSE_VECTOR)
                    if isinstance(vector, SparseVector):
                        rows.append((record.id, record.payload, vector.indices, vector.values))
                if offset is None:
                    break
        index = SparseIndex(rows)
        self._indexes[name] = index
        return index

    def _rerank(
        self,
        candidates: Sequence[_Candidate],
        terms: QueryTerms,
        query_vector: list[float] | None,
        collection: str,
        limit: int,
    ) -> list[Source]:
        """Boost hits containing the query's keywords, drop hits sharing no word with it,
        rank older copies below their current version and drop their passages that say
        exactly what a better-ranked one says."""
        ranked: list[tuple[float, int, Source]] = []
        # a hit sharing no word with the query is kept when its cosine reaches the
        # model's threshold (e.g. an English question and a Japanese passage)
        keep = dense_only_keep(self._embedder) if self._embedder is not None else 1.0
        for position, hit in enumerate(candidates):
            payload = hit.payload
            text = str(payload.get("text", ""))
            match = terms.match(text, text_indices=hit.indices)
            cosine = _dense_cosine(query_vector, hit.vector)
            if not match.shares_token and (cosine is None or cosine < keep):
                continue
            similarity = match.similarity
            if cosine is not None:
                similarity = DENSE_WEIGHT * max(0.0, cosine) + (1 - DENSE_WEIGHT) * similarity
            boosted = hit.score * (1.0 + KEYWORD_BOOST * match.keyword_fraction)
            superseded_by = payload.get("superseded_by") or None
            if superseded_by:
                boosted *= STALE_FACTOR
            source = Source(
                source=str(payload.get("source", "")),
                text=text,
                chunk_id=str(payload.get("chunk_id", hit.point_id)),
                score=hit.score,
                similarity=round(min(1.0, max(0.0, similarity)), 4),
                collection=collection,
                vector=_stored_dense(hit.vector),  # gemini: reused for source agreement
                doc_title=str(payload.get("doc_title") or ""),
                doc_date=payload.get("name_date") or payload.get("text_date") or None,
                stale=bool(superseded_by),
                superseded_by=superseded_by,
            )
            ranked.append((boosted, position, source))
        ranked.sort(key=lambda item: (-item[0], item[1]))
        kept: list[Source] = []
        seen: set[str] = set()
        for _, _, source in ranked:
            body = _body(source.text)
            if source.stale and body in seen:
                continue
            seen.add(body)
            kept.append(source)
            if len(kept) == limit:
                break
        return kept

    # ------------------------------------------------------------------ lifecycle

    async def close(self) -> None:
        """Release the client (and, in local mode, the directory lock)."""
        with self._store_errors("closing"):
            await self._client.close()

    async def __aenter__(self) -> QdrantKnowledgeBase:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()


def _stored_dense(stored: Any) -> list[float] | None:
    """A hit's stored dense vector, when the search fetched it."""
    vector = stored.get(DENSE_VECTOR) if isinstance(stored, dict) else None
    return [float(v) for v in vector] if isinstance(vector, list) else None


def _body(text: str) -> str:
    return " ".join(text.split())


def _document_info(payload: dict[str, Any]) -> DocumentInfo | None:
    """The document facts stored with a chunk (None for chunks ingested before them)."""
    if "doc_key" not in payload:
        return None
    return DocumentInfo(
        source=str(payload.get("source", "")),
        key=str(payload.get("doc_key") or ""),
        title=str(payload.get("doc_title") or ""),
        name_date=payload.get("name_date") or None,
        text_date=payload.get("text_date") or None,
    )


def _merge_info(known: DocumentInfo | None, more: DocumentInfo | None) -> DocumentInfo | None:
    """One document's facts from its chunks: a very long file's first chunks were written
    before its title or revision date were known, so take the fullest of each."""
    if known is None or more is None:
        return known or more
    dates = [d for d in (known.text_date, more.text_date) if d]
    return DocumentInfo(
        source=known.source,
        key=known.key or more.key,
        title=known.title or more.title,
        name_date=known.name_date or more.name_date,
        text_date=max(dates) if dates else None,
    )


def _sparse_indices(stored: Any) -> frozenset[int] | None:
    """The sparse indices of a hit returned with its vectors, if any."""
    if isinstance(stored, dict):
        vector = stored.get(SPARSE_VECTOR)
        if isinstance(vector, SparseVector):
            return frozenset(vector.indices)
    return None


def _dense_cosine(query_vector: list[float] | None, stored: Any) -> float | None:
    """Cosine between the query vector and a hit's stored dense vector, if both exist."""
    if query_vector is None or not isinstance(stored, dict):
        return None
    vector = stored.get(DENSE_VECTOR)
    if not isinstance(vector, list) or len(vector) != len(query_vector):
        return None
    dot = sum(a * b for a, b in zip(query_vector, vector, strict=True))
    norm = math.sqrt(sum(a * a for a in query_vector)) * math.sqrt(sum(b * b for b in vector))
    return dot / norm if norm else None


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
    client: VectorStore
    if url:
        from qdrant_client import AsyncQdrantClient

        from agent.knowledge.server_client import ServerClient

        server = AsyncQdrantClient(
            url=url,
            api_key=api_key or None,
            timeout=max(1, math.ceil(timeout)),
            check_compatibility=False,  # a blocking HTTP call at construction otherwise
        )
        client = ServerClient(server)
        location = url
    elif path is not None:
        directory = Path(path).expanduser()
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise VectorStoreError(
                f"cannot create the knowledge base directory {directory}: {exc.strerror or exc}"
            ) from exc
        client = _open_embedded(directory)
        location = str(directory)
    else:
        client = EdgeClient(None)
        location = ":memory:"
    return QdrantKnowledgeBase(
        client=client,
        embedder=embedder,
        default_collection=default_collection,
        location=location,
    )


def _as_store(client: VectorStore | AsyncQdrantClient) -> VectorStore:
    """The client as a `VectorStore`: an `AsyncQdrantClient` (a server, or local mode as
    tests and the retrieval benchmark open it) is wrapped; anything else already is one.
    qdrant-client is not imported to find out: if it is not loaded, this is not one."""
    qdrant = sys.modules.get("qdrant_client")
    if qdrant is not None and isinstance(client, qdrant.AsyncQdrantClient):
        from agent.knowledge.server_client import ServerClient

        return ServerClient(client)
    return client  # type: ignore[return-value]


def _locked(directory: Path) -> KnowledgeBaseLockedError:
    return KnowledgeBaseLockedError(
        f"The knowledge base directory {directory} is already in use by another "
        f"process. The embedded knowledge base allows one process at a time per "
        f"directory. Stop the other grace process, set GRACE_DATA_DIR to a different "
        f"directory, or run a Qdrant server and set QDRANT_URL."
    )


def _open_embedded(directory: Path) -> EdgeClient:
    """The embedded engine in `directory/edge`, moving a local-mode store there first."""
    edge_root = directory / EDGE_DIR
    if not edge_root.exists() and has_local_mode_data(directory):
        try:
            migrate_local_mode(directory, edge_root)
        except RuntimeError as exc:
            if "already accessed" in str(exc):
                raise _locked(directory) from exc
            raise VectorStoreError(
                f"cannot move the knowledge base at {directory} to the embedded engine: "
                f"{exc}; run `grace ingest` again into a new GRACE_DATA_DIR"
            ) from exc
    try:
        return EdgeClient(edge_root)
    except EdgeLockedError as exc:
        raise _locked(directory) from exc
    except OSError as exc:
        raise VectorStoreError(
            f"cannot open the knowledge base at {directory}: {exc.strerror or exc}"
        ) from exc
