"""A chunk's stored sparse vector, in a module light enough for a worker process.

Ingesting a large input computes these in a second process while the first reads,
chunks and writes (`ingest.py`); the worker imports only this and the tokeniser.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from agent.knowledge.lexical import sparse_vector
from agent.knowledge.tokenize import search_terms

__all__ = ["SparseValues", "chunk_sparse_vector", "chunk_sparse_vectors"]

SparseValues = tuple[list[int], list[float]]


def chunk_sparse_vector(title: str, text: str) -> SparseValues:
    """The heading trail is in the text already; counting it once more weighs a section's
    own words above a passing mention (BM25F-style field weight)."""
    return sparse_vector(_title_terms(title) + search_terms(text))


def chunk_sparse_vectors(pieces: Sequence[tuple[str, str]]) -> list[SparseValues]:
    """`chunk_sparse_vector` of many (title, text) pairs: one call per batch to a worker."""
    return [chunk_sparse_vector(title, text) for title, text in pieces]


@functools.lru_cache(maxsize=4096)
def _title_terms(title: str) -> list[str]:
    """Search terms of a heading trail (cached: every chunk of a section shares it)."""
    return search_terms(title)
