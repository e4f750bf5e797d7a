"""Retries and error mapping, through the real SDK's retry machinery."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import AsyncIterator

import pytest

from agent.errors import LLMError, NetworkError, RateLimitError
from agent.llm.gemini import CallPolicy, GeminiEmbedder, GeminiModel, make_gemini_client
from agent.ports import PlanRequest, ReasoningRequest
from tests.durable.helpers import free_port
from tests.fakes.fake_gemini import (
    BATCH_EMBED,
    GENERATE,
    CannedResponse,
    FakeGemini,
    error_body,
)

QUESTION = ReasoningRequest(query="What is our VPN policy?")


@pytest.fixture
async def one_shot(fake: FakeGemini) -> AsyncIterator[GeminiModel]:
    """A model that does not retry: each error maps straight through."""
    sdk = make_gemini_client(api_key="bad-key", base_url=fake.base_url)
    yield GeminiModel(client=sdk, policy=CallPolicy(attempts=1))
    await sdk.aio.aclose()


async def test_429_twice_then_success_is_retried(fake: FakeGemini, model: GeminiModel) -> None:
    fake.fail(429, times=2)
    fake.reply_text("Recovered.")

    reply = await model.reason(QUESTION)

    assert reply.value == "Recovered."
    assert len(fake.calls(GENERATE)) == 3


async def test_503_is_retried(fake: FakeGemini, model: GeminiModel) -> None:
    fake.fail(503)
    fake.reply_text("Back up.")

    reply = await model.reason(QUESTION)

    assert reply.value == "Back up."
    assert len(fake.calls(GENERATE)) == 2


def quota_body(delay: str) -> dict[str, object]:
    body = error_body(429, "Quota exceeded for generate_content_free_tier_requests")
    body["error"]["details"] = [  # type: ignore[index]
        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay}
    ]
    return body


async def test_persistent_429_is_rate_limit_error(fake: FakeGemini, model: GeminiModel) -> None:
    fake.enqueue(GENERATE, *[CannedResponse(quota_body("0.01s"), 429) for _ in range(3)])

    with pytest.raises(RateLimitError) as info:
        await model.reason(QUESTION)

    assert len(fake.calls(GENERATE)) == 3, "the policy allows 3 attempts"
    assert "Quota exceeded" in str(info.value)
    assert "gave up after 3 attempts" in str(info.value)
    assert info.value.retry_after == 0.01
    assert info.value.recoverable


async def test_persistent_429_makes_four_requests_and_waits_as_told(fake: FakeGemini) -> None:
    """The default policy: 4 requests at most, each after the server's retryDelay."""
    sdk = make_gemini_client(api_key="k", base_url=fake.base_url)
    model = GeminiModel(client=sdk, policy=CallPolicy(initial_delay=5.0))
    fake.set_responder(GENERATE, lambda _: CannedResponse(quota_body("0.3s"), 429))
    try:
        with pytest.raises(RateLimitError):
            await model.reason(QUESTION)
    finally:
        await sdk.aio.aclose()

    calls = fake.calls(GENERATE)
    assert len(calls) == 4
    gaps = [b.received_at - a.received_at for a, b in itertools.pairwise(calls)]
    assert all(gap >= 0.29 for gap in gaps), gaps
    assert all(gap < 4.0 for gap in gaps), "the server's 0.3 s, not our 5 s backoff"


async def test_a_retry_delay_past_the_deadline_ends_the_call_at_once(fake: FakeGemini) -> None:
    sdk = make_gemini_client(api_key="k", base_url=fake.base_url)
    model = GeminiModel(client=sdk, policy=CallPolicy(deadline_seconds=5.0))
    fake.set_responder(GENERATE, lambda _: CannedResponse(quota_body("37s"), 429))
    started = time.monotonic()
    try:
        with pytest.raises(RateLimitError) as info:
            await model.reason(QUESTION)
    finally:
        await sdk.aio.aclose()

    assert len(fake.calls(GENERATE)) == 1
    assert time.monotonic() - started < 3.0
    assert info.value.retry_after == 37.0


async def test_retry_after_header_is_honoured_on_503(fake: FakeGemini, model: GeminiModel) -> None:
    fake.fail(503, headers={"Retry-After": "0.3"})
    fake.reply_text("Back.")

    reply = await model.reason(QUESTION)

    first, second = fake.calls(GENERATE)
    assert reply.value == "Back."
    assert second.received_at - first.received_at >= 0.29


async def test_a_hanging_call_ends_within_its_deadline(fake: FakeGemini) -> None:
    sdk = make_gemini_client(api_key="k", base_url=fake.base_url)
    policy = CallPolicy(deadline_seconds=1.0, attempt_timeout_seconds=0.4, initial_delay=0.01)
    model = GeminiModel(client=sdk, policy=policy)
    never = asyncio.Event()
    fake.set_responder(GENERATE, lambda _: CannedResponse(hold=never))
    started = time.monotonic()
    try:
        with pytest.raises(NetworkError, match=r"timed out|ran out of time"):
            await model.reason(QUESTION)
    finally:
        never.set()
        await sdk.aio.aclose()

    elapsed = time.monotonic() - started
    assert elapsed < 2.0, elapsed
    assert 2 <= len(fake.calls(GENERATE)) <= 4


