"""`Embedder` on Gemini: `gemini-embedding-001` through the shared transport (SPEC §3).

Batches of at most 100 texts per request (the API's limit), one title per request,
vectors normalised to unit length; a query's vector comes under a short deadline of its
own, so a search that cannot wait falls back to lexical.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

from google import genai
from google.genai import types

from agent.errors import LLMError
from agent.llm.gemini.client import call_gemini
from agent.llm.transport import CallPolicy

DEFAULT_EMBEDDING_MODEL = "gemini-embedding-001"
EMBED_BATCH_LIMIT = 100
"""The Gemini API accepts at most 100 texts per batchEmbedContents call."""


def _normalise(values: Sequence[float]) -> list[float]:
    """Unit length: Gemini only normalises full-size (3072) embeddings itself."""
    norm = math.sqrt(sum(v * v for v in values))
    if norm == 0.0:
        return [float(v) for v in values]
    return [float(v) / norm for v in values]


QUERY_TASK = "RETRIEVAL_QUERY"
DOCUMENT_TASK = "RETRIEVAL_DOCUMENT"


class GeminiEmbedder:
    """`Embedder` backed by `gemini-embedding-001` (Matryoshka: any dimension ≤ 3072).

    Retrieval uses the task types the model was trained for: `embed_documents` (chunks,
    RETRIEVAL_DOCUMENT with the document's title) and `embed_query` (RETRIEVAL_QUERY,
    under a short deadline of its own: a search that cannot wait falls back to lexical).
    """

    def __init__(
        self,
        *,
        client: genai.Client,
        model: str = DEFAULT_EMBEDDING_MODEL,
        dimension: int = 768,
        task_type: str | None = None,
        batch_size: int = EMBED_BATCH_LIMIT,
        policy: CallPolicy | None = None,
        query_timeout: float = 4.0,
    ) -> None:
        if dimension < 1:
            raise ValueError("dimension must be positive")
        self._client = client
        self._model = model
        self._dimension = dimension
        self._task_type = task_type
        self._batch_size = max(1, min(batch_size, EMBED_BATCH_LIMIT))
        self._policy = policy or CallPolicy()
        self._query_timeout = query_timeout
        self.requests = 0
        """Embedding requests sent (each batch is one), for benchmarks and tests."""

    @property
    def name(self) -> str:
        return self._model

    @property
    def dimension(self) -> int:
        return self._dimension

    @property
    def query_timeout(self) -> float:
        return self._query_timeout

    async def embed_query(self, text: str) -> list[float]:
        """A question's vector, or `NetworkError` within `query_timeout` seconds."""
        policy = CallPolicy(
            attempts=2,
            deadline_seconds=self._query_timeout,
            attempt_timeout_seconds=self._query_timeout,
            initial_delay=min(self._policy.initial_delay, self._query_timeout / 4),
            max_delay=self._query_timeout / 2,
        )
        (vector,) = await self.embed([text], task_type=QUERY_TASK, policy=policy)
        return vector

    async def embed_documents(
        self, texts: Sequence[str], titles: Sequence[str | None] | None = None
    ) -> list[list[float]]:
        """Chunks' vectors, embedded as documents with their titles."""
        return await self.embed(texts, task_type=DOCUMENT_TASK, titles=titles)

    async def embed(
        self,
        texts: Sequence[str],
        *,
        task_type: str | None = None,
        titles: Sequence[str | None] | None = None,
        policy: CallPolicy | None = None,
    ) -> list[list[float]]:
        """One unit vector per text, in order; ≤ 100 texts per request.

        The API takes one title per request, so consecutive texts with the same title go
        together (chunks of one document arrive together, so this costs no requests).
        """
        if titles is not None and len(titles) != len(texts):
            raise ValueError("titles must match texts one to one")
        task = task_type or self._task_type
        vectors: list[list[float]] = []
        keyed = list(zip(texts, titles if titles is not None else [None] * len(texts), strict=True))
        for title, group in itertools.groupby(keyed, key=lambda pair: pair[1]):
            members = [text for text, _ in group]
            for start in range(0, len(members), self._batch_size):
                batch = members[start : start + self._batch_size]
                vectors.extend(await self._embed_batch(batch, task, title, policy))
        return vectors

    async def _embed_batch(
        self,
        texts: list[str],
        task_type: str | None,
        title: str | None,
        policy: CallPolicy | None,
    ) -> list[list[float]]:
        config = types.EmbedContentConfig(output_dimensionality=self._dimension)
        if task_type:
            config.task_type = task_type
            if title and task_type == DOCUMENT_TASK:
                config.title = title
        # the API rejects empty content; a blank stands in for an empty text
        batch: list[str | types.Content] = [t if t.strip() else " " for t in texts]
        self.requests += 1
        response: types.EmbedContentResponse = await call_gemini(
            "embedding",
            self._model,
            policy or self._policy,
            lambda: self._client.aio.models.embed_content(
                model=self._model, contents=batch, config=config
            ),
        )
        embeddings = response.embeddings or []
        if len(embeddings) != len(batch):
            raise LLMError(
                f"Gemini embedding with model {self._model!r} returned {len(embeddings)} "
                f"vectors for {len(batch)} texts"
            )
        vectors = []
        for embedding in embeddings:
            values = embedding.values or []
            if len(values) != self._dimension:
                raise LLMError(
                    f"Gemini embedding with model {self._model!r} returned a vector of "
                    f"{len(values)} dimensions, expected {self._dimension}"
                )
            vectors.append(_normalise(values))
        return vectors
