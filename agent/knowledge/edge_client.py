"""The embedded knowledge-base engine: Qdrant Edge (`qdrant-edge-py`) behind the slice of
`AsyncQdrantClient` that `QdrantKnowledgeBase` uses.

Qdrant Edge is the Qdrant engine in-process: a real inverted index for sparse vectors,
HNSW for dense ones, points and payloads on disk (memory-mapped). qdrant-client's local
mode is brute force in Python over points it keeps in memory: at 80,000 chunks it holds
~650 MB and ingests a 50 MB file in minutes. Figures: docs/embedded-engine.md.

Edge has no collections: one shard is one directory. A collection here is the shard in
`<root>/<name>/`, with a small `grace.json` beside it recording its dense vectors (Edge does
not report its configuration back). Results are returned as qdrant-client `models`
objects, so the knowledge base runs the same code on Edge and on a Qdrant server.

One process per directory: `<root>/.grace-edge.lock` is held (flock) while it is open.
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import qdrant_edge as qe
from qdrant_client import models

__all__ = ["RRF_K", "EdgeClient", "EdgeLockedError", "create_shard"]

RRF_K = 2
"""Qdrant's default Reciprocal Rank Fusion constant (the server and local mode use 2)."""
LOCK_FILE = ".grace-edge.lock"
META_FILE = "grace.json"

T = TypeVar("T")


class EdgeLockedError(RuntimeError):
    """Another process (or another client in this one) has the directory open."""


@dataclass(frozen=True)
class _Name:
    name: str


@dataclass(frozen=True)
class _Collections:
    collections: list[_Name]


@dataclass(frozen=True)
class _Count:
    count: int


