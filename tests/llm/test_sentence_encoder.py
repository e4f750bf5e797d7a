"""The shipped sentence encoder with its real model: shape, meaning across languages,
batching, and its place among the retrieval embedders."""

from __future__ import annotations

import asyncio
import math
import threading

from agent.embedding import LoadingEmbedder, RetrievalEmbedder, dense_only_keep, embed_query
from agent.llm.sentence_encoder import DIMENSION, SentenceEncoder
from agent.ports import Embedder


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


async def test_vectors_are_512_unit_floats_in_order() -> None:
    encoder = SentenceEncoder()
    texts = ["Visitors pay 5 dollars a day for parking.", "The office opens at 9."]
    vectors = await encoder.embed(texts)
    assert len(vectors) == 2
    for vector in vectors:
        assert len(vector) == DIMENSION == encoder.dimension
        assert all(isinstance(v, float) for v in vector)
        assert math.isclose(math.sqrt(sum(v * v for v in vector)), 1.0, abs_tol=1e-3)
    # order kept: each text's vector alone is the same as in the batch
    (second,) = await encoder.embed(texts[1:])
    assert cosine(second, vectors[1]) > 0.999


async def test_meaning_bridges_languages() -> None:
    encoder = SentenceEncoder()
    question = await encoder.embed_query("What is the daily visitor parking rate?")
    visitor_ja, staff_en = await encoder.embed_documents(
        ["来客用駐車場の料金は1日5ドルです。", "Staff parking permits cost 40 dollars a month."]
    )
    weather = (await encoder.embed(["The weather in spring is mild and rainy."]))[0]
    assert cosine(question, visitor_ja) > cosine(question, weather)
    assert cosine(question, staff_en) > cosine(question, weather)


async def test_batches_larger_than_one_hand_off_and_empty_input() -> None:
    encoder = SentenceEncoder()
    texts = [f"Rule number {n} of the handbook." for n in range(150)]
    vectors = await encoder.embed(texts)
    assert len(vectors) == 150
    assert await encoder.embed([]) == []


async def test_encoding_runs_off_the_event_loop_in_one_worker_thread() -> None:
    encoder = SentenceEncoder()
    await encoder.load()
    loop_thread = threading.get_ident()
    seen: set[int] = set()
    original = encoder._encode

    def spy(texts: list[str]) -> list[list[float]]:
        seen.add(threading.get_ident())
        return original(texts)

    encoder._encode = spy  # type: ignore[method-assign]
    await asyncio.gather(*(encoder.embed([f"question {n}"]) for n in range(6)))
    assert len(seen) == 1
    assert loop_thread not in seen


async def test_is_a_retrieval_embedder_with_its_own_keep_threshold() -> None:
    encoder = SentenceEncoder()
    assert isinstance(encoder, RetrievalEmbedder)
    assert isinstance(encoder, LoadingEmbedder)
    port: Embedder = encoder
    assert port.name == "use-multilingual-v3"
    assert dense_only_keep(encoder) == encoder.dense_only_keep < 0.8
    vector = await embed_query(encoder, "How long is the probation period?")
    assert len(vector) == DIMENSION
