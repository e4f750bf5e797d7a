"""Is a sentence about what was asked? Meaning, and the words the question insists on.

A sentence about a neighbouring subject often shares the question's words and holds a
value of the kind asked (a monthly staff fee for a question about the daily visitor
rate). A sentence encoder ranks by meaning, but similarity alone is not enough: it can
rank the neighbour higher. So the score is the cosine minus a penalty for each word the
question *insists on* that the sentence lacks. A question word insists when it tells
the candidates apart: some candidate sentences have it and others do not. A word every
candidate has, or none has, separates nothing and costs nothing.

Pure functions: the caller gives the vectors (any unit-length embedding) and the tokens.
"""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from agent.confidence import cosine

MISSING_PENALTY = 0.2
"""Score lost when the sentence lacks every word the question insists on (pro rata for
some). Chosen leave-one-set-out on the dev sets (`bench/aboutness.py`)."""


@dataclass(frozen=True)
class Aboutness:
    """How much one candidate sentence is about the question."""

    similarity: float
    """Cosine between the question's and the sentence's vectors."""
    insisted: tuple[str, ...]
    """The question's words that tell the candidates apart."""
    missing: tuple[str, ...]
    """Of those, the ones this sentence lacks."""
    score: float
    """`similarity` minus the penalty for `missing`; higher is more about the question."""


def insisted_words(
    question_tokens: Sequence[str], candidates: Sequence[AbstractSet[str]]
) -> tuple[str, ...]:
    """The question's distinct tokens that some candidates have and others lack."""
    words: list[str] = []
    for token in dict.fromkeys(question_tokens):
        having = sum(1 for tokens in candidates if token in tokens)
        if 0 < having < len(candidates):
            words.append(token)
    return tuple(words)


def aboutness(
    question_tokens: Sequence[str],
    question_vector: Sequence[float],
    candidate_tokens: Sequence[AbstractSet[str]],
    candidate_vectors: Sequence[Sequence[float]],
    *,
    penalty: float = MISSING_PENALTY,
) -> list[Aboutness]:
    """One `Aboutness` per candidate sentence, in their order."""
    if len(candidate_tokens) != len(candidate_vectors):
        raise ValueError("one token set and one vector per candidate")
    insisted = insisted_words(question_tokens, candidate_tokens)
    scored: list[Aboutness] = []
    for tokens, vector in zip(candidate_tokens, candidate_vectors, strict=True):
        similarity = cosine(question_vector, vector)
        missing = tuple(word for word in insisted if word not in tokens)
        share = len(missing) / len(insisted) if insisted else 0.0
        scored.append(
            Aboutness(
                similarity=similarity,
                insisted=insisted,
                missing=missing,
                score=similarity - penalty * share,
            )
        )
    return scored