@dataclass(frozen=True)
class _QueryResponse:
    points: list[models.ScoredPoint]


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
        self._dense: dict[str, dict[str, int]] = {}
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

    # ------------------------------------------------------------------ collections

    async def get_collections(self) -> _Collections:
        return _Collections([_Name(n) for n in self._names()])

    async def collection_exists(self, name: str) -> bool:
        return (self._dir(name) / META_FILE).is_file()

    async def get_collection(self, name: str) -> models.CollectionInfo:
        """Only `config.params.vectors` and `config.metadata` are filled in: all the
        knowledge base reads."""
        vectors = {
            key: models.VectorParams(size=size, distance=models.Distance.COSINE)
            for key, size in self._dense_vectors(name).items()
        }
        metadata = self._meta(name).get("metadata") or {}
        return models.CollectionInfo.model_construct(
            config=models.CollectionConfig.model_construct(
                params=models.CollectionParams.model_construct(vectors=vectors),
                metadata=dict(metadata),
            )
        )

    async def update_collection(self, name: str, *, metadata: dict[str, Any]) -> bool:
        """Merge `metadata` into the collection's metadata (kept in its `grace.json`),
        like a Qdrant server's collection metadata."""
        meta = self._meta(name)
        meta["metadata"] = {**(meta.get("metadata") or {}), **metadata}
        path = self._dir(name) / META_FILE
        temporary = path.with_suffix(".tmp")
        temporary.write_text(json.dumps(meta), encoding="utf-8")
        temporary.replace(path)
        return True

    def _meta(self, name: str) -> dict[str, Any]:
        path = self._dir(name) / META_FILE
        if not path.is_file():
            raise ValueError(f"Collection {name} not found")
        meta: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        return meta

    def _dense_vectors(self, name: str) -> dict[str, int]:
        """The collection's dense vectors and their sizes, from its `grace.json`."""
        if name not in self._dense:
            path = self._dir(name) / META_FILE
            if not path.is_file():
                raise ValueError(f"Collection {name} not found")
            meta = json.loads(path.read_text(encoding="utf-8"))
            self._dense[name] = {str(k): int(v) for k, v in meta.get("dense", {}).items()}
        return self._dense[name]

    async def create_collection(
        self,
        name: str,
        *,
        vectors_config: dict[str, models.VectorParams],
        sparse_vectors_config: dict[str, models.SparseVectorParams],
    ) -> bool:
        directory = self._dir(name)
        if (directory / META_FILE).is_file():
            raise ValueError(f"Collection {name} already exists")
        dense = {key: params.size for key, params in vectors_config.items()}
        idf = any(p.modifier == models.Modifier.IDF for p in sparse_vectors_config.values())
        shard = await self._run(
            lambda: create_shard(
                directory, dense=dense, sparse=list(sparse_vectors_config), idf=idf
            )
        )
        self._shards[name] = shard
        self._dense[name] = dense
        return True

    async def create_payload_index(
        self, name: str, field_name: str, field_schema: models.PayloadSchemaType
    ) -> None:
        schema = {models.PayloadSchemaType.KEYWORD: qe.PayloadSchemaType.Keyword}[field_schema]
        shard = self._shard(name)
        await self._run(
            lambda: shard.update(qe.UpdateOperation.create_field_index(field_name, schema))
        )

    # ------------------------------------------------------------------ points

    async def count(
        self, name: str, count_filter: models.Filter | None = None, exact: bool = True
    ) -> _Count:
        shard = self._shard(name)
        request = qe.CountRequest(exact=exact, filter=_filter(count_filter))
        return _Count(await self._run(lambda: shard.count(request)))

    async def upsert(
        self, name: str, points: Sequence[models.PointStruct], wait: bool = True
    ) -> None:
        shard = self._shard(name)
        converted = [
            qe.Point(str(p.id), _vector_in(p.vector), dict(p.payload or {})) for p in points
        ]
        await self._run(lambda: shard.update(qe.UpdateOperation.upsert_points(converted)))

    async def delete(
        self,
        name: str,
        points_selector: models.FilterSelector | models.PointIdsList,
        wait: bool = True,
    ) -> None:
        shard = self._shard(name)
        if isinstance(points_selector, models.FilterSelector):
            edge_filter = _filter(points_selector.filter)
            assert edge_filter is not None
            operation = qe.UpdateOperation.delete_points_by_filter(edge_filter)
        else:
            operation = qe.UpdateOperation.delete_points([str(i) for i in points_selector.points])
        await self._run(lambda: shard.update(operation))

    async def set_payload(
        self, name: str, payload: dict[str, Any], points: Sequence[Any], wait: bool = True
    ) -> None:
        shard = self._shard(name)
        operation = qe.UpdateOperation.set_payload([str(i) for i in points], payload)
        await self._run(lambda: shard.update(operation))

    async def scroll(
        self,
        name: str,
        *,
        limit: int,
        offset: Any = None,
        with_payload: bool | models.PayloadSelectorInclude = True,
        with_vectors: bool | list[str] = False,
    ) -> tuple[list[models.Record], Any]:
        shard = self._shard(name)
        request = qe.ScrollRequest(
            offset=offset,
            limit=limit,
            with_payload=_payload_selector(with_payload),
            with_vector=with_vectors,
        )
        records, next_offset = await self._run(lambda: shard.scroll(request))
        return [
            models.Record.model_construct(
                id=str(r.id), payload=r.payload or {}, vector=_vector_out(r.vector)
            )
            for r in records
        ], (str(next_offset) if next_offset is not None else None)

    async def query_points(
        self,
        name: str,
        *,
        query: Any,
        limit: int,
        using: str | None = None,
        prefetch: Sequence[models.Prefetch] = (),
        with_payload: bool = True,
        with_vectors: bool | list[str] = False,
    ) -> _QueryResponse:
        shard = self._shard(name)
        if isinstance(query, models.FusionQuery):
            request = qe.QueryRequest(
                limit=limit,
                query=qe.Fusion.Rrf(k=RRF_K),
                prefetches=[
                    qe.Prefetch(limit=p.limit or limit, query=_nearest(p.query, p.using))
                    for p in prefetch
                ],
                with_payload=with_payload,
                with_vector=with_vectors,
            )
        else:
            request = qe.QueryRequest(
                limit=limit,
                query=_nearest(query, using),
                with_payload=with_payload,
                with_vector=with_vectors,
            )
        # A search takes milliseconds: run it inline rather than pay for a thread hop.
        found = shard.query(request)
        return _QueryResponse(
            [
                models.ScoredPoint.model_construct(
                    id=str(p.id),
                    version=p.version,
                    score=float(p.score),
                    payload=p.payload or {},
                    vector=_vector_out(p.vector),
                )
                for p in found
            ]
        )

    # ------------------------------------------------------------------ lifecycle

    async def close(self) -> None:
        """Flush and close every shard, release the lock (and remove a temporary root)."""
        shards, self._shards = list(self._shards.values()), {}
        for shard in shards:
            shard.flush()
            shard.close()
        if self._lock.closed:
            return
        fcntl.flock(self._lock.fileno(), fcntl.LOCK_UN)
        self._lock.close()
        if self._temporary:
            shutil.rmtree(self._root, ignore_errors=True)

    def flush(self) -> None:
        for shard in self._shards.values():
            shard.flush()


def _nearest(query: Any, using: str | None) -> qe.Query:
    if isinstance(query, models.SparseVector):
        return qe.Query.Nearest(qe.SparseVector(list(query.indices), list(query.values)), using)
    return qe.Query.Nearest([float(v) for v in query], using)


def _vector_in(vector: Any) -> dict[str, Any]:
    converted: dict[str, Any] = {}
    for key, value in dict(vector).items():
        if isinstance(value, models.SparseVector):
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
            converted[key] = models.SparseVector(indices=value.indices, values=value.values)
        else:
            converted[key] = value
    return converted


def _payload_selector(selector: bool | models.PayloadSelectorInclude) -> Any:
    if isinstance(selector, models.PayloadSelectorInclude):
        return qe.PayloadSelector.Include(list(selector.include))
    return selector


def _filter(selector: models.Filter | None) -> qe.Filter | None:
    """Only what the knowledge base filters by: `must` keyword matches."""
    if selector is None:
        return None
    conditions: list[Any] = []
    for condition in selector.must or []:  # type: ignore[union-attr]
        if not (
            isinstance(condition, models.FieldCondition)
            and isinstance(condition.match, models.MatchValue)
        ):
            raise ValueError(f"unsupported filter condition for the embedded engine: {condition}")
        conditions.append(
            qe.FieldCondition(condition.key, match=qe.MatchValue(condition.match.value))
        )
    return qe.Filter(must=conditions)


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
