"""What the knowledge base asks of a vector store, in its own small types.

Two engines answer it: Qdrant Edge in-process (`edge_client.py`, the default) and a
Qdrant server or qdrant-client's local mode (`server_client.py`). Only the second needs
qdrant-client, whose `models` take about a second to import: keeping these types here
lets `grace ask` on the embedded engine start without it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

__all__ = [
    "RRF",
    "CollectionInfo",
    "FieldMatch",
    "Filter",
    "NewPoint",
    "Prefetch",
    "Query",
    "QueryRequest",
    "ScrollRequest",
    "SparseVector",
    "StoreResponseError",
    "StoreUnreachableError",
    "StoredPoint",
    "VectorStore",
    "every_point",
]


@dataclass(frozen=True)
class SparseVector:
    indices: list[int]
    values: list[float]


@dataclass(frozen=True)
class FieldMatch:
    """A payload field equal to a keyword."""

    key: str
    value: str


@dataclass(frozen=True)
class Filter:
    """Points matching every condition."""

    must: list[FieldMatch]


class _Rrf:
    """Fuse the prefetches with Reciprocal Rank Fusion."""

    def __repr__(self) -> str:
        return "RRF"


RRF = _Rrf()

Query = SparseVector | list[float] | _Rrf


@dataclass(frozen=True)
class Prefetch:
    query: SparseVector | list[float]
    using: str
    limit: int


@dataclass(frozen=True)
class StoredPoint:
    """A point as read back (by a scroll, or a search with its score)."""

    id: str
    payload: dict[str, Any]
    vector: dict[str, Any] | None = None
    """Named vectors, when asked for: a dense one is a list, a sparse one a SparseVector."""
    score: float = 0.0


@dataclass(frozen=True)
class QueryRequest:
    """A search: `query` against the vector `using` names, or RRF over the `prefetch`
    searches; what to read back of each point found."""

    query: Query
    limit: int
    using: str | None = None
    prefetch: Sequence[Prefetch] = ()
    with_payload: bool = True
    with_vectors: bool | list[str] = False


@dataclass(frozen=True)
class ScrollRequest:
    """A page of a collection's points from `offset` (None: the first page), and what to
    read back of each."""

    limit: int
    offset: Any = None
    with_payload: bool | list[str] = True
    with_vectors: bool | list[str] = False


@dataclass(frozen=True)
class NewPoint:
    id: str
    vector: dict[str, list[float] | SparseVector]
    payload: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CollectionInfo:
    dense: dict[str, int]
    """Dense vector name → size."""
    metadata: dict[str, Any]


class StoreResponseError(Exception):
    """The store answered with an HTTP error."""

    def __init__(self, status_code: int, reason: str, detail: str) -> None:
        super().__init__(f"HTTP {status_code} {reason}: {detail}")
        self.status_code = status_code
        self.reason = reason
        self.detail = detail


class StoreUnreachableError(Exception):
    """The store could not be reached (connection refused, timeout, bad answer)."""


class VectorStore(Protocol):
    """Collections of points with named dense and sparse vectors and payloads."""

    async def collection_names(self) -> list[str]: ...

    async def collection_exists(self, name: str) -> bool: ...

    async def get_collection(self, name: str) -> CollectionInfo: ...

    async def update_collection(self, name: str, *, metadata: dict[str, Any]) -> None: ...

    async def create_collection(
        self, name: str, *, dense: dict[str, int], sparse: Sequence[str], idf: bool = True
    ) -> None: ...

    async def create_keyword_index(self, name: str, field_name: str) -> None: ...

    async def delete_collection(self, name: str) -> None: ...

    async def count(self, name: str, count_filter: Filter | None = None) -> int: ...

    async def upsert(self, name: str, points: Sequence[NewPoint]) -> None: ...

    async def delete_matching(self, name: str, selector: Filter) -> None: ...

    async def delete_ids(self, name: str, ids: Sequence[str]) -> None: ...

    async def set_payload(
        self, name: str, payload: dict[str, Any], points: Sequence[str]
    ) -> None: ...

    async def scroll(self, name: str, request: ScrollRequest) -> tuple[list[StoredPoint], Any]:
        """A page of points and the offset of the next one (None after the last)."""
        ...

    async def query_points(self, name: str, request: QueryRequest) -> list[StoredPoint]: ...

    async def close(self) -> None: ...


async def every_point(
    store: VectorStore, name: str, request: ScrollRequest
) -> AsyncIterator[StoredPoint]:
    """Every point of a collection from `request.offset` on, read a page at a time."""
    offset = request.offset
    while True:
        points, offset = await store.scroll(name, replace(request, offset=offset))
        for point in points:
            yield point
        if offset is None:
            return
