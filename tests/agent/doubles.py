"""Stand-ins for outside services at the port boundary (agent/ports.py).

They implement the ports the agent depends on — a language model, a knowledge base, a
web-search provider, an observer — to produce what the real offline parts cannot: a
scripted plan, a store that fails or is slow, a price on tokens. Where they can, they
delegate to the real `OfflineModel` / real Qdrant knowledge base.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field

from agent.errors import VectorStoreError
from agent.llm.offline import OfflineModel
from agent.ports import (
    Evaluation,
    EvaluationRequest,
    KnowledgeBase,
    LanguageModel,
    LLMReply,
    PlanRequest,
    ReasoningRequest,
    RunEvent,
)
from agent.schemas import PlanDraft, PlanDraftStep, RunState, Source, TokenUsage


def draft(*steps: PlanDraftStep, complexity: float = 0.3) -> PlanDraft:
    return PlanDraft(complexity=complexity, steps=list(steps), success_criteria="scripted")


def search(
    step_id: int,
    query: str,
    *,
    depends_on: list[int] | None = None,
    fallback: str | None = None,
) -> PlanDraftStep:
    return PlanDraftStep(
        step_id=step_id,
        action="rag_search",
        description=f"search: {query}",
        query=query,
        depends_on=depends_on or [],
        fallback=fallback,
    )


def reasoning(step_id: int, depends_on: list[int]) -> PlanDraftStep:
    return PlanDraftStep(
        step_id=step_id,
        action="reasoning",
        description="Answer from the passages, with citations",
        depends_on=depends_on,
    )


class ScriptedModel:
    """A `LanguageModel` whose plans (and optionally answers) are scripted.

    `plans` are returned in order, the last one repeated; a None plan (or no plans at all)
    lets the real offline planner plan. An answer of None delegates to the offline model.
    Every request is recorded, so a test can see what reached the model."""

    def __init__(
        self,
        plans: list[PlanDraft | None] | None = None,
        *,
        answers: list[str | None] | None = None,
        name: str = "offline",
        usage: TokenUsage | None = None,
    ) -> None:
        self._plans = list(plans or [])
        self._answers = list(answers or [])
        self._name = name
        self._usage = usage
        self._offline = OfflineModel()
        self.plan_requests: list[PlanRequest] = []
        self.reason_requests: list[ReasoningRequest] = []
        self.evaluate_requests: list[EvaluationRequest] = []

    @property
    def name(self) -> str:
        return self._name

    def _priced(self, usage: TokenUsage) -> TokenUsage:
        return self._usage.model_copy() if self._usage is not None else usage

    async def plan(self, request: PlanRequest) -> LLMReply[PlanDraft]:
        self.plan_requests.append(request)
        scripted = None
        if self._plans:
            scripted = self._plans.pop(0) if len(self._plans) > 1 else self._plans[0]
        if scripted is None:
            reply = await self._offline.plan(request)
            return LLMReply(value=reply.value, usage=self._priced(reply.usage), model=self._name)
        return LLMReply(
            value=scripted.model_copy(deep=True),
            usage=self._priced(TokenUsage(input_tokens=100, output_tokens=50, calls=1)),
            model=self._name,
        )

    async def reason(self, request: ReasoningRequest) -> LLMReply[str]:
        self.reason_requests.append(request)
        scripted = self._answers.pop(0) if self._answers else None
        if scripted is None:
            reply = await self._offline.reason(request)
            return LLMReply(value=reply.value, usage=self._priced(reply.usage), model=self._name)
        return LLMReply(
            value=scripted,
            usage=self._priced(TokenUsage(input_tokens=10, output_tokens=10, calls=1)),
            model=self._name,
        )

    async def evaluate(self, request: EvaluationRequest) -> LLMReply[Evaluation]:
        self.evaluate_requests.append(request)
        reply = await self._offline.evaluate(request)
        return LLMReply(value=reply.value, usage=self._priced(reply.usage), model=self._name)


class GatedModel:
    """A language model whose planning waits at a gate the test opens: a run started
    behind it cannot finish, or even post its plan, before the test says so. `reached`
    is set once a run is waiting at the gate."""

    def __init__(self, model: LanguageModel) -> None:
        self._model = model
        self.reached = asyncio.Event()
        self.gate = asyncio.Event()

    @property
    def name(self) -> str:
        return self._model.name

    async def plan(self, request: PlanRequest) -> LLMReply[PlanDraft]:
        self.reached.set()
        await self.gate.wait()
        return await self._model.plan(request)

    async def reason(self, request: ReasoningRequest) -> LLMReply[str]:
        return await self._model.reason(request)

    async def evaluate(self, request: EvaluationRequest) -> LLMReply[Evaluation]:
        return await self._model.evaluate(request)


@dataclass
class SearchCall:
    query: str
    collection: str | None
    started: float
    ended: float = 0.0
    failed: bool = False


@dataclass(eq=False)
class ControlledKB:
    """A `KnowledgeBase` in front of a real one that can fail or be slow on purpose."""

    inner: KnowledgeBase
    _: KW_ONLY
    fail_times: int = 0
    """The first N searches raise `VectorStoreError` (-1: every search)."""
    fail_when: Callable[[str], bool] | None = None
    """Searches whose query matches raise `VectorStoreError`."""
    delay: float = 0.0
    delay_times: int = 0
    """The first `delay_times` searches sleep `delay` seconds first."""
    barrier: int = 0
    """Searches wait until this many have started (a broken barrier is recorded)."""
    barrier_timeout: float = 2.0
    barrier_broken: bool = field(default=False, init=False)
    calls: list[SearchCall] = field(default_factory=list, init=False)
    _arrived: int = field(default=0, init=False)
    _all_arrived: asyncio.Event = field(default_factory=asyncio.Event, init=False)

    @property
    def default_collection(self) -> str:
        return self.inner.default_collection

    async def collections(self) -> list[str]:
        return await self.inner.collections()

    async def search(self, query: str, *, collection: str | None, limit: int) -> list[Source]:
        call = SearchCall(query=query, collection=collection, started=time.perf_counter())
        self.calls.append(call)
        index = len(self.calls)
        try:
            if self.barrier:
                self._arrived += 1
                if self._arrived >= self.barrier:
                    self._all_arrived.set()
                try:
                    await asyncio.wait_for(self._all_arrived.wait(), self.barrier_timeout)
                except TimeoutError:
                    self.barrier_broken = True
            if index <= self.delay_times:
                await asyncio.sleep(self.delay)
            failing = self.fail_times < 0 or index <= self.fail_times
            if failing or (self.fail_when is not None and self.fail_when(query)):
                call.failed = True
                raise VectorStoreError("Qdrant (test double) is unreachable while searching")
            return await self.inner.search(query, collection=collection, limit=limit)
        finally:
            call.ended = time.perf_counter()


class StaticWebSearch:
    """A `WebSearchProvider` returning fixed hits and recording the queries."""

    def __init__(self, hits: list[Source]) -> None:
        self._hits = hits
        self.queries: list[str] = []

    async def search(self, query: str, *, limit: int) -> list[Source]:
        self.queries.append(query)
        return [h.model_copy() for h in self._hits[:limit]]


class RecordingObserver:
    """A `RunObserver` keeping every event and the run status it was told with."""

    def __init__(self) -> None:
        self.events: list[RunEvent] = []
        self.statuses: list[str] = []

    async def on_event(self, event: RunEvent, state: RunState) -> None:
        self.events.append(event)
        self.statuses.append(state.status.value)
