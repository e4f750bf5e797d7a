"""Sparse vectors, lexical similarity and the offline hashing embedder."""

from __future__ import annotations

import math

from agent.knowledge.lexical import (
    HashingEmbedder,
    lexical_similarity,
    query_sparse_vector,
    sparse_vector,
    token_index,
)
from agent.knowledge.tokenize import tokenize
from agent.ports import Embedder


def test_token_index_is_stable_across_processes() -> None:
    """crc32 is fixed, unlike hash(): stored vectors stay valid after a restart."""
    assert token_index("vacation") == 1675288437
    assert token_index("休暇") == token_index("休暇")
    assert 0 <= token_index("anything") < 2**31


def test_sparse_vector_is_sorted_saturated_and_deterministic() -> None:
    tokens = tokenize("Vacation vacation vacation days for new employees")
    indices, values = sparse_vector(tokens)
    assert indices == sorted(indices)
    assert len(indices) == len(set(indices)) == 4
    assert (indices, values) == sparse_vector(list(tokens))
    by_index = dict(zip(indices, values, strict=True))
    tf3 = by_index[token_index("vacation")]
    tf1 = by_index[token_index("day")]
    assert tf3 > tf1
    assert tf3 < 3 * tf1  # saturation: three mentions are worth less than 3×


def test_sparse_vector_length_normalisation() -> None:
    short = sparse_vector(["remote", "work"])
    long = sparse_vector(["remote", "work", *[f"filler{i}" for i in range(200)]])
    remote = token_index("remote")
    assert dict(zip(*short, strict=True))[remote] > dict(zip(*long, strict=True))[remote]


def test_empty_sparse_vectors() -> None:
    assert sparse_vector([]) == ([], [])
    assert query_sparse_vector([]) == ([], [])


def test_query_vector_has_one_per_distinct_token() -> None:
    indices, values = query_sparse_vector(["day", "day", "week"])
    assert len(indices) == 2
    assert values == [1.0, 1.0]


def test_lexical_similarity_is_share_of_query_terms() -> None:
    query = "How many vacation days do new employees get?"
    assert lexical_similarity(query, "New employees get 15 days of paid vacation.") == 1.0
    half = lexical_similarity(query, "Up to 5 unused vacation days can be carried over.")
    assert 0.3 < half < 0.8
    assert lexical_similarity(query, "Passwords must be 14 characters long.") == 0.0
    assert lexical_similarity("???", "anything") == 0.0


def test_lexical_similarity_japanese() -> None:
    query = "経費精算の締め切りはいつですか？"
    assert lexical_similarity(query, "経費精算の締め切りは翌月5日です。") == 1.0
    assert lexical_similarity(query, "有給休暇は年15日です。") == 0.0
    partial = lexical_similarity(query, "経費は経理部に申請してください。")
    assert 0.0 < partial < 1.0


def test_latin_keywords_match_whole_tokens_only() -> None:
    assert lexical_similarity("day", "today is sunny") == 0.0


async def test_hashing_embedder_is_a_deterministic_normalised_embedder() -> None:
    embedder: Embedder = HashingEmbedder()
    assert embedder.name == "offline-hashing"
    assert embedder.dimension == 512
    a, b, empty = await embedder.embed(["Remote work up to 3 days", "Remote work up to 3 days", ""])
    assert a == b
    assert len(a) == 512
    assert math.isclose(math.fsum(v * v for v in a), 1.0)
    assert all(v == 0.0 for v in empty)


async def test_hashing_embedder_separates_different_figures() -> None:
    """Texts stating different numbers must not look identical (source agreement)."""
    embedder = HashingEmbedder()
    three, one, three_again = await embedder.embed(
        [
            "Employees may work remotely up to 3 days per week.",
            "Employees may work remotely up to 1 days per week.",
            "Employees may work remotely up to 3 days per week!",
        ]
    )

    def cosine(x: list[float], y: list[float]) -> float:
        return sum(p * q for p, q in zip(x, y, strict=True))

    assert cosine(three, three_again) > 0.999
    assert cosine(three, one) < 0.95
