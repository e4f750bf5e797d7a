"""Shared pytest fixtures: a fake Gemini server and a real google-genai client pointed
at it (registered for the whole suite in tests/conftest.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from google import genai

from agent.llm.gemini import make_gemini_client
from tests.fakes.fake_gemini import FakeGemini

API_KEY = "test-key-123"


@pytest.fixture
async def fake() -> AsyncIterator[FakeGemini]:
    async with FakeGemini() as server:
        yield server


@pytest.fixture
async def client(fake: FakeGemini) -> AsyncIterator[genai.Client]:
    """Three attempts with tiny delays: retries are exercised but tests stay fast."""
    sdk = make_gemini_client(
        api_key=API_KEY, base_url=fake.base_url, attempts=3, initial_delay=0.01
    )
    yield sdk
    await sdk.aio.aclose()
