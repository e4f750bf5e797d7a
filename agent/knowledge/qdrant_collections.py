"""The Qdrant collections of the knowledge base: opening state, errors, admin, index format.

`QdrantCollections` is the base of `QdrantKnowledgeBase` (`qdrant_kb.py`; writes in
`qdrant_writes.py`): it holds the client (any `store.VectorStore`: the embedded engine, a
Qdrant server, or qdrant-client's local mode wrapped in `ServerClient`), turns the store's
exceptions into `VectorStoreError` with context, creates and describes collections, and
keeps their index format: every collection records the `LEXICAL_VERSION` its sparse
vectors were made with, and a search warns once when that predates today's tokeniser.

Every collection has a named sparse vector "sparse" with Qdrant's IDF modifier, and,
when a real embedding model is configured, a named dense vector "dense" (cosine).
"""

from __future__ import annotations

import contextlib
import logging
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Self

from agent.errors import GraceError, InvalidInputError, VectorStoreError
from agent.knowledge.engine import as_store
from agent.knowledge.store import (
    CollectionInfo,
    StoreResponseError,
    StoreUnreachableError,
    VectorStore,
)
from agent.knowledge.tokenize import LEXICAL_VERSION
from agent.ports import Embedder

if TYPE_CHECKING:
    from qdrant_client import AsyncQdrantClient

    from agent.knowledge.sparse_index import SparseIndex

log = logging.getLogger(__name__)

SPARSE_VECTOR = "sparse"
DENSE_VECTOR = "dense"
LEXICAL_VERSION_KEY = "grace_lexical_version"
"""Collection metadata key holding the `LEXICAL_VERSION` its sparse vectors were made with
(Qdrant collection metadata on a server; `grace.json` beside the shards on Edge)."""


def lexical_only_note(collection: str, model: str) -> str:
    """What to say of a collection without dense vectors while `model` is configured."""
    return (
        f"collection {collection!r} has no dense vectors (it was ingested without an "
        f"embedding model), so it is searched by keywords only: run `grace reembed "
        f"--collection {collection}` to add {model}'s vectors"
    )


@dataclass(frozen=True)
class _Layout:
    """Which vectors a collection was created with."""

    dense_size: int | None


class QdrantCollections:
    """The client, its errors and the collections; subclassed by the knowledge base."""

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
        self._client = as_store(client)
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

    async def lacks_dense(self, collection: str) -> bool:
        """Whether an embedding model is configured but the collection was built without
        dense vectors (ingested before the model was: no GOOGLE_API_KEY yet, or
        GRACE_EMBEDDER=none), so it is searched by keywords only until `grace reembed`."""
        if self._embedder is None or not await self._exists(collection):
            return False
        return (await self._layout(collection)).dense_size is None

    async def collections_lacking_dense(self) -> list[str]:
        """Every collection `lacks_dense` names, sorted (none without a model)."""
        if self._embedder is None:
            return []
        return [name for name in await self.collections() if await self.lacks_dense(name)]

    async def _dense_size(self, collection: str) -> int | None:
        """Dense dimension to use for this collection, or None for sparse-only."""
        layout = await self._layout(collection)
        if self._embedder is None or layout.dense_size is None:
            if self._embedder is not None and collection not in self._warned_no_dense:
                self._warned_no_dense.add(collection)
                log.warning("%s", lexical_only_note(collection, self._embedder.name))
            return None
        if layout.dense_size != self._embedder.dimension:
            raise VectorStoreError(
                f"collection {collection!r} stores {layout.dense_size}-dimensional vectors "
                f"but the embedding model {self._embedder.name} makes "
                f"{self._embedder.dimension}-dimensional ones; re-ingest into a new "
                f"collection or configure the model it was built with"
            )
        return layout.dense_size

    # ------------------------------------------------------------------ index format

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

    # ------------------------------------------------------------------ lifecycle

    async def close(self) -> None:
        """Release the client (and, in local mode, the directory lock)."""
        with self._store_errors("closing"):
            await self._client.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()
