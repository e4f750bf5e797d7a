"""Gemini implementations of `LanguageModel` and `Embedder` (SPEC §3).

Uses the official `google-genai` SDK's async client. The client is injected (built with
`make_gemini_client`) so tests can point it at a local fake server.

One retry layer: the SDK's own retries are off, and every call goes through `call_gemini`,
which retries 408/429/5xx, dropped connections and hung requests with backoff, honours the
server's `retryDelay` / `Retry-After`, and never runs past the call's total deadline
(`CallPolicy`). Whatever still fails becomes one of the agent's error classes
(`agent.errors`) with a message fit to show a user, carrying the tokens already spent.

Structured output is never trusted blindly: invalid JSON is repaired, then asked for once
more with the problem named; a blocked prompt is rephrased once (less material, a note),
never resent as is. Every response's usage counts, whatever became of the response.
"""

from __future__ import annotations

import asyncio
import copy
import functools
import itertools
import json
import logging
import math
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, TypeVar

import aiohttp
import httpx
import tenacity
from google import genai
from google.genai import errors as genai_errors
from google.genai import types
from pydantic import BaseModel, ValidationError

from agent.budget import current_budget
from agent.errors import (
    BlockedError,
    GraceError,
    LLMError,
    NetworkError,
    PlanningError,
    RateLimitError,
)
from agent.llm.schemas import EvaluationOutput, PlanOutput
from agent.ports import (
    Evaluation,
    EvaluationRequest,
    LLMReply,
    PlanRequest,
    ReasoningRequest,
)
from agent.prompts import (
    Prompt,
    build_evaluation_prompt,
    build_plan_prompt,
    build_reasoning_prompt,
)
from agent.schemas import PlanDraft, TokenUsage

M = TypeVar("M", bound=BaseModel)
logger = logging.getLogger(__name__)

DEFAULT_MODEL = "gemini-2.5-flash"
DEFAULT_EMBEDDING_MODEL = "gemini-embedding-001"
EMBED_BATCH_LIMIT = 100
"""The Gemini API accepts at most 100 texts per batchEmbedContents call."""

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


@dataclass(frozen=True)
class CallPolicy:
    """How hard one model call tries: attempts, backoff, and a total deadline.

    Worst case for one call: `attempts` requests, and never longer than
    `deadline_seconds` (a server asking to wait past the deadline ends the call at once).
    """

    attempts: int = 4
    deadline_seconds: float = 30.0
    attempt_timeout_seconds: float = 20.0
    initial_delay: float = 1.0
    max_delay: float = 8.0


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


# --------------------------------------------------------------------------- helpers


def usage_from(response: types.GenerateContentResponse) -> TokenUsage:
    """Token usage of one response. Thinking and tool-use prompt tokens are billed too."""
    meta = response.usage_metadata
    if meta is None:
        return TokenUsage(calls=1)
    output = (meta.candidates_token_count or 0) + (meta.thoughts_token_count or 0)
    prompt = (meta.prompt_token_count or 0) + (meta.tool_use_prompt_token_count or 0)
    return TokenUsage(input_tokens=prompt, output_tokens=output, calls=1)


def is_blocked(response: types.GenerateContentResponse) -> bool:
    """The prompt or the answer was stopped by a safety filter (resending it is useless)."""
    feedback = response.prompt_feedback
    if feedback is not None and feedback.block_reason is not None:
        return True
    if not response.candidates:
        return False
    reason = _enum_name(response.candidates[0].finish_reason or "")
    return reason in _BLOCK_FINISH_REASONS and response_text(response) is None


_BLOCK_FINISH_REASONS = {
    "SAFETY",
    "RECITATION",
    "BLOCKLIST",
    "PROHIBITED_CONTENT",
    "SPII",
    "IMAGE_SAFETY",
}


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
    """Validate against the plan schema (enums, bounds, required fields). Repaired on the
    way: a bare list of steps is a plan, an out-of-range complexity is clamped."""
    if isinstance(data, list):
        data = {"complexity": 0.5, "steps": data, "success_criteria": ""}
    if not isinstance(data, dict):
        raise ValueError(f"expected a JSON object, got {type(data).__name__}")
    data = dict(data)
    if data.get("complexity") is not None:
        data["complexity"] = _clamp01(data["complexity"])
    return PlanOutput.model_validate(data).to_draft()


