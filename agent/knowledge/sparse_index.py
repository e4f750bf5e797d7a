"""An in-process inverted index of one collection's sparse vectors (Qdrant local mode).

Qdrant's local mode scores a sparse query by a Python dot product with every stored
point: ~50 ms at 700 chunks, growing linearly. A Qdrant server has a real inverted index;
local mode does not, so the knowledge base keeps this one beside it, built from the
stored vectors on the first search and dropped whenever this process writes to the
collection (local mode allows one process per directory, so no other writer exists).

Scores are exactly Qdrant's: Σ over query terms of query weight × IDF × document weight,
with Qdrant's IDF modifier `ln(1 + (N − n + 0.5) / (n + 0.5))`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np

__all__ = ["IndexedPoint", "SparseIndex", "StoredPoint", "idf"]

StoredPoint = tuple[str, dict[str, Any], Sequence[int], Sequence[float]]
"""(point id, payload, sparse indices, sparse values) as read from Qdrant."""


def idf(document_frequency: int, documents: int) -> float:
    """Qdrant's IDF modifier (the BM25 IDF)."""
    return math.log((documents - document_frequency + 0.5) / (document_frequency + 0.5) + 1)


@dataclass(frozen=True)
class IndexedPoint:
    """One stored point: its id, payload and the sparse indices it holds."""

    point_id: str
    payload: dict[str, Any]
    index_list: Sequence[int]

    @property
    def indices(self) -> frozenset[int]:
        """As a set, built only for the few points a search returns."""
        return frozenset(self.index_list)


class SparseIndex:
    """Postings per sparse index (which points hold it, with what weight), kept as three
    sorted numpy arrays so building it is vectorised: ~20 ms per thousand points."""

    def __init__(self, points: Iterable[StoredPoint]) -> None:
        self._points: list[IndexedPoint] = []
        lengths: list[int] = []
        all_indices: list[Sequence[int]] = []
        all_values: list[Sequence[float]] = []
        for point_id, payload, indices, values in points:
            self._points.append(IndexedPoint(point_id, payload, indices))
            lengths.append(len(indices))
            all_indices.append(indices)
            all_values.append(values)
        flat_indices = np.fromiter(chain.from_iterable(all_indices), dtype=np.int64)
        flat_values = np.fromiter(chain.from_iterable(all_values), dtype=np.float64)
        owners = np.repeat(np.arange(len(self._points), dtype=np.int64), lengths)
        order = np.argsort(flat_indices, kind="stable")
        sorted_indices = flat_indices[order]
        self._docs = owners[order]
        self._weights = flat_values[order]
        self._terms, starts = np.unique(sorted_indices, return_index=True)
        self._bounds = np.append(starts, len(sorted_indices))

    def __len__(self) -> int:
        return len(self._points)

    def _posting(self, index: int) -> tuple[np.ndarray, np.ndarray] | None:
        position = int(np.searchsorted(self._terms, index))
        if position >= len(self._terms) or self._terms[position] != index:
            return None
        start, end = self._bounds[position], self._bounds[position + 1]
        return self._docs[start:end], self._weights[start:end]

    def search(
        self, indices: Sequence[int], values: Sequence[float], limit: int
    ) -> list[tuple[float, IndexedPoint]]:
        """The `limit` best points by IDF-weighted dot product, best first (ties: stored order)."""
        count = len(self._points)
        if not count or limit < 1:
            return []
        scores = np.zeros(count, dtype=np.float64)
        touched = False
        for index, weight in zip(indices, values, strict=True):
            posting = self._posting(index)
            if posting is None:
                continue
            docs, weights = posting
            scores[docs] += weight * idf(len(docs), count) * weights
            touched = True
        if not touched:
            return []
        candidates = np.flatnonzero(scores > 0)
        if len(candidates) > limit:
            top = np.argpartition(-scores[candidates], limit - 1)[:limit]
            candidates = candidates[top]
        order = sorted(candidates.tolist(), key=lambda n: (-scores[n], n))
        return [(float(scores[n]), self._points[n]) for n in order]
