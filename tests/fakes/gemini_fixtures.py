"""Shared pytest fixtures: a fake Gemini server and a real google-genai client pointed
at it (registered for the whole suite in tests/conftest.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from google import genai

from agent.llm.gemini import CallPolicy, make_gemini_client
from tests.fakes.fake_gemini import FakeGemini

API_KEY = "test-key-123"
FAST_POLICY = CallPolicy(
    attempts=3, deadline_seconds=10.0, attempt_timeout_seconds=5.0, initial_delay=0.01
)
"""Three attempts with tiny delays: retries are exercised but tests stay fast."""


@pytest.fixture
async def fake() -> AsyncIterator[FakeGemini]:
    async with FakeGemini() as server:
        yield server


@pytest.fixture
async def client(fake: FakeGemini) -> AsyncIterator[genai.Client]:
    """The SDK client (its own retries off) pointed at the fake server."""
    sdk = make_gemini_client(api_key=API_KEY, base_url=fake.base_url)
    yield sdk
    await sdk.aio.aclose()
