"""Fixtures on top of the suite-wide fake Gemini server and client (tests/conftest.py)."""

from __future__ import annotations

import pytest
from google import genai

from agent.llm.gemini import GeminiEmbedder, GeminiModel
from tests.fakes.gemini_fixtures import FAST_POLICY


@pytest.fixture
def model(client: genai.Client) -> GeminiModel:
    return GeminiModel(client=client, policy=FAST_POLICY)


@pytest.fixture
def embedder(client: genai.Client) -> GeminiEmbedder:
    return GeminiEmbedder(client=client, dimension=64, policy=FAST_POLICY)
