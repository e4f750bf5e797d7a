"""A Qdrant server (or qdrant-client's local mode) as a `store.VectorStore`.

The only module of the knowledge base that imports qdrant-client: it converts the
knowledge base's own types to qdrant-client `models` and back, and turns the client's
HTTP and network errors into `StoreResponseError` / `StoreUnreachableError`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

import httpx
from qdrant_client import AsyncQdrantClient, models
from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse

from agent.knowledge.store import (
    RRF,
    CollectionInfo,
    Filter,
    NewPoint,
    QueryRequest,
    ScrollRequest,
    SparseVector,
    StoredPoint,
    StoreResponseError,
    StoreUnreachableError,
)

__all__ = ["ServerClient"]


class ServerClient:
    """`VectorStore` over an `AsyncQdrantClient` (a server URL, or a local-mode path)."""

    def __init__(self, client: AsyncQdrantClient) -> None:
        self.client = client

    @contextlib.contextmanager
    def _errors(self) -> Iterator[None]:
        try:
            yield
        except UnexpectedResponse as exc:
            detail = exc.content.decode("utf-8", "replace")[:300] if exc.content else ""
            raise StoreResponseError(exc.status_code, exc.reason_phrase, detail) from exc
        except (ResponseHandlingException, httpx.HTTPError) as exc:
            raise StoreUnreachableError(str(exc) or type(exc).__name__) from exc

    # ------------------------------------------------------------------ collections

    async def collection_names(self) -> list[str]:
        with self._errors():
            response = await self.client.get_collections()
        return [c.name for c in response.collections]

    async def collection_exists(self, name: str) -> bool:
        with self._errors():
            return await self.client.collection_exists(name)

    async def get_collection(self, name: str) -> CollectionInfo:
        with self._errors():
            info = await self.client.get_collection(name)
        vectors = info.config.params.vectors
        dense = (
            {key: params.size for key, params in vectors.items()}
            if isinstance(vectors, dict)
            else {}
        )
        metadata = getattr(info.config, "metadata", None) or {}
        return CollectionInfo(dense=dense, metadata=dict(metadata))

    async def update_collection(self, name: str, *, metadata: dict[str, Any]) -> None:
        with self._errors():
            await self.client.update_collection(name, metadata=metadata)

    async def create_collection(
        self, name: str, *, dense: dict[str, int], sparse: Sequence[str], idf: bool = True
    ) -> None:
        modifier = models.Modifier.IDF if idf else None
        with self._errors():
            await self.client.create_collection(
                name,
                vectors_config={
                    key: models.VectorParams(size=size, distance=models.Distance.COSINE)
                    for key, size in dense.items()
                },
                sparse_vectors_config={
                    key: models.SparseVectorParams(modifier=modifier) for key in sparse
                },
            )

    async def delete_collection(self, name: str) -> None:
        with self._errors():
            await self.client.delete_collection(name)

    async def create_keyword_index(self, name: str, field_name: str) -> None:
        with self._errors():
            await self.client.create_payload_index(
                name, field_name, models.PayloadSchemaType.KEYWORD
            )

    # ------------------------------------------------------------------ points

    async def count(self, name: str, count_filter: Filter | None = None) -> int:
        with self._errors():
            result = await self.client.count(name, count_filter=_filter(count_filter), exact=True)
        return result.count

    async def upsert(self, name: str, points: Sequence[NewPoint]) -> None:
        converted = [
            models.PointStruct(id=p.id, vector=_vector_in(p.vector), payload=p.payload)
            for p in points
        ]
        with self._errors():
            await self.client.upsert(name, points=converted, wait=True)

    async def delete_matching(self, name: str, selector: Filter) -> None:
        with self._errors():
            await self.client.delete(
                name, points_selector=models.FilterSelector(filter=_filter(selector)), wait=True
            )

    async def delete_ids(self, name: str, ids: Sequence[str]) -> None:
        with self._errors():
            await self.client.delete(
                name, points_selector=models.PointIdsList(points=list(ids)), wait=True
            )

    async def set_payload(self, name: str, payload: dict[str, Any], points: Sequence[str]) -> None:
        with self._errors():
            await self.client.set_payload(name, payload=payload, points=list(points), wait=True)

    async def scroll(self, name: str, request: ScrollRequest) -> tuple[list[StoredPoint], Any]:
        selector: bool | models.PayloadSelectorInclude = (
            models.PayloadSelectorInclude(include=request.with_payload)
            if isinstance(request.with_payload, list)
            else request.with_payload
        )
        with self._errors():
            records, next_offset = await self.client.scroll(
                name,
                limit=request.limit,
                offset=request.offset,
                with_payload=selector,
                with_vectors=request.with_vectors,
            )
        return [
            StoredPoint(id=str(r.id), payload=r.payload or {}, vector=_vector_out(r.vector))
            for r in records
        ], next_offset

    async def query_points(self, name: str, request: QueryRequest) -> list[StoredPoint]:
        with self._errors():
            if request.query is RRF:
                response = await self.client.query_points(
                    name,
                    prefetch=[
                        models.Prefetch(query=_query(p.query), using=p.using, limit=p.limit)
                        for p in request.prefetch
                    ],
                    query=models.FusionQuery(fusion=models.Fusion.RRF),
                    limit=request.limit,
                    with_payload=request.with_payload,
                    with_vectors=request.with_vectors,
                )
            else:
                assert isinstance(request.query, SparseVector | list)
                response = await self.client.query_points(
                    name,
                    query=_query(request.query),
                    using=request.using,
                    limit=request.limit,
                    with_payload=request.with_payload,
                    with_vectors=request.with_vectors,
                )
        return [
            StoredPoint(
                id=str(p.id),
                payload=p.payload or {},
                vector=_vector_out(p.vector),
                score=float(p.score),
            )
            for p in response.points
        ]

    async def close(self) -> None:
        with self._errors():
            await self.client.close()


def _query(query: SparseVector | list[float]) -> models.SparseVector | list[float]:
    if isinstance(query, SparseVector):
        return models.SparseVector(indices=query.indices, values=query.values)
    return query


def _filter(selector: Filter | None) -> models.Filter | None:
    if selector is None:
        return None
    return models.Filter(
        must=[
            models.FieldCondition(key=c.key, match=models.MatchValue(value=c.value))
            for c in selector.must
        ]
    )


def _vector_in(vector: dict[str, list[float] | SparseVector]) -> dict[str, Any]:
    return {
        key: models.SparseVector(indices=value.indices, values=value.values)
        if isinstance(value, SparseVector)
        else value
        for key, value in vector.items()
    }


def _vector_out(vector: Any) -> dict[str, Any] | None:
    if not isinstance(vector, dict):
        return None
    return {
        key: SparseVector(indices=list(value.indices), values=list(value.values))
        if isinstance(value, models.SparseVector)
        else value
        for key, value in vector.items()
    }