def _coerce_evaluation(data: Any) -> Evaluation:
    """Validate against the evaluation schema; scores outside 0..1 are clamped rather than
    rejected (the judgement is still useful), a missing rationale is tolerated."""
    if not isinstance(data, dict):
        raise ValueError(f"expected a JSON object, got {type(data).__name__}")
    data = dict(data)
    for key in ("self_eval", "coverage"):
        if data.get(key) is not None:
            data[key] = _clamp01(data[key])
    if data.get("rationale") is None:
        data["rationale"] = ""
    return EvaluationOutput.model_validate(data).to_evaluation()


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
    detail = _short(str(exc.message or exc.details or ""), 300)
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
    if isinstance(exc, _TRANSPORT_ERRORS):
        return map_transport_error(exc, model=model, what=what)
    return None


def _retryable(exc: BaseException) -> bool:
    """Recoverable, and the step's request budget (if any) allows another request."""
    if not (isinstance(exc, GraceError) and exc.recoverable):
        return False
    budget = current_budget()
    return budget is None or budget.may_retry


def _waiter(policy: CallPolicy) -> Callable[[tenacity.RetryCallState], float]:
    backoff = tenacity.wait_exponential_jitter(
        initial=policy.initial_delay, max=policy.max_delay, jitter=policy.initial_delay
    )

    def wait(state: tenacity.RetryCallState) -> float:
        """The server's own delay when it gave one (retryDelay / Retry-After), else backoff."""
        exc = state.outcome.exception() if state.outcome is not None else None
        asked = getattr(exc, "retry_after", None)
        if isinstance(asked, int | float) and asked >= 0:
            return float(asked)
        return float(backoff(state))

    return wait


async def call_gemini(
    what: str,
    model: str,
    policy: CallPolicy,
    call: Callable[[], Awaitable[Any]],
) -> Any:
    """Await an SDK call under `policy`: the one retry layer, with a total deadline.

    Each attempt is bounded by what is left of the deadline; a recoverable failure is
    retried after the server's delay (or backoff) only when that still fits and the
    step's request budget (`agent.budget`) is not spent. The last error is raised as an
    agent error that says how many attempts were made.
    """
    started = time.monotonic()
    deadline = started + policy.deadline_seconds
    attempts = 0

    async def attempt() -> Any:
        nonlocal attempts
        attempts += 1
        budget = current_budget()
        if budget is not None:
            budget.spend()
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise NetworkError(
                f"Gemini {what} with model {model!r} ran out of time "
                f"({policy.deadline_seconds:g} s deadline)."
            )
        try:
            return await asyncio.wait_for(
                call(), timeout=min(policy.attempt_timeout_seconds, remaining)
            )
        except Exception as exc:
            mapped = map_exception(exc, model=model, what=what)
            if mapped is None:
                raise
            raise mapped from exc

    retrying = tenacity.AsyncRetrying(
        stop=tenacity.stop_after_attempt(max(1, policy.attempts))
        | tenacity.stop_before_delay(policy.deadline_seconds),
        wait=_waiter(policy),
        retry=tenacity.retry_if_exception(_retryable),
        before_sleep=lambda state: logger.warning(
            "Gemini %s: attempt %d failed (%s); retrying in %.1f s",
            what,
            state.attempt_number,
            state.outcome.exception() if state.outcome else "?",
            state.upcoming_sleep,
        ),
        reraise=True,
    )
    try:
        return await retrying(attempt)
    except GraceError as exc:
        if exc.recoverable and attempts > 1:
            elapsed = time.monotonic() - started
            exc.message = f"{exc.message} (gave up after {attempts} attempts in {elapsed:.1f} s)"
            exc.args = (exc.message,)
        raise


# --------------------------------------------------------------------------- the model


