"""The Gemini transport: the SDK client, its failures as agent errors, and the call wrapper.

One retry layer: the SDK's own retries are off (`make_gemini_client`), and every request
goes through `call_gemini`, i.e. the shared `agent.llm.transport.call_with_retries`
(408/429/5xx, dropped connections and hung requests retried with backoff, the server's
`retryDelay` / `Retry-After` honoured, never past the call's deadline). Whatever still
fails becomes one of the agent's error classes (`agent.errors`) with a message fit to
show a user, naming the call, the model and what to check.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from google import genai
from google.genai import errors as genai_errors
from google.genai import types

from agent.errors import GraceError, LLMError, NetworkError, RateLimitError
from agent.llm.transport import (
    TRANSPORT_ERRORS,
    CallPolicy,
    call_with_retries,
    describe_transport_error,
    is_timeout,
    short,
)


def make_gemini_client(
    *,
    api_key: str,
    base_url: str | None = None,
    timeout_ms: int | None = None,
) -> genai.Client:
    """Build the SDK client with its own retries off: `call_gemini` is the one retry layer.

    `base_url` points the client at another endpoint (a proxy or the test fake); the
    Gemini Developer API path version `v1beta` is then set explicitly. An explicit
    one-attempt retry option also stops the SDK's hidden 1–10 s sleep on a refused
    connection.
    """
    if not api_key or not api_key.strip():
        raise LLMError("Gemini needs an API key: set GOOGLE_API_KEY (it is empty).")
    retry = types.HttpRetryOptions(attempts=1)
    options = types.HttpOptions(retry_options=retry, timeout=timeout_ms)
    if base_url:
        options.base_url = base_url
        options.api_version = "v1beta"
    return genai.Client(api_key=api_key, http_options=options)


def _retry_after(exc: genai_errors.APIError) -> float | None:
    """Seconds the server asked us to wait: RetryInfo.retryDelay ("37s") or Retry-After."""

    def walk(node: Any) -> float | None:
        if isinstance(node, dict):
            delay = node.get("retryDelay")
            if isinstance(delay, str) and delay.endswith("s"):
                try:
                    return float(delay[:-1])
                except ValueError:
                    pass
            for value in node.values():
                found = walk(value)
                if found is not None:
                    return found
        elif isinstance(node, list):
            for value in node:
                found = walk(value)
                if found is not None:
                    return found
        return None

    found = walk(exc.details)
    if found is not None:
        return found
    headers = getattr(exc.response, "headers", None)
    if headers is not None:
        try:
            value = headers.get("Retry-After")
            return float(value) if value is not None else None
        except (TypeError, ValueError, AttributeError):
            return None
    return None


def map_api_error(exc: genai_errors.APIError, *, model: str, what: str) -> GraceError:
    """Translate an SDK HTTP error into an agent error (recoverable ones get retried)."""
    code = exc.code or 0
    status = f" {exc.status}" if exc.status else ""
    detail = short(str(exc.message or exc.details or ""), 300)
    where = f"Gemini {what} with model {model!r}"
    if code == 429:
        return RateLimitError(
            f"{where} hit the rate limit or quota (429{status}): {detail}",
            retry_after=_retry_after(exc),
        )
    if code == 400:
        return LLMError(
            f"{where} was rejected (400{status}): {detail}. Check that GOOGLE_API_KEY is "
            f"valid and that the model name {model!r} is right."
        )
    if code in (401, 403):
        return LLMError(
            f"{where} was not authorised ({code}{status}): {detail}. Check that GOOGLE_API_KEY "
            f"is valid and allowed to use model {model!r}."
        )
    if code == 404:
        return LLMError(
            f"{where} failed: model or endpoint not found (404{status}): {detail}. "
            f"Check the model name {model!r}."
        )
    if code == 408 or code in (500, 502, 503, 504):
        return NetworkError(
            f"{where} failed: the Gemini service is unavailable ({code}{status}): {detail}",
            retry_after=_retry_after(exc),
        )
    return LLMError(f"{where} failed ({code}{status}): {detail}")


def map_transport_error(exc: BaseException, *, model: str, what: str) -> NetworkError:
    """Connection refused, DNS, TLS, timeouts: the network, not the model."""
    if is_timeout(exc):
        detail = short(str(exc) or type(exc).__name__, 300)
        kind = f"timed out ({type(exc).__name__}: {detail})"
    else:
        kind = f"could not reach the Gemini API ({describe_transport_error(exc)})"
    return NetworkError(
        f"Gemini {what} with model {model!r} {kind}. Check network access to "
        "generativelanguage.googleapis.com (or the configured base URL)."
    )


def map_exception(exc: BaseException, *, model: str, what: str) -> GraceError | None:
    """Any failure of one SDK request as an agent error; None when it is not ours to map."""
    if isinstance(exc, GraceError):
        return exc
    if isinstance(exc, genai_errors.APIError):
        return map_api_error(exc, model=model, what=what)
    if isinstance(exc, genai_errors.UnknownApiResponseError):
        return LLMError(f"Gemini {what} with model {model!r}: unexpected response: {exc}")
    if isinstance(exc, json.JSONDecodeError):
        return LLMError(
            f"Gemini {what} with model {model!r}: the server answered with something that is "
            f"not JSON ({exc.msg}); is the base URL right?"
        )
    if isinstance(exc, TRANSPORT_ERRORS):
        return map_transport_error(exc, model=model, what=what)
    return None


async def call_gemini(
    what: str,
    model: str,
    policy: CallPolicy,
    call: Callable[[], Awaitable[Any]],
) -> Any:
    """Await an SDK call under `policy` (`agent.llm.transport.call_with_retries`), its
    failures mapped to agent errors that name the call (`what`) and the model."""
    return await call_with_retries(
        call,
        policy=policy,
        map_error=lambda exc: map_exception(exc, model=model, what=what),
        service="Gemini",
        what=what,
        model=model,
    )
