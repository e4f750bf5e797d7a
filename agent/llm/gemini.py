"""Gemini implementations of `LanguageModel` and `Embedder` (SPEC §3).

Uses the official `google-genai` SDK's async client. The client is injected (built with
`make_gemini_client`) so tests can point it at a local fake server and the application
decides retries and timeouts in one place. The SDK retries 408/429/5xx and dropped
connections itself; this module turns whatever still fails into the agent's error
classes (`agent.errors`) with messages fit to show a user, and never trusts structured
output blindly: invalid JSON is repaired, then retried once, then reported.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import aiohttp
import httpx
from google import genai
from google.genai import errors as genai_errors
from google.genai import types
from pydantic import BaseModel, ValidationError

from agent.errors import GraceError, LLMError, NetworkError, PlanningError, RateLimitError
from agent.ports import (
    Evaluation,
    EvaluationRequest,
    LLMReply,
    PlanRequest,
    ReasoningRequest,
)
from agent.prompts import build_evaluation_prompt, build_plan_prompt, build_reasoning_prompt
from agent.schemas import PlanDraft, TokenUsage

M = TypeVar("M", bound=BaseModel)
logger = logging.getLogger(__name__)

DEFAULT_MODEL = "gemini-2.5-flash"
DEFAULT_EMBEDDING_MODEL = "gemini-embedding-001"
RETRY_STATUS_CODES = (408, 429, 500, 502, 503, 504)
EMBED_BATCH_LIMIT = 100
"""The Gemini API accepts at most 100 texts per batchEmbedContents call."""
UNPARSABLE_EVALUATION = "unparsable evaluation"

_TRANSPORT_ERRORS: tuple[type[BaseException], ...] = (
    aiohttp.ClientError,
    httpx.TransportError,
    asyncio.TimeoutError,
    OSError,  # ConnectionRefusedError & co. when they escape the HTTP library
)
_TIMEOUT_ERRORS: tuple[type[BaseException], ...] = (asyncio.TimeoutError, httpx.TimeoutException)
try:  # the SDK may use httpx2 for some transports; map its errors the same way
    import httpx2  # type: ignore[import-not-found]

    _TRANSPORT_ERRORS = (*_TRANSPORT_ERRORS, httpx2.TransportError)
    _TIMEOUT_ERRORS = (*_TIMEOUT_ERRORS, httpx2.TimeoutException)
except ImportError:  # pragma: no cover - depends on the installed SDK extras
    pass


def make_gemini_client(
    *,
    api_key: str,
    base_url: str | None = None,
    attempts: int = 4,
    initial_delay: float = 1.0,
    timeout_ms: int | None = None,
) -> genai.Client:
    """Build the SDK client with retries on 408/429/5xx and connection errors.

    `base_url` points the client at another endpoint (a proxy or the test fake); the
    Gemini Developer API path version `v1beta` is then set explicitly. Jitter scales with
    `initial_delay` (the SDK's default is a fixed second), so tiny delays stay tiny.
    """
    if not api_key or not api_key.strip():
        raise LLMError("Gemini needs an API key: set GOOGLE_API_KEY (it is empty).")
    retry = types.HttpRetryOptions(
        attempts=max(1, attempts),
        initial_delay=initial_delay,
        jitter=initial_delay,
        http_status_codes=list(RETRY_STATUS_CODES),
    )
    options = types.HttpOptions(retry_options=retry, timeout=timeout_ms)
    if base_url:
        options.base_url = base_url
        options.api_version = "v1beta"
    return genai.Client(api_key=api_key, http_options=options)


# --------------------------------------------------------------------------- helpers


def usage_from(response: types.GenerateContentResponse) -> TokenUsage:
    """Token usage of one call. Thinking tokens are billed as output, so they count there."""
    meta = response.usage_metadata
    if meta is None:
        return TokenUsage(calls=1)
    output = (meta.candidates_token_count or 0) + (meta.thoughts_token_count or 0)
    return TokenUsage(input_tokens=meta.prompt_token_count or 0, output_tokens=output, calls=1)


def _enum_name(value: Any) -> str:
    return str(getattr(value, "value", value))


def response_text(response: types.GenerateContentResponse) -> str | None:
    """The first candidate's text, or None when there is none (blocked, empty)."""
    if not response.candidates:
        return None
    candidate = response.candidates[0]
    if candidate.content is None or not candidate.content.parts:
        return None
    parts = [p.text for p in candidate.content.parts if p.text and not p.thought]
    return "".join(parts) if parts else None


def describe_empty(response: types.GenerateContentResponse) -> str:
    """Why a response carries no text: prompt blocked, no candidates, or the finish reason."""
    feedback = response.prompt_feedback
    if feedback is not None and feedback.block_reason is not None:
        detail = f": {feedback.block_reason_message}" if feedback.block_reason_message else ""
        return f"the prompt was blocked (block reason {_enum_name(feedback.block_reason)}){detail}"
    if not response.candidates:
        return "the response had no candidates"
    candidate = response.candidates[0]
    reason = _enum_name(candidate.finish_reason) if candidate.finish_reason else "unknown"
    message = f": {candidate.finish_message}" if candidate.finish_message else ""
    return f"the response was empty (finish reason {reason}){message}"


_FENCE = re.compile(r"```[ \t]*[A-Za-z0-9_-]*[ \t]*\n?(.*?)```", re.DOTALL)


def _balanced_end(text: str, start: int) -> int | None:
    """Index just past the bracket matching `text[start]`, skipping JSON strings."""
    opening = text[start]
    closing = "}" if opening == "{" else "]"
    depth = 0
    in_string = False
    escaped = False
    for index in range(start, len(text)):
        char = text[index]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char == opening:
            depth += 1
        elif char == closing:
            depth -= 1
            if depth == 0:
                return index + 1
    return None


def extract_json(text: str) -> str | None:
    """Best-effort JSON text out of a model reply: drop markdown fences and prose around
    the outermost object (or array). None when there is no bracket at all."""
    fenced = _FENCE.search(text)
    candidate = fenced.group(1) if fenced else text
    candidate = candidate.strip()
    starts = [i for i in (candidate.find("{"), candidate.find("[")) if i >= 0]
    if not starts:
        return None
    start = min(starts)
    end = _balanced_end(candidate, start)
    if end is None:  # unbalanced: take everything up to the last closing bracket
        closing = "}" if candidate[start] == "{" else "]"
        last = candidate.rfind(closing)
        return candidate[start : last + 1] if last > start else candidate[start:]
    return candidate[start:end]


def _short(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _validation_summary(exc: ValidationError) -> str:
    problems = []
    for error in exc.errors()[:3]:
        where = ".".join(str(p) for p in error["loc"]) or "(root)"
        problems.append(f"{where}: {error['msg']}")
    more = f" (+{exc.error_count() - 3} more)" if exc.error_count() > 3 else ""
    return "; ".join(problems) + more


def parse_structured(
    response: types.GenerateContentResponse, coerce: Callable[[Any], M]
) -> tuple[M | None, str]:
    """Turn a structured-output response into a model, repairing what can be repaired.

    Returns (value, "") or (None, what was wrong) — the caller decides to retry or fail.
    """
    parsed = response.parsed
    if isinstance(parsed, BaseModel):
        data: Any = parsed.model_dump()
    else:
        text = response_text(response)
        if text is None or not text.strip():
            return None, describe_empty(response)
        raw = extract_json(text)
        if raw is None:
            return None, f"no JSON object in the reply (it began {_short(text)!r})"
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            return None, f"invalid JSON ({exc.msg} at char {exc.pos}; reply began {_short(text)!r})"
    try:
        return coerce(data), ""
    except ValidationError as exc:
        return None, f"JSON did not match the schema ({_validation_summary(exc)})"
    except (ValueError, TypeError) as exc:
        return None, str(exc)


def _clamp01(value: Any) -> Any:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return value  # let validation report it
    if math.isnan(number):
        return value
    return min(1.0, max(0.0, number))


def _coerce_plan(data: Any) -> PlanDraft:
    """A bare list of steps is accepted as a plan; a plan with no steps is not."""
    if isinstance(data, list):
        data = {"steps": data}
    if not isinstance(data, dict):
        raise ValueError(f"expected a JSON object, got {type(data).__name__}")
    data = dict(data)
    if "complexity" in data and data["complexity"] is not None:
        data["complexity"] = _clamp01(data["complexity"])
    draft = PlanDraft.model_validate(data)
    if not draft.steps:
        raise ValueError("the plan has no steps")
    return draft


def _coerce_evaluation(data: Any) -> Evaluation:
    """Scores outside 0..1 are clamped rather than rejected: the judgement is still useful."""
    if not isinstance(data, dict):
        raise ValueError(f"expected a JSON object, got {type(data).__name__}")
    data = dict(data)
    for key in ("self_eval", "coverage"):
        if key in data:
            data[key] = _clamp01(data[key])
    if "self_eval" not in data and "coverage" not in data:
        raise ValueError("neither self_eval nor coverage present")
    if data.get("rationale") is None:
        data["rationale"] = ""
    return Evaluation.model_validate(data)


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
    """Translate an SDK HTTP error (after the SDK's own retries) into an agent error."""
    code = exc.code or 0
    status = f" {exc.status}" if exc.status else ""
    detail = _short(str(exc.message or exc.details or ""), 300)
    where = f"Gemini {what} with model {model!r}"
    if code == 429:
        return RateLimitError(
            f"{where} hit the rate limit or quota (429{status}) even after retrying: {detail}",
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
            f"{where} failed: the Gemini service is unavailable ({code}{status}) even after "
            f"retrying: {detail}"
        )
    return LLMError(f"{where} failed ({code}{status}): {detail}")


def map_transport_error(exc: BaseException, *, model: str, what: str) -> NetworkError:
    """Connection refused, DNS, TLS, timeouts: the network, not the model."""
    if isinstance(exc, _TIMEOUT_ERRORS):
        kind = "timed out"
    else:
        kind = "could not reach the Gemini API"
    detail = _short(str(exc) or type(exc).__name__, 300)
    return NetworkError(
        f"Gemini {what} with model {model!r} {kind} ({type(exc).__name__}: {detail}). "
        "Check network access to generativelanguage.googleapis.com (or the configured "
        "base URL)."
    )


async def _call(what: str, model: str, call: Callable[[], Awaitable[Any]]) -> Any:
    """Await an SDK call, converting every expected failure into an agent error."""
    try:
        return await call()
    except genai_errors.APIError as exc:
        raise map_api_error(exc, model=model, what=what) from exc
    except genai_errors.UnknownApiResponseError as exc:
        raise LLMError(f"Gemini {what} with model {model!r}: unexpected response: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise LLMError(
            f"Gemini {what} with model {model!r}: the server answered with something that is "
            f"not JSON ({exc.msg}); is the base URL right?"
        ) from exc
    except _TRANSPORT_ERRORS as exc:
        raise map_transport_error(exc, model=model, what=what) from exc


# --------------------------------------------------------------------------- the model


class GeminiModel:
    """`LanguageModel` backed by Gemini: structured planning and evaluation, text answers."""

    def __init__(
        self,
        *,
        client: genai.Client,
        model: str = DEFAULT_MODEL,
        temperature: float = 0.2,
        thinking_budget: int | None = None,
    ) -> None:
        self._client = client
        self._model = model
        self._temperature = temperature
        self._thinking_budget = thinking_budget

    @property
    def name(self) -> str:
        return self._model

    def _config(self, *, schema: type[BaseModel] | None = None) -> types.GenerateContentConfig:
        config = types.GenerateContentConfig(temperature=self._temperature)
        if schema is not None:
            config.response_mime_type = "application/json"
            config.response_schema = schema
        if self._thinking_budget is not None:
            config.thinking_config = types.ThinkingConfig(thinking_budget=self._thinking_budget)
        return config

    async def _generate(
        self, prompt: str, config: types.GenerateContentConfig, what: str
    ) -> types.GenerateContentResponse:
        response: types.GenerateContentResponse = await _call(
            what,
            self._model,
            lambda: self._client.aio.models.generate_content(
                model=self._model, contents=prompt, config=config
            ),
        )
        return response

    async def _structured(
        self, prompt: str, schema: type[M], coerce: Callable[[Any], M], what: str
    ) -> tuple[M | None, TokenUsage, str, str]:
        """Ask for JSON; repair it; ask once more if unrepairable.

        Returns (value or None, usage of all calls, problems, model version).
        """
        usage = TokenUsage()
        problems: list[str] = []
        version = self._model
        for attempt in (1, 2):
            response = await self._generate(prompt, self._config(schema=schema), what)
            usage += usage_from(response)
            version = response.model_version or self._model
            value, problem = parse_structured(response, coerce)
            if value is not None:
                return value, usage, "", version
            problems.append(f"attempt {attempt}: {problem}")
        return None, usage, "; ".join(problems), version

    async def plan(self, request: PlanRequest) -> LLMReply[PlanDraft]:
        """A plan draft; the planner validates and repairs it (SPEC §2.2)."""
        draft, usage, problems, version = await self._structured(
            build_plan_prompt(request), PlanDraft, _coerce_plan, "planning"
        )
        if draft is None:
            raise PlanningError(
                f"Gemini ({self._model}) did not return a usable plan after 2 attempts "
                f"— {problems}",
                usage=usage,
            )
        return LLMReply[PlanDraft](value=draft, usage=usage, model=version)

    async def reason(self, request: ReasoningRequest) -> LLMReply[str]:
        """A cited answer from the passages; an empty or blocked reply is an error."""
        response = await self._generate(
            build_reasoning_prompt(request), self._config(), "reasoning"
        )
        text = response_text(response)
        if text is None or not text.strip():
            raise LLMError(f"Gemini ({self._model}) returned no answer: {describe_empty(response)}")
        return LLMReply[str](
            value=text.strip(),
            usage=usage_from(response),
            model=response.model_version or self._model,
        )

    async def evaluate(self, request: EvaluationRequest) -> LLMReply[Evaluation]:
        """Self-evaluation + coverage; unparsable twice → 0.5 / 0.5 (SPEC §2.5 default)."""
        evaluation, usage, problems, version = await self._structured(
            build_evaluation_prompt(request), Evaluation, _coerce_evaluation, "evaluation"
        )
        if evaluation is None:
            logger.warning("Gemini (%s) evaluation unparsable: %s", self._model, problems)
            evaluation = Evaluation(self_eval=0.5, coverage=0.5, rationale=UNPARSABLE_EVALUATION)
        return LLMReply[Evaluation](value=evaluation, usage=usage, model=version)


# --------------------------------------------------------------------------- embeddings


def _normalise(values: Sequence[float]) -> list[float]:
    """Unit length: Gemini only normalises full-size (3072) embeddings itself."""
    norm = math.sqrt(sum(v * v for v in values))
    if norm == 0.0:
        return [float(v) for v in values]
    return [float(v) / norm for v in values]


class GeminiEmbedder:
    """`Embedder` backed by `gemini-embedding-001` (Matryoshka: any dimension ≤ 3072)."""

    def __init__(
        self,
        *,
        client: genai.Client,
        model: str = DEFAULT_EMBEDDING_MODEL,
        dimension: int = 768,
        task_type: str | None = None,
        batch_size: int = EMBED_BATCH_LIMIT,
    ) -> None:
        if dimension < 1:
            raise ValueError("dimension must be positive")
        self._client = client
        self._model = model
        self._dimension = dimension
        self._task_type = task_type
        self._batch_size = max(1, min(batch_size, EMBED_BATCH_LIMIT))

    @property
    def name(self) -> str:
        return self._model

    @property
    def dimension(self) -> int:
        return self._dimension

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit vector per text, in order; batches of ≤ 100 texts per request."""
        vectors: list[list[float]] = []
        config = types.EmbedContentConfig(
            output_dimensionality=self._dimension, task_type=self._task_type
        )
        for start in range(0, len(texts), self._batch_size):
            # the API rejects empty content; a blank stands in for an empty text
            chunk: list[str | types.Content] = [
                t if t.strip() else " " for t in texts[start : start + self._batch_size]
            ]
            response: types.EmbedContentResponse = await _call(
                "embedding",
                self._model,
                lambda chunk=chunk: self._client.aio.models.embed_content(
                    model=self._model, contents=chunk, config=config
                ),
            )
            embeddings = response.embeddings or []
            if len(embeddings) != len(chunk):
                raise LLMError(
                    f"Gemini embedding with model {self._model!r} returned {len(embeddings)} "
                    f"vectors for {len(chunk)} texts"
                )
            for embedding in embeddings:
                values = embedding.values or []
                if len(values) != self._dimension:
                    raise LLMError(
                        f"Gemini embedding with model {self._model!r} returned a vector of "
                        f"{len(values)} dimensions, expected {self._dimension}"
                    )
                vectors.append(_normalise(values))
        return vectors