class CallKind(StrEnum):
    PLAN = "planning"
    REASONING = "reasoning"
    EVALUATION = "evaluation"


@dataclass(frozen=True)
class CallLimits:
    """Output budget of one call kind. Planning and evaluation need little thinking."""

    max_output_tokens: int
    thinking_budget: int | None
    """None: the model's default; 0: no thinking (models that allow it)."""


DEFAULT_LIMITS: dict[CallKind, CallLimits] = {
    CallKind.PLAN: CallLimits(max_output_tokens=2048, thinking_budget=256),
    CallKind.REASONING: CallLimits(max_output_tokens=2048, thinking_budget=1024),
    CallKind.EVALUATION: CallLimits(max_output_tokens=512, thinking_budget=0),
}
MIN_THINKING_BUDGET_PRO = 128
"""Pro models cannot switch thinking off; their smallest budget is 128."""


@functools.cache
def _json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """A model's JSON schema, built once: building it costs ~25 ms, every call otherwise.
    (The SDK turns it into the API's schema the same way it would the class.)"""
    return model.model_json_schema()


@dataclass
class _Outcome:
    """What a sequence of calls for one request spent and found."""

    usage: TokenUsage = field(default_factory=TokenUsage)
    version: str = ""
    problems: list[str] = field(default_factory=list)


