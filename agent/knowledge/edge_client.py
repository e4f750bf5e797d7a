"""The embedded knowledge-base engine: Qdrant Edge (`qdrant-edge-py`) as a
`store.VectorStore`, what `QdrantKnowledgeBase` asks of a vector store.

Qdrant Edge is the Qdrant engine in-process: a real inverted index for sparse vectors,
HNSW for dense ones, points and payloads on disk (memory-mapped). qdrant-client's local
mode is brute force in Python over points it keeps in memory: at 80,000 chunks it holds
~650 MB and ingests a 50 MB file in minutes. Figures: docs/embedded-engine.md.

Edge has no collections: one shard is one directory. A collection here is the shard in
`<root>/<name>/`, with a small `grace.json` beside it recording its dense vectors (Edge does
not report its configuration back). Like the Qdrant server's client
(`server_client.py`) it speaks that interface; unlike it, it never imports qdrant-client.

One process per directory: `<root>/.grace-edge.lock` is held (flock) while it is open.
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import qdrant_edge as qe

from agent.knowledge.store import (
    RRF,
    CollectionInfo,
    Filter,
    NewPoint,
    QueryRequest,
    ScrollRequest,
    SparseVector,
    StoredPoint,
)

__all__ = ["RRF_K", "EdgeClient", "EdgeLockedError", "create_shard"]

RRF_K = 2
"""Qdrant's default Reciprocal Rank Fusion constant (the server and local mode use 2)."""
LOCK_FILE = ".grace-edge.lock"
META_FILE = "grace.json"

T = TypeVar("T")


class EdgeLockedError(RuntimeError):
    """Another process (or another client in this one) has the directory open."""


