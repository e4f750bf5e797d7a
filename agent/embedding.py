"""Embedding calls as retrieval needs them, for any `Embedder`.

Embedders that know retrieval task types (Gemini: RETRIEVAL_QUERY for questions,
RETRIEVAL_DOCUMENT with a title for chunks) provide `embed_query` / `embed_documents`;
the others get a plain `embed`. A query embedding is always bounded in time: a search
must not wait on a slow model when it can answer lexically.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from agent.errors import NetworkError
from agent.ports import Embedder

QUERY_EMBED_TIMEOUT = 5.0
"""Seconds a search waits for its query's vector before it searches lexically only."""
DENSE_ONLY_KEEP = 0.8
"""Cosine from which a hit sharing no word with the question is kept, for a model that
does not say (`dense_only_keep`): the value tuned for Gemini's embeddings."""


def dense_only_keep(embedder: Embedder) -> float:
    """The model's own threshold for keeping a hit found by meaning alone."""
    return float(getattr(embedder, "dense_only_keep", DENSE_ONLY_KEEP))


@runtime_checkable
class LoadingEmbedder(Protocol):
    """A local model that loads once per process: loading is not the query's time."""

    async def load(self) -> None: ...


@runtime_checkable
class RetrievalEmbedder(Protocol):
    """An embedder that distinguishes questions from documents."""

    @property
    def query_timeout(self) -> float: ...

    async def embed_query(self, text: str) -> list[float]: ...

    async def embed_documents(
        self, texts: Sequence[str], titles: Sequence[str | None] | None = None
    ) -> list[list[float]]: ...


async def embed_query(embedder: Embedder, text: str) -> list[float]:
    """The query's vector within the embedder's query timeout (≤ 5 s), else `NetworkError`."""
    if isinstance(embedder, LoadingEmbedder):
        await embedder.load()
    if isinstance(embedder, RetrievalEmbedder):
        timeout = min(embedder.query_timeout, QUERY_EMBED_TIMEOUT)
        work = embedder.embed_query(text)
    else:
        timeout = QUERY_EMBED_TIMEOUT
        work = _first(embedder, text)
    try:
        return await asyncio.wait_for(work, timeout=timeout)
    except TimeoutError as exc:
        raise NetworkError(
            f"the query embedding ({embedder.name}) took longer than {timeout:g} s"
        ) from exc


async def embed_documents(
    embedder: Embedder, texts: Sequence[str], titles: Sequence[str | None] | None = None
) -> list[list[float]]:
    """Chunks' vectors, embedded as documents (with their titles when the model uses them)."""
    if isinstance(embedder, RetrievalEmbedder):
        return await embedder.embed_documents(texts, titles)
    return await embedder.embed(texts)


async def _first(embedder: Embedder, text: str) -> list[float]:
    vectors = await embedder.embed([text])
    if not vectors:
        raise NetworkError(f"the embedding model {embedder.name} returned no vector")
    return vectors[0]
