"""The Gemini provider (google-genai SDK), one module per concern:

- `client.py` — the SDK client factory (its own retries off), SDK and transport failures
  mapped to agent errors, and `call_gemini`: each request under the shared retry policy
  (`agent.llm.transport`);
- `responses.py` — reading a response: token usage, text, safety blocks, structured output
  (repaired with the provider-neutral `agent.llm.json_repair`);
- `chat.py` — `GeminiModel`, the `LanguageModel`: plans, answers, self-evaluations;
- `embedder.py` — `GeminiEmbedder`, the `Embedder` (`gemini-embedding-001`).

What the rest of GRACE uses is importable from here.
"""

from agent.llm.gemini.chat import DEFAULT_MODEL, CallKind, CallLimits, GeminiModel
from agent.llm.gemini.client import call_gemini, make_gemini_client
from agent.llm.gemini.embedder import DEFAULT_EMBEDDING_MODEL, GeminiEmbedder
from agent.llm.transport import CallPolicy

__all__ = [
    "DEFAULT_EMBEDDING_MODEL",
    "DEFAULT_MODEL",
    "CallKind",
    "CallLimits",
    "CallPolicy",
    "GeminiEmbedder",
    "GeminiModel",
    "call_gemini",
    "make_gemini_client",
]
