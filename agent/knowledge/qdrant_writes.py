"""The write side of the knowledge base on Qdrant, used by ingestion (`ingest.py`).

Chunks are stored with their sparse vector (and a dense one when an embedding model is
configured), the tokeniser version they were made with, and the document facts version
resolution needs (`versions.py`); `documents` reads those back in one scroll, and
`mark_superseded` flags an older copy of a document. Every write drops the collection's
in-process sparse index, which is rebuilt on the next search.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agent.embedding import embed_documents  # gemini: task types
from agent.errors import InvalidInputError
from agent.knowledge.chunks import Chunk
from agent.knowledge.engine import speed_up_local_mode_commits
from agent.knowledge.qdrant_collections import DENSE_VECTOR, SPARSE_VECTOR, QdrantCollections
from agent.knowledge.store import (
    FieldMatch,
    Filter,
    NewPoint,
    ScrollRequest,
    SparseVector,
    StoredPoint,
    every_point,
)
from agent.knowledge.tokenize import LEXICAL_VERSION
from agent.knowledge.vectors import SparseValues, chunk_sparse_vector
from agent.knowledge.versions import DocumentInfo

log = logging.getLogger(__name__)

REEMBED_SUFFIX = "__reembed"
"""`add_dense_vectors` copies a collection here while it embeds it."""
EMBED_BATCH = 100  # gemini: the API takes up to 100 texts per request
UPSERT_BATCH = 256
SCROLL_BATCH = 1024
_DOCUMENT_FIELDS = [
    "source",
    "doc_key",
    "doc_title",
    "name_date",
    "text_date",
    "superseded_by",
    "lexical_version",
    "text_hash",
    "title",
    "chunk_index",
]


@dataclass
class StoredDocument:
    """One source as stored: its point ids and what version resolution knows of it."""

    ids: list[str]
    info: DocumentInfo | None
    superseded_by: str | None = None
    lexical_version: int | None = None
    """The oldest `LEXICAL_VERSION` among its chunks (0: indexed before stamps existed)."""
    hashes: dict[str, str] = field(default_factory=dict)
    """Point id → `Chunk.text_hash`, for chunks stored with one."""
    sections: dict[int, str] = field(default_factory=dict)
    """Chunk index → its heading trail (an FAQ row's question): what the document
    answers, for the assistant pane's suggested prompts."""


class QdrantWrites(QdrantCollections):
    """Storing, listing, flagging and deleting chunks; searched by `QdrantKnowledgeBase`."""

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
                        "page": chunk.page,
                        "url": chunk.url,
                        "text_hash": chunk.text_hash,
                        "verified": chunk.verified.model_dump(mode="json")
                        if chunk.verified is not None
                        else None,
                    },
                )
            )
        self._indexes.pop(collection, None)
        self._tune_local_storage(collection)
        with self._store_errors(f"writing {len(points)} chunks to {collection!r}"):
            for start in range(0, len(points), UPSERT_BATCH):
                await self._client.upsert(collection, points[start : start + UPSERT_BATCH])
        return len(points)

    async def add_dense_vectors(self, collection: str) -> int:
        """Give a collection built without dense vectors (`lacks_dense`) the configured
        model's, from the text stored with each chunk: no file is read again. Returns
        how many chunks were embedded (0: it had them already).

        Qdrant cannot add a named vector to an existing collection, so the points are
        copied, with their new dense vectors, into `<name>__reembed`, then the collection
        is made again with a dense vector and the copy moved back. Interrupted after the
        original was removed, a second run finishes from the copy."""
        if self._embedder is None:
            raise InvalidInputError(
                "no embedding model is configured: set GOOGLE_API_KEY (Gemini's "
                "embeddings) or GRACE_EMBEDDER=use-m3, then run this again"
            )
        copy = collection + REEMBED_SUFFIX
        with self._store_errors(f"looking up collection {copy!r}"):
            leftover = await self._client.collection_exists(copy)
        original = await self._exists(collection)
        if not original and not leftover:
            await self._require(collection)  # names the known collections
        embedded = 0
        if original:
            if not await self.lacks_dense(collection):
                return 0
            info = await self._collection_info(collection)
            if leftover:  # a run interrupted while copying: start the copy again
                await self._drop(copy)
            await self._create_like(copy, info.metadata)
            embedded = await self._copy_points(collection, copy, embed=True)
            await self._drop(collection)
        info = await self._collection_info(copy)
        await self._create_like(collection, info.metadata)
        moved = await self._copy_points(copy, collection, embed=False)
        await self._drop(copy)
        self._warned_no_dense.discard(collection)
        log.info("added dense vectors to %d chunks of %s", moved, collection)
        return embedded or moved

    async def _create_like(self, name: str, metadata: dict[str, Any]) -> None:
        """A new collection with sparse and dense vectors and `metadata` (the original's
        index format stamp: re-embedding changes nothing in the sparse vectors)."""
        assert self._embedder is not None
        with self._store_errors(f"creating collection {name!r}"):
            await self._client.create_collection(
                name,
                dense={DENSE_VECTOR: self._embedder.dimension},
                sparse=[SPARSE_VECTOR],
                idf=True,
            )
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # local mode: no effect
                await self._client.create_keyword_index(name, "source")
        if metadata:
            with self._store_errors(f"stamping collection {name!r}"):
                await self._client.update_collection(name, metadata=metadata)
        self._layouts.pop(name, None)

    async def _drop(self, name: str) -> None:
        with self._store_errors(f"removing collection {name!r}"):
            await self._client.delete_collection(name)
        self._layouts.pop(name, None)
        self._indexes.pop(name, None)

    async def _copy_points(self, source: str, target: str, *, embed: bool) -> int:
        """Every point of `source` into `target`, embedding its stored text when `embed`
        (a batch at a time: memory stays flat whatever the collection's size)."""
        copied, offset = 0, None
        while True:
            with self._store_errors(f"reading {source!r}"):
                records, offset = await self._client.scroll(
                    source, ScrollRequest(limit=EMBED_BATCH, offset=offset, with_vectors=True)
                )
            if records:
                await self._copy_batch(records, target, embed=embed)
                copied += len(records)
            if offset is None:
                return copied

    async def _copy_batch(self, records: list[StoredPoint], target: str, *, embed: bool) -> None:
        dense: list[list[float]] | None = None
        if embed:
            assert self._embedder is not None
            texts = [str(r.payload.get("text", "")) for r in records]
            titles = [str(r.payload.get("source", "")) for r in records]
            dense = await embed_documents(self._embedder, texts, titles)
        points = []
        for i, record in enumerate(records):
            vector = dict(record.vector or {})
            if dense is not None:
                vector[DENSE_VECTOR] = dense[i]
            points.append(NewPoint(id=record.id, vector=vector, payload=record.payload))
        with self._store_errors(f"writing {len(points)} chunks to {target!r}"):
            await self._client.upsert(target, points)

    def _tune_local_storage(self, collection: str) -> None:
        """Cheaper commits for qdrant-client's local mode, once per collection (see
        `engine.speed_up_local_mode_commits`); nothing to do on any other engine."""
        if not self._in_process_index or collection in self._tuned:
            return
        self._tuned.add(collection)
        speed_up_local_mode_commits(self._client, collection)

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
        request = ScrollRequest(limit=SCROLL_BATCH, with_payload=list(_DOCUMENT_FIELDS))
        with self._store_errors(f"reading {collection!r}"):
            async for record in every_point(self._client, collection, request):
                payload = record.payload
                source = str(payload.get("source", ""))
                document = found.setdefault(source, StoredDocument(ids=[], info=None))
                document.ids.append(str(record.id))
                if isinstance(text_hash := payload.get("text_hash"), str):
                    document.hashes[str(record.id)] = text_hash
                index, title = payload.get("chunk_index"), payload.get("title")
                if isinstance(index, int) and isinstance(title, str) and title:
                    document.sections[index] = title
                document.info = _merge_info(document.info, _document_info(payload))
                document.superseded_by = payload.get("superseded_by") or None
                version = payload.get("lexical_version")
                version = version if isinstance(version, int) else 0
                known = document.lexical_version
                document.lexical_version = version if known is None else min(known, version)
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
