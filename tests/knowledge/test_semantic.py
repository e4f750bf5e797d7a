"""Aboutness: cosine, minus a penalty for the words the question insists on."""

from __future__ import annotations

import pytest

from agent.knowledge.semantic import aboutness, insisted_words
from agent.knowledge.tokenize import tokenize
from agent.llm.sentence_encoder import SentenceEncoder


def test_a_word_insists_only_when_it_tells_the_candidates_apart() -> None:
    candidates = [frozenset({"parking", "daily", "visitor"}), frozenset({"parking", "staff"})]
    assert insisted_words(["daily", "visitor", "parking", "gym"], candidates) == (
        "daily",
        "visitor",
    )
    assert insisted_words(["parking"], [frozenset({"parking"})]) == ()


def test_the_penalty_can_overturn_a_higher_cosine() -> None:
    question = ["daily", "visitor", "rate"]
    tokens = [frozenset({"monthly", "staff", "permit"}), frozenset({"daily", "visitor", "fee"})]
    vectors = [[1.0, 0.0], [0.8, 0.6]]  # the neighbour is closer by meaning alone
    plain = aboutness(question, [1.0, 0.0], tokens, vectors, penalty=0.0)
    assert plain[0].score > plain[1].score
    scored = aboutness(question, [1.0, 0.0], tokens, vectors, penalty=0.5)
    assert scored[0].missing == ("daily", "visitor")
    assert scored[1].missing == ()
    assert scored[1].score > scored[0].score
    assert scored[0].similarity == pytest.approx(1.0)


def test_one_vector_per_candidate() -> None:
    with pytest.raises(ValueError, match="one token set and one vector"):
        aboutness(["a"], [1.0], [frozenset()], [])


async def test_with_the_real_encoder_the_asked_subject_wins() -> None:
    encoder = SentenceEncoder()
    question = "What is the daily rate for visitor parking?"
    sentences = [
        "Staff parking permits cost 40 dollars per month.",
        "Visitor parking is 5 dollars per day.",
    ]
    scored = aboutness(
        tokenize(question),
        await encoder.embed_query(question),
        [frozenset(tokenize(s)) for s in sentences],
        await encoder.embed_documents(sentences),
    )
    assert scored[1].score > scored[0].score