class EdgeClient:
    """Collections of Qdrant Edge shards under one directory (`None`: a temporary one,
    removed on close — the in-memory mode of tests and the evaluator)."""

    def __init__(self, root: Path | None) -> None:
        self._temporary = root is None
        self._root = Path(tempfile.mkdtemp(prefix="grace-edge-")) if root is None else root
        self._root.mkdir(parents=True, exist_ok=True)
        self._lock = (self._root / LOCK_FILE).open("a+")
        try:
            fcntl.flock(self._lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            self._lock.close()
            raise EdgeLockedError(f"{self._root} is already accessed by another instance") from exc
        self._shards: dict[str, qe.EdgeShard] = {}
        self._changed: set[str] = set()
        """Shards written since they were opened: only they need a flush."""
        self._run_lock = asyncio.Lock()

    # ------------------------------------------------------------------ plumbing

    async def _run(self, work: Callable[[], T]) -> T:
        """Run a blocking Edge call off the event loop, one at a time."""
        async with self._run_lock:
            return await asyncio.to_thread(work)

    def _dir(self, name: str) -> Path:
        if not name or "/" in name or name.startswith("."):
            raise ValueError(f"invalid collection name {name!r}")
        return self._root / name

    def _names(self) -> list[str]:
        return sorted(
            p.name for p in self._root.iterdir() if p.is_dir() and (p / META_FILE).is_file()
        )

    def _shard(self, name: str) -> qe.EdgeShard:
        shard = self._shards.get(name)
        if shard is None:
            directory = self._dir(name)
            if not (directory / META_FILE).is_file():
                raise ValueError(f"Collection {name} not found")
            shard = qe.EdgeShard.load(str(directory))
            self._shards[name] = shard
        return shard

    def _changing(self, name: str) -> qe.EdgeShard:
        """The shard, about to be written."""
        shard = self._shard(name)
        self._changed.add(name)
        return shard

    # ------------------------------------------------------------------ collections

    async def collection_names(self) -> list[str]:
        return self._names()

    async def collection_exists(self, name: str) -> bool:
        return (self._dir(name) / META_FILE).is_file()

    async def get_collection(self, name: str) -> CollectionInfo:
        meta = self._meta(name)
        dense = {str(k): int(v) for k, v in (meta.get("dense") or {}).items()}
        return CollectionInfo(dense=dense, metadata=dict(meta.get("metadata") or {}))

    async def update_collection(self, name: str, *, metadata: dict[str, Any]) -> None:
        """Merge `metadata` into the collection's metadata (kept in its `grace.json`),
        like a Qdrant server's collection metadata."""
        meta = self._meta(name)
        meta["metadata"] = {**(meta.get("metadata") or {}), **metadata}
        path = self._dir(name) / META_FILE
        temporary = path.with_suffix(".tmp")
        temporary.write_text(json.dumps(meta), encoding="utf-8")
        temporary.replace(path)

    def _meta(self, name: str) -> dict[str, Any]:
        path = self._dir(name) / META_FILE
        if not path.is_file():
            raise ValueError(f"Collection {name} not found")
        meta: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        return meta

    async def create_collection(
        self, name: str, *, dense: dict[str, int], sparse: Sequence[str], idf: bool = True
    ) -> None:
        directory = self._dir(name)
        if (directory / META_FILE).is_file():
            raise ValueError(f"Collection {name} already exists")
        shard = await self._run(
            lambda: create_shard(directory, dense=dense, sparse=list(sparse), idf=idf)
        )
        self._shards[name] = shard
        self._changed.add(name)

    async def delete_collection(self, name: str) -> None:
        """Close the shard and remove its directory (nothing when there is none)."""
        directory = self._dir(name)
        shard = self._shards.pop(name, None)
        self._changed.discard(name)
        if shard is not None:
            await self._run(shard.close)
        await self._run(lambda: shutil.rmtree(directory, ignore_errors=True))

    async def create_keyword_index(self, name: str, field_name: str) -> None:
        shard = self._changing(name)
        schema = qe.PayloadSchemaType.Keyword
        await self._run(
            lambda: shard.update(qe.UpdateOperation.create_field_index(field_name, schema))
        )

    # ------------------------------------------------------------------ points

    async def count(self, name: str, count_filter: Filter | None = None) -> int:
        shard = self._shard(name)
        request = qe.CountRequest(exact=True, filter=_filter(count_filter))
        return int(await self._run(lambda: shard.count(request)))

    async def upsert(self, name: str, points: Sequence[NewPoint]) -> None:
        shard = self._changing(name)
        converted = [qe.Point(p.id, _vector_in(p.vector), dict(p.payload)) for p in points]
        await self._run(lambda: shard.update(qe.UpdateOperation.upsert_points(converted)))

    async def delete_matching(self, name: str, selector: Filter) -> None:
        shard = self._changing(name)
        edge_filter = _filter(selector)
        assert edge_filter is not None
        operation = qe.UpdateOperation.delete_points_by_filter(edge_filter)
        await self._run(lambda: shard.update(operation))

    async def delete_ids(self, name: str, ids: Sequence[str]) -> None:
        shard = self._changing(name)
        operation = qe.UpdateOperation.delete_points([str(i) for i in ids])
        await self._run(lambda: shard.update(operation))

    async def set_payload(self, name: str, payload: dict[str, Any], points: Sequence[str]) -> None:
        shard = self._changing(name)
        operation = qe.UpdateOperation.set_payload([str(i) for i in points], payload)
        await self._run(lambda: shard.update(operation))

    async def scroll(self, name: str, request: ScrollRequest) -> tuple[list[StoredPoint], Any]:
        shard = self._shard(name)
        page = qe.ScrollRequest(
            offset=request.offset,
            limit=request.limit,
            with_payload=_payload_selector(request.with_payload),
            with_vector=request.with_vectors,
        )
        records, next_offset = await self._run(lambda: shard.scroll(page))
        return [
            StoredPoint(id=str(r.id), payload=r.payload or {}, vector=_vector_out(r.vector))
            for r in records
        ], (str(next_offset) if next_offset is not None else None)

    async def query_points(self, name: str, request: QueryRequest) -> list[StoredPoint]:
        shard = self._shard(name)
        limit = request.limit
        if request.query is RRF:
            search = qe.QueryRequest(
                limit=limit,
                query=qe.Fusion.Rrf(k=RRF_K),
                prefetches=[
                    qe.Prefetch(limit=p.limit or limit, query=_nearest(p.query, p.using))
                    for p in request.prefetch
                ],
                with_payload=request.with_payload,
                with_vector=request.with_vectors,
            )
        else:
            assert isinstance(request.query, SparseVector | list)
            search = qe.QueryRequest(
                limit=limit,
                query=_nearest(request.query, request.using),
                with_payload=request.with_payload,
                with_vector=request.with_vectors,
            )
        # A search takes milliseconds: run it inline rather than pay for a thread hop.
        found = shard.query(search)
        return [
            StoredPoint(
                id=str(p.id),
                payload=p.payload or {},
                vector=_vector_out(p.vector),
                score=float(p.score),
            )
            for p in found
        ]

    # ------------------------------------------------------------------ lifecycle

    async def close(self) -> None:
        """Flush the shards written to, close every shard, release the lock (and remove a
        temporary root). A shard only read (a `grace ask`) needs no flush: ~50 ms less."""
        shards, self._shards = dict(self._shards), {}
        changed, self._changed = self._changed, set()
        for name, shard in shards.items():
            if name in changed:
                shard.flush()
            shard.close()
        if self._lock.closed:
            return
        fcntl.flock(self._lock.fileno(), fcntl.LOCK_UN)
        self._lock.close()
        if self._temporary:
            shutil.rmtree(self._root, ignore_errors=True)


def _nearest(query: SparseVector | list[float], using: str | None) -> qe.Query:
    if isinstance(query, SparseVector):
        return qe.Query.Nearest(qe.SparseVector(list(query.indices), list(query.values)), using)
    return qe.Query.Nearest([float(v) for v in query], using)


def _vector_in(vector: dict[str, list[float] | SparseVector]) -> dict[str, Any]:
    converted: dict[str, Any] = {}
    for key, value in vector.items():
        if isinstance(value, SparseVector):
            converted[key] = qe.SparseVector(list(value.indices), list(value.values))
        else:
            converted[key] = [float(v) for v in value]
    return converted


def _vector_out(vector: Any) -> dict[str, Any] | None:
    if not isinstance(vector, dict):
        return None
    converted: dict[str, Any] = {}
    for key, value in vector.items():
        if isinstance(value, qe.SparseVector):
            converted[key] = SparseVector(indices=value.indices, values=value.values)
        else:
            converted[key] = value
    return converted


def _payload_selector(selector: bool | list[str]) -> Any:
    if isinstance(selector, list):
        return qe.PayloadSelector.Include(list(selector))
    return selector


def _filter(selector: Filter | None) -> qe.Filter | None:
    """Keyword matches, all of which must hold."""
    if selector is None:
        return None
    return qe.Filter(
        must=[qe.FieldCondition(c.key, match=qe.MatchValue(c.value)) for c in selector.must]
    )


def create_shard(
    directory: Path, *, dense: dict[str, int], sparse: Sequence[str], idf: bool = True
) -> qe.EdgeShard:
    """A new shard (replacing a creation that died half-way) and its `grace.json`."""
    config = qe.EdgeConfig(
        vectors={
            k: qe.EdgeVectorParams(size=n, distance=qe.Distance.Cosine) for k, n in dense.items()
        }
        or None,
        sparse_vectors={
            k: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf if idf else None) for k in sparse
        },
    )
    shutil.rmtree(directory, ignore_errors=True)
    shard = qe.EdgeShard.create(str(directory), config)
    meta = {"engine": "qdrant-edge", "dense": dict(dense)}
    (directory / META_FILE).write_text(json.dumps(meta), encoding="utf-8")
    return shard
