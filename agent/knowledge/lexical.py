"""Lexical scoring: BM25-style sparse vectors, a 0–1 overlap similarity, an offline embedder.

- `sparse_vector` gives Qdrant the saturated term frequencies of a document; the collection
  uses Qdrant's IDF modifier, so the IDF half of BM25 is computed server side from the
  live collection and never goes stale when documents are added or removed.
- `lexical_similarity` turns "how much of the question does this passage mention" into a
  0–1 number, so offline search results carry a similarity comparable to a dense cosine.
- `HashingEmbedder` is a deterministic stand-in for an embedding model, used for source
  agreement when no real model is configured. It is never the dense search vector.
"""

from __future__ import annotations

import functools
import math
import zlib
from collections import Counter
from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from agent.knowledge.tokenize import (
    contains_japanese,
    extract_keywords,
    normalize_text,
    search_terms,
    tokenize,
)

__all__ = [
    "BM25_B",
    "BM25_K1",
    "HashingEmbedder",
    "LexicalMatch",
    "QueryTerms",
    "lexical_similarity",
    "query_sparse_vector",
    "sparse_vector",
    "token_index",
]

BM25_K1 = 1.2
BM25_B = 0.75
AVERAGE_CHUNK_TOKENS = 60.0
"""Typical token count of a chunk (~800 characters); fixed so a document's vector does not
depend on what else is in the collection."""


@functools.lru_cache(maxsize=1 << 17)
def token_index(token: str) -> int:
    """Stable sparse index of a token (crc32, 31 bits): the same in every process."""
    return zlib.crc32(token.encode("utf-8")) & 0x7FFFFFFF


def sparse_vector(
    tokens: Sequence[str], *, average_length: float = AVERAGE_CHUNK_TOKENS
) -> tuple[list[int], list[float]]:
    """Document side of BM25: tf·(k1+1) / (tf + k1·(1 − b + b·len/avg)), sorted by index.

    Tokens that hash to the same index are counted together (their tf adds up)."""
    if not tokens:
        return [], []
    counts = Counter(token_index(token) for token in tokens)
    norm = BM25_K1 * (1.0 - BM25_B + BM25_B * len(tokens) / average_length)
    indices = sorted(counts)
    values = [counts[i] * (BM25_K1 + 1.0) / (counts[i] + norm) for i in indices]
    return indices, values


def query_sparse_vector(tokens: Iterable[str]) -> tuple[list[int], list[float]]:
    """Query side: 1.0 per distinct token, so the score is Σ idf · saturated tf."""
    indices = sorted({token_index(token) for token in tokens})
    return indices, [1.0] * len(indices)


@dataclass(frozen=True)
class LexicalMatch:
    """How a passage matches a query's terms."""

    token_hits: int
    keyword_hits: int
    keyword_total: int
    similarity: float

    @property
    def shares_token(self) -> bool:
        return self.token_hits > 0 or self.keyword_hits > 0

    @property
    def keyword_fraction(self) -> float:
        return self.keyword_hits / self.keyword_total if self.keyword_total else 0.0


@dataclass(frozen=True)
class QueryTerms:
    """A query's distinct content tokens and seed keywords, computed once per search."""

    tokens: frozenset[str]
    keywords: tuple[str, ...]

    @classmethod
    def from_query(cls, query: str) -> QueryTerms:
        return cls(tokens=frozenset(search_terms(query)), keywords=tuple(extract_keywords(query)))

    def match(
        self,
        text: str,
        text_tokens: Iterable[str] | None = None,
        *,
        text_indices: AbstractSet[int] | None = None,
    ) -> LexicalMatch:
        """Share of the query's tokens and keywords found in `text` (0–1).

        `text_indices` (the passage's stored sparse indices) saves tokenising it again."""
        if text_indices is not None:

            def has(token: str) -> bool:
                return token_index(token) in text_indices

        else:
            found = frozenset(search_terms(text) if text_tokens is None else text_tokens)

            def has(token: str) -> bool:
                return token in found

        token_hits = sum(1 for token in self.tokens if has(token))
        lowered = normalize_text(text).lower()
        keyword_hits = sum(
            1
            for keyword in self.keywords
            # Japanese keywords are compounds Sudachi may split differently in a longer
            # sentence: a substring test is the seed's rule. Latin ones compare as tokens
            # ("day" must not match "today").
            if (keyword in lowered if contains_japanese(keyword) else has(keyword))
        )
        total = len(self.tokens) + len(self.keywords)
        similarity = (token_hits + keyword_hits) / total if total else 0.0
        return LexicalMatch(
            token_hits=token_hits,
            keyword_hits=keyword_hits,
            keyword_total=len(self.keywords),
            similarity=min(1.0, similarity),
        )


def lexical_similarity(query: str, text: str) -> float:
    """Share (0–1) of the query's distinct content tokens and keywords present in `text`."""
    return QueryTerms.from_query(query).match(text).similarity


class HashingEmbedder:
    """Deterministic offline `Embedder`: a signed, hashed bag of tokens, L2-normalised.

    Numbers are tokens, so "3 days per week" and "1 day per week" get different vectors —
    which is what source agreement needs to notice a contradiction. Not a search vector:
    it knows nothing about meaning beyond shared words."""

    def __init__(self, dimension: int = 512) -> None:
        if dimension < 8:
            raise ValueError("dimension must be at least 8")
        self._dimension = dimension

    @property
    def name(self) -> str:
        return "offline-hashing"

    @property
    def dimension(self) -> int:
        return self._dimension

    def embed_one(self, text: str) -> list[float]:
        """The vector of one text; all zeros when the text has no content tokens."""
        vector = [0.0] * self._dimension
        for token, tf in Counter(tokenize(text)).items():
            digest = zlib.crc32(b"grace-embed:" + token.encode("utf-8"))
            sign = 1.0 if (digest >> 31) & 1 else -1.0
            vector[digest % self._dimension] += sign * (1.0 + math.log(tf))
        norm = math.sqrt(sum(v * v for v in vector))
        return [v / norm for v in vector] if norm else vector

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [self.embed_one(text) for text in texts]
