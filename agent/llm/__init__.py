"""Language models and embedders behind the agent's ports (`agent/ports.py`).

- `offline.py` — `OfflineModel`, the deterministic default (no network, no key);
  `rephrase.py` its question rewording for retried searches;
- `gemini/` — the Gemini provider: `client.py` (SDK client, error mapping, the call
  wrapper), `responses.py` (usage, text, safety blocks, structured output), `chat.py`
  (`GeminiModel`), `embedder.py` (`GeminiEmbedder`);
- provider-neutral parts any adapter uses: `transport.py` (transport errors told as host
  and reason, `CallPolicy`, the one retry loop with its deadline and request budget),
  `json_repair.py` (JSON out of a model's reply), `schemas.py` (the JSON shapes asked for
  and their coercion into the agent's types).
"""
