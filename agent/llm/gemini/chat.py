"""`LanguageModel` on Gemini: structured planning and evaluation, text answers (SPEC §3).

Uses the official `google-genai` SDK's async client. The client is injected (built with
`make_gemini_client`, `client.py`) so tests can point it at a local fake server; every
request goes through `call_gemini`, the one retry layer, and a failure carries the tokens
already spent.

Structured output is never trusted blindly: invalid JSON is repaired, then asked for once
more with the problem named; a blocked prompt is rephrased once (less material, a note),
never resent as is. Every response's usage counts, whatever became of the response.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Generic, TypeVar

from google import genai
from google.genai import types
from pydantic import BaseModel

from agent.errors import BlockedError, GraceError, LLMError, PlanningError
from agent.llm.gemini.client import call_gemini
from agent.llm.gemini.responses import (
    describe_empty,
    is_blocked,
    parse_structured,
    response_text,
    usage_from,
)
from agent.llm.schemas import EvaluationOutput, PlanOutput, coerce_evaluation, coerce_plan
from agent.llm.transport import CallPolicy
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

DEFAULT_MODEL = "gemini-2.5-flash"


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


@dataclass(frozen=True)
class _Structured(Generic[M]):
    """A structured call's JSON shape, its coercion, its reply and how it fails."""

    schema: type[BaseModel]
    coerce: Callable[[Any], M]
    reply: type[LLMReply[M]]
    error: type[LLMError]
    failure: str
    """What the error says happened, before the problems of both attempts."""


_PLAN = _Structured(
    PlanOutput,
    coerce_plan,
    LLMReply[PlanDraft],
    PlanningError,
    "did not return a usable plan after 2 attempts —",
)
_EVALUATION = _Structured(
    EvaluationOutput,
    coerce_evaluation,
    LLMReply[Evaluation],
    LLMError,
    "gave no usable evaluation:",
)


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
        self, kind: CallKind, shape: _Structured[M], build: Callable[[bool], Prompt]
    ) -> LLMReply[M]:
        """Ask for JSON; repair it; when unusable ask once more, never with the same prompt:
        a blocked prompt is rephrased, an invalid reply is answered with its problem.
        Twice unusable: an error naming the problems, carrying the tokens spent."""
        outcome = _Outcome(version=self._model)
        prompt = build(False)
        for attempt in (1, 2):
            response = await self._generate(kind, prompt, outcome, shape.schema)
            value, problem = parse_structured(response, shape.coerce)
            if value is not None:
                return shape.reply(value=value, usage=outcome.usage, model=outcome.version)
            outcome.problems.append(f"attempt {attempt}: {problem}")
            prompt = build(True) if is_blocked(response) else prompt.with_repair(problem)
        problems = "; ".join(outcome.problems)
        raise shape.error(f"Gemini ({self._model}) {shape.failure} {problems}", usage=outcome.usage)

    async def plan(self, request: PlanRequest) -> LLMReply[PlanDraft]:
        """A plan draft; the planner validates and repairs it (SPEC §2.2)."""
        return await self._structured(
            CallKind.PLAN, _PLAN, lambda cautious: build_plan_prompt(request, cautious=cautious)
        )

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
        return await self._structured(
            CallKind.EVALUATION,
            _EVALUATION,
            lambda cautious: build_evaluation_prompt(request, cautious=cautious),
        )