async def test_persistent_503_is_network_error(fake: FakeGemini, model: GeminiModel) -> None:
    fake.fail(503, times=3, message="The model is overloaded.")

    with pytest.raises(NetworkError, match="overloaded"):
        await model.reason(QUESTION)

    assert len(fake.calls(GENERATE)) == 3


@pytest.mark.parametrize("status", [400, 401, 403])
async def test_auth_errors_mention_api_key_and_model(
    fake: FakeGemini, one_shot: GeminiModel, status: int
) -> None:
    fake.fail(status, message="API key not valid. Please pass a valid API key.")

    with pytest.raises(LLMError) as info:
        await one_shot.reason(QUESTION)

    message = str(info.value)
    assert not isinstance(info.value, NetworkError | RateLimitError)
    assert "GOOGLE_API_KEY" in message
    assert "gemini-2.5-flash" in message
    assert "API key not valid" in message
    assert len(fake.calls(GENERATE)) == 1, f"{status} must not be retried"


async def test_404_mentions_model_name(fake: FakeGemini, one_shot: GeminiModel) -> None:
    fake.fail(404, message="models/gemini-9 is not found")

    with pytest.raises(LLMError, match="model name"):
        await one_shot.plan(PlanRequest(query="q"))


async def test_non_json_body_is_llm_error(fake: FakeGemini, one_shot: GeminiModel) -> None:
    fake.enqueue(GENERATE, CannedResponse(raw="<html>proxy login</html>"))

    with pytest.raises(LLMError, match="not JSON"):
        await one_shot.reason(QUESTION)


async def test_connection_refused_is_network_error_quickly() -> None:
    sdk = make_gemini_client(api_key="k", base_url=f"http://127.0.0.1:{free_port()}")
    policy = CallPolicy(attempts=2, initial_delay=0.01)
    model = GeminiModel(client=sdk, policy=policy)
    started = time.monotonic()
    try:
        with pytest.raises(NetworkError, match="could not reach the Gemini API"):
            await model.reason(QUESTION)
        with pytest.raises(NetworkError):
            await GeminiEmbedder(client=sdk, policy=policy).embed(["hello"])
    finally:
        await sdk.aio.aclose()
    assert time.monotonic() - started < 3.0


async def test_a_refused_connection_names_the_host_and_the_reason() -> None:
    """Issue 23: the message said `ssl:<ssl.SSLContext object at 0x…>`, not what failed."""
    port = free_port()
    sdk = make_gemini_client(api_key="k", base_url=f"http://127.0.0.1:{port}")
    try:
        with pytest.raises(NetworkError) as info:
            await GeminiModel(client=sdk, policy=CallPolicy(attempts=1)).reason(QUESTION)
    finally:
        await sdk.aio.aclose()

    message = str(info.value)
    assert f"cannot connect to 127.0.0.1:{port}: connection refused" in message, message
    assert "could not reach the Gemini API" in message
    assert "object at 0x" not in message and "SSLContext" not in message, message


async def test_a_reset_connection_says_so_and_is_retried(fake: FakeGemini) -> None:
    sdk = make_gemini_client(api_key="k", base_url=fake.base_url)
    policy = CallPolicy(attempts=2, initial_delay=0.01)
    fake.enqueue(GENERATE, CannedResponse(reset=True), CannedResponse(reset=True))
    try:
        with pytest.raises(NetworkError) as info:
            await GeminiModel(client=sdk, policy=policy).reason(QUESTION)
    finally:
        await sdk.aio.aclose()

    message = str(info.value)
    assert len(fake.calls(GENERATE)) == 2, "a reset connection is worth another attempt"
    assert "could not reach the Gemini API (connection reset by the server)" in message, message
    assert "gave up after 2 attempts" in message
    assert "object at 0x" not in message, message


async def test_timeout_is_network_error(fake: FakeGemini) -> None:
    sdk = make_gemini_client(api_key="k", base_url=fake.base_url, timeout_ms=150)
    fake.enqueue(GENERATE, CannedResponse(delay=0.4))
    try:
        with pytest.raises(NetworkError, match="timed out"):
            await GeminiModel(client=sdk, policy=CallPolicy(attempts=1)).reason(QUESTION)
    finally:
        await sdk.aio.aclose()


async def test_embedding_rate_limit_is_mapped(fake: FakeGemini, embedder: GeminiEmbedder) -> None:
    fake.fail(429, times=3, route=BATCH_EMBED)

    with pytest.raises(RateLimitError, match="embedding"):
        await embedder.embed(["a"])


def test_empty_api_key_is_refused() -> None:
    with pytest.raises(LLMError, match="GOOGLE_API_KEY"):
        make_gemini_client(api_key=" ")