class GeminiModel:
    """`LanguageModel` backed by Gemini: structured planning and evaluation, text answers."""

    def __init__(
        self,
        *,
        client: genai.Client,
        model: str = DEFAULT_MODEL,
        temperature: float = 0.2,
        thinking_budget: int | None = None,
        policy: CallPolicy | None = None,
        limits: dict[CallKind, CallLimits] | None = None,
    ) -> None:
        self._client = client
        self._model = model
        self._temperature = temperature
        self._policy = policy or CallPolicy()
        self._limits = {**DEFAULT_LIMITS, **(limits or {})}
        if thinking_budget is not None:  # an explicit budget for the answers
            answer = self._limits[CallKind.REASONING]
            self._limits[CallKind.REASONING] = CallLimits(answer.max_output_tokens, thinking_budget)

    @property
    def name(self) -> str:
        return self._model

    @property
    def policy(self) -> CallPolicy:
        return self._policy

    def _thinking(self, budget: int | None) -> types.ThinkingConfig | None:
        if budget is None:
            return None
        if "pro" in self._model:
            budget = max(budget, MIN_THINKING_BUDGET_PRO)
        return types.ThinkingConfig(thinking_budget=budget)

    def _config(
        self, kind: CallKind, prompt: Prompt, schema: type[BaseModel] | None
    ) -> types.GenerateContentConfig:
        limits = self._limits[kind]
        thinking = self._thinking(limits.thinking_budget)
        budget = thinking.thinking_budget if thinking and thinking.thinking_budget else 0
        config = types.GenerateContentConfig(
            system_instruction=prompt.system,
            temperature=self._temperature,
            max_output_tokens=limits.max_output_tokens + budget,
            thinking_config=thinking,
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        )
        if schema is not None:
            config.response_mime_type = "application/json"
            config.response_schema = copy.deepcopy(_json_schema(schema))
        return config

    async def _generate(
        self,
        kind: CallKind,
        prompt: Prompt,
        outcome: _Outcome,
        schema: type[BaseModel] | None = None,
    ) -> types.GenerateContentResponse:
        """One call (with its transport retries); its usage is counted whatever follows."""
        config = self._config(kind, prompt, schema)
        try:
            response: types.GenerateContentResponse = await call_gemini(
                kind.value,
                self._model,
                self._policy,
                lambda: self._client.aio.models.generate_content(
                    model=self._model, contents=prompt.user, config=config
                ),
            )
        except GraceError as exc:
            exc.usage = outcome.usage + (exc.usage or TokenUsage())
            raise
        outcome.usage += usage_from(response)
        outcome.version = response.model_version or self._model
        return response

    async def _structured(
        self,
        kind: CallKind,
        build: Callable[[bool], Prompt],
        schema: type[BaseModel],
        coerce: Callable[[Any], M],
    ) -> tuple[M | None, _Outcome]:
        """Ask for JSON; repair it; when unusable ask once more, never with the same prompt:
        a blocked prompt is rephrased, an invalid reply is answered with its problem."""
        outcome = _Outcome(version=self._model)
        prompt = build(False)
        for attempt in (1, 2):
            response = await self._generate(kind, prompt, outcome, schema)
            value, problem = parse_structured(response, coerce)
            if value is not None:
                return value, outcome
            outcome.problems.append(f"attempt {attempt}: {problem}")
            prompt = build(True) if is_blocked(response) else prompt.with_repair(problem)
        return None, outcome

    async def plan(self, request: PlanRequest) -> LLMReply[PlanDraft]:
        """A plan draft; the planner validates and repairs it (SPEC §2.2)."""
        draft, outcome = await self._structured(
            CallKind.PLAN,
            lambda cautious: build_plan_prompt(request, cautious=cautious),
            PlanOutput,
            _coerce_plan,
        )
        if draft is None:
            raise PlanningError(
                f"Gemini ({self._model}) did not return a usable plan after 2 attempts "
                f"— {'; '.join(outcome.problems)}",
                usage=outcome.usage,
            )
        return LLMReply[PlanDraft](value=draft, usage=outcome.usage, model=outcome.version)

    async def reason(self, request: ReasoningRequest) -> LLMReply[str]:
        """A cited answer from the passages. A blocked prompt is rephrased once; an empty
        or twice-blocked reply is an error that carries the tokens it cost."""
        outcome = _Outcome(version=self._model)
        response = await self._generate(
            CallKind.REASONING, build_reasoning_prompt(request), outcome
        )
        if is_blocked(response):
            outcome.problems.append(describe_empty(response))
            response = await self._generate(
                CallKind.REASONING, build_reasoning_prompt(request, cautious=True), outcome
            )
        text = response_text(response)
        if text is None or not text.strip():
            outcome.problems.append(describe_empty(response))
            error = BlockedError if is_blocked(response) else LLMError
            raise error(
                f"Gemini ({self._model}) returned no answer: {'; then '.join(outcome.problems)}",
                usage=outcome.usage,
            )
        return LLMReply[str](value=text.strip(), usage=outcome.usage, model=outcome.version)

    async def evaluate(self, request: EvaluationRequest) -> LLMReply[Evaluation]:
        """Self-evaluation + coverage in one call. When no usable judgement comes back the
        call fails (with its cost): the caller keeps the answer and says it is unchecked."""
        evaluation, outcome = await self._structured(
            CallKind.EVALUATION,
            lambda cautious: build_evaluation_prompt(request, cautious=cautious),
            EvaluationOutput,
            _coerce_evaluation,
        )
        if evaluation is None:
            raise LLMError(
                f"Gemini ({self._model}) gave no usable evaluation: {'; '.join(outcome.problems)}",
                usage=outcome.usage,
            )
        return LLMReply[Evaluation](value=evaluation, usage=outcome.usage, model=outcome.version)


# --------------------------------------------------------------------------- embeddings


def _normalise(values: Sequence[float]) -> list[float]:
    """Unit length: Gemini only normalises full-size (3072) embeddings itself."""
    norm = math.sqrt(sum(v * v for v in values))
    if norm == 0.0:
        return [float(v) for v in values]
    return [float(v) / norm for v in values]


QUERY_TASK = "RETRIEVAL_QUERY"
DOCUMENT_TASK = "RETRIEVAL_DOCUMENT"


