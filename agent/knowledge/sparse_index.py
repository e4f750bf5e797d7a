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
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
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
    """One stored point: its id, payload and the set of sparse indices it holds."""

    point_id: str
    payload: dict[str, Any]
    indices: frozenset[int]


class SparseIndex:
    """Postings per sparse index: which points hold it, with what weight."""

    def __init__(self, points: Iterable[StoredPoint]) -> None:
        postings: dict[int, tuple[list[int], list[float]]] = defaultdict(lambda: ([], []))
        self._points: list[IndexedPoint] = []
        for number, (point_id, payload, indices, values) in enumerate(points):
            self._points.append(IndexedPoint(point_id, payload, frozenset(indices)))
            for index, value in zip(indices, values, strict=True):
                docs, weights = postings[index]
                docs.append(number)
                weights.append(value)
        self._postings = {
            index: (np.asarray(docs, dtype=np.int64), np.asarray(weights, dtype=np.float64))
            for index, (docs, weights) in postings.items()
        }

    def __len__(self) -> int:
        return len(self._points)

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
            posting = self._postings.get(index)
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
