"""Fixtures on top of the suite-wide fake Gemini server and client (tests/conftest.py).

The whole-agent Gemini tests (test_gemini_end_to_end.py, test_gemini_failures.py) build
orchestrators on the real sample knowledge base with the agent tests' fixtures, imported
here rather than copied."""

from __future__ import annotations

import pytest
from google import genai

from agent.llm.gemini import GeminiEmbedder, GeminiModel
from tests.agent.conftest import (  # noqa: F401 - pytest finds fixtures by name here
    kb,
    make_orchestrator,
    sample_kb_template,
    store,
)
from tests.fakes.gemini_fixtures import FAST_POLICY


@pytest.fixture
def model(client: genai.Client) -> GeminiModel:
    return GeminiModel(client=client, policy=FAST_POLICY)


@pytest.fixture
def embedder(client: genai.Client) -> GeminiEmbedder:
    return GeminiEmbedder(client=client, dimension=64, policy=FAST_POLICY)
