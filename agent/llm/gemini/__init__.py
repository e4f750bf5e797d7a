"""The Gemini provider (moved from agent/llm/gemini.py; split by concern next)."""

from agent.llm.gemini.chat import (
    DEFAULT_EMBEDDING_MODEL,
    DEFAULT_MODEL,
    CallPolicy,
    GeminiEmbedder,
    GeminiModel,
    extract_json,
    make_gemini_client,
)

__all__ = [
    "DEFAULT_EMBEDDING_MODEL",
    "DEFAULT_MODEL",
    "CallPolicy",
    "GeminiEmbedder",
    "GeminiModel",
    "extract_json",
    "make_gemini_client",
]
