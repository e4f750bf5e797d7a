"""Re-ranking search hits by the query's own words: pure text and arithmetic, no Qdrant.

Whatever found the candidates (Qdrant's sparse or hybrid RRF search, or the in-process
sparse index), they are ranked here the same way: hits containing all the query's
keywords (kanji/katakana runs, Latin content words) move up, hits sharing no word with it
are dropped unless their dense cosine says they mean the same, older copies of a document
rank below the current one, and every hit gets a 0–1 similarity so the confidence scorer
can compare results across backends.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from agent.knowledge.lexical import QueryTerms
from agent.schemas import Source, Verification

KEYWORD_BOOST = 0.5
"""A hit containing all the query's keywords ranks as if its score were 1.5× higher."""
DENSE_WEIGHT = 0.5
"""Share of the dense cosine in a hybrid hit's similarity; the rest is lexical overlap."""
STALE_FACTOR = 0.8
"""An older copy of a document ranks as if its score were this much lower: the current
version comes first, the old one stays visible (its differing values matter)."""


@dataclass(frozen=True)
class Candidate:
    """A search hit before re-ranking, whichever path found it."""

    point_id: str
    score: float
    payload: dict[str, Any]
    indices: frozenset[int] | None
    """The hit's sparse indices (its tokens), when known: no need to tokenise it again."""
    dense: list[float] | None = None
    """The hit's stored dense vector, when the search fetched it."""


def rerank(
    candidates: Sequence[Candidate],
    terms: QueryTerms,
    query_vector: list[float] | None,
    collection: str,
    limit: int,
    dense_only_keep: float = 1.0,
) -> list[Source]:
    """Boost hits containing the query's keywords, drop hits sharing no word with it,
    rank older copies below their current version and drop their passages that say
    exactly what a better-ranked one says. A hit sharing no word with the query is kept
    only when its dense cosine reaches `dense_only_keep`, the embedding model's own
    threshold (an English question and a Japanese passage saying the same)."""
    ranked: list[tuple[float, int, Source]] = []
    for position, hit in enumerate(candidates):
        payload = hit.payload
        text = str(payload.get("text", ""))
        match = terms.match(text, text_indices=hit.indices)
        cosine = dense_cosine(query_vector, hit.dense)
        if not match.shares_token and (cosine is None or cosine < dense_only_keep):
            continue
        similarity = match.similarity
        if cosine is not None:
            similarity = DENSE_WEIGHT * max(0.0, cosine) + (1 - DENSE_WEIGHT) * similarity
        boosted = hit.score * (1.0 + KEYWORD_BOOST * match.keyword_fraction)
        superseded_by = payload.get("superseded_by") or None
        if superseded_by:
            boosted *= STALE_FACTOR
        source = Source(
            source=str(payload.get("source", "")),
            text=text,
            chunk_id=str(payload.get("chunk_id", hit.point_id)),
            score=hit.score,
            similarity=round(min(1.0, max(0.0, similarity)), 4),
            collection=collection,
            vector=hit.dense,  # gemini: reused for source agreement
            doc_title=str(payload.get("doc_title") or ""),
            doc_date=payload.get("name_date") or payload.get("text_date") or None,
            stale=bool(superseded_by),
            superseded_by=superseded_by,
            page=_page(payload.get("page")),
            section=str(payload.get("title") or ""),
            url=payload.get("url") or None,
            verified=_verification(payload.get("verified")),
        )
        ranked.append((boosted, position, source))
    ranked.sort(key=lambda item: (-item[0], item[1]))
    kept: list[Source] = []
    seen: set[str] = set()
    for _, _, source in ranked:
        body = _body(source.text)
        if source.stale and body in seen:
            continue
        seen.add(body)
        kept.append(source)
        if len(kept) == limit:
            break
    return kept


def _page(value: object) -> int | None:
    """The stored page number (chunks stored before pages were kept have none)."""
    return value if isinstance(value, int) and value >= 1 else None


def _body(text: str) -> str:
    return " ".join(text.split())


def dense_cosine(query_vector: list[float] | None, vector: list[float] | None) -> float | None:
    """Cosine between the query vector and a hit's stored dense vector, if both exist."""
    if query_vector is None or vector is None or len(vector) != len(query_vector):
        return None
    dot = sum(a * b for a, b in zip(query_vector, vector, strict=True))
    norm = math.sqrt(sum(a * a for a in query_vector)) * math.sqrt(sum(b * b for b in vector))
    return dot / norm if norm else None


def _verification(stored: object) -> Verification | None:
    """A verified answer's attribution as stored in its payload; None for a document
    (or a payload this version cannot read: then it is searched as plain text)."""
    if not isinstance(stored, dict):
        return None
    try:
        return Verification.model_validate(stored)
    except ValidationError:
        return None