class GeminiEmbedder:
    """`Embedder` backed by `gemini-embedding-001` (Matryoshka: any dimension ≤ 3072).

    Retrieval uses the task types the model was trained for: `embed_documents` (chunks,
    RETRIEVAL_DOCUMENT with the document's title) and `embed_query` (RETRIEVAL_QUERY,
    under a short deadline of its own: a search that cannot wait falls back to lexical).
    """

    def __init__(
        self,
        *,
        client: genai.Client,
        model: str = DEFAULT_EMBEDDING_MODEL,
        dimension: int = 768,
        task_type: str | None = None,
        batch_size: int = EMBED_BATCH_LIMIT,
        policy: CallPolicy | None = None,
        query_timeout: float = 4.0,
    ) -> None:
        if dimension < 1:
            raise ValueError("dimension must be positive")
        self._client = client
        self._model = model
        self._dimension = dimension
        self._task_type = task_type
        self._batch_size = max(1, min(batch_size, EMBED_BATCH_LIMIT))
        self._policy = policy or CallPolicy()
        self._query_timeout = query_timeout
        self.requests = 0
        """Embedding requests sent (each batch is one), for benchmarks and tests."""

    @property
    def name(self) -> str:
        return self._model

    @property
    def dimension(self) -> int:
        return self._dimension

    @property
    def query_timeout(self) -> float:
        return self._query_timeout

    async def embed_query(self, text: str) -> list[float]:
        """A question's vector, or `NetworkError` within `query_timeout` seconds."""
        policy = CallPolicy(
            attempts=2,
            deadline_seconds=self._query_timeout,
            attempt_timeout_seconds=self._query_timeout,
            initial_delay=min(self._policy.initial_delay, self._query_timeout / 4),
            max_delay=self._query_timeout / 2,
        )
        (vector,) = await self.embed([text], task_type=QUERY_TASK, policy=policy)
        return vector

    async def embed_documents(
        self, texts: Sequence[str], titles: Sequence[str | None] | None = None
    ) -> list[list[float]]:
        """Chunks' vectors, embedded as documents with their titles."""
        return await self.embed(texts, task_type=DOCUMENT_TASK, titles=titles)

    async def embed(
        self,
        texts: Sequence[str],
        *,
        task_type: str | None = None,
        titles: Sequence[str | None] | None = None,
        policy: CallPolicy | None = None,
    ) -> list[list[float]]:
        """One unit vector per text, in order; ≤ 100 texts per request.

        The API takes one title per request, so consecutive texts with the same title go
        together (chunks of one document arrive together, so this costs no requests).
        """
        if titles is not None and len(titles) != len(texts):
            raise ValueError("titles must match texts one to one")
        task = task_type or self._task_type
        vectors: list[list[float]] = []
        keyed = list(zip(texts, titles if titles is not None else [None] * len(texts), strict=True))
        for title, group in itertools.groupby(keyed, key=lambda pair: pair[1]):
            members = [text for text, _ in group]
            for start in range(0, len(members), self._batch_size):
                batch = members[start : start + self._batch_size]
                vectors.extend(await self._embed_batch(batch, task, title, policy))
        return vectors

    async def _embed_batch(
        self,
        texts: list[str],
        task_type: str | None,
        title: str | None,
        policy: CallPolicy | None,
    ) -> list[list[float]]:
        config = types.EmbedContentConfig(output_dimensionality=self._dimension)
        if task_type:
            config.task_type = task_type
            if title and task_type == DOCUMENT_TASK:
                config.title = title
        # the API rejects empty content; a blank stands in for an empty text
        batch: list[str | types.Content] = [t if t.strip() else " " for t in texts]
        self.requests += 1
        response: types.EmbedContentResponse = await call_gemini(
            "embedding",
            self._model,
            policy or self._policy,
            lambda: self._client.aio.models.embed_content(
                model=self._model, contents=batch, config=config
            ),
        )
        embeddings = response.embeddings or []
        if len(embeddings) != len(batch):
            raise LLMError(
                f"Gemini embedding with model {self._model!r} returned {len(embeddings)} "
                f"vectors for {len(batch)} texts"
            )
        vectors = []
        for embedding in embeddings:
            values = embedding.values or []
            if len(values) != self._dimension:
                raise LLMError(
                    f"Gemini embedding with model {self._model!r} returned a vector of "
                    f"{len(values)} dimensions, expected {self._dimension}"
                )
            vectors.append(_normalise(values))
        return vectors
