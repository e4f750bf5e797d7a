"""The tools a plan step can use (SPEC §2.4). `ask_user` is not here: it pauses the run,
so the orchestrator handles it."""

from __future__ import annotations

import asyncio
import time
from statistics import fmean, pvariance

from pydantic import BaseModel, Field

from agent.errors import GraceError
from agent.evidence import answer_features, focus_question
from agent.knowledge.verified import visible_to
from agent.ports import (
    Evaluation,
    EvaluationRequest,
    KnowledgeBase,
    LanguageModel,
    LLMReply,
    ReasoningRequest,
    WebSearchProvider,
)
from agent.safety import sanitize_answer, urls_in
from agent.schemas import ActionType, PlanStep, Source, TokenUsage, ToolResult

EVALUATION_FAILED = "evaluation_failed"
"""Factor set when the answer could not be checked: the answer is kept, the score lowered."""
EVALUATION_MARGIN = 0.5
"""Seconds of the step's time kept back so an answer is saved before the step times out."""


class StepContext(BaseModel):
    """What a step may use: the question, the human's inputs so far, and the outputs and
    sources of every step it depends on (transitively)."""

    query: str
    thread_context: str = ""
    user_inputs: list[str] = Field(default_factory=list)
    dependency_outputs: list[str] = Field(default_factory=list)
    dependency_sources: list[Source] = Field(default_factory=list)
    collection: str | None = None
    team_id: str = "local"
    """The run's team: a verified answer saved for another team is not its source."""
    deadline: float | None = None
    """`time.monotonic()` by which the step must be done (the executor's step timeout)."""


class Toolbox:
    @property
    def model_name(self) -> str:
        return self._llm.name

    def __init__(
        self,
        *,
        llm: LanguageModel,
        knowledge_base: KnowledgeBase,
        web_search: WebSearchProvider | None = None,
        top_k: int = 5,
    ) -> None:
        self._llm = llm
        self._kb = knowledge_base
        self._web = web_search
        self._top_k = top_k

    async def run(self, action: ActionType, step: PlanStep, ctx: StepContext) -> ToolResult:
        started = time.perf_counter()
        try:
            if action is ActionType.RAG_SEARCH:
                result = await self._rag_search(step, ctx)
            elif action is ActionType.WEB_SEARCH:
                result = await self._web_search(step, ctx)
            elif action is ActionType.REASONING:
                result = await self._reasoning(step, ctx)
            else:
                result = ToolResult(success=False, error=f"{action.value} is not a tool")
        except GraceError as exc:  # what a failed call already cost still counts
            result = ToolResult(
                success=False,
                error=f"{exc.category}: {exc.message}",
                token_usage=exc.usage or TokenUsage(),
            )
        result.execution_time_ms = (time.perf_counter() - started) * 1000
        return result

    def _search_query(self, step: PlanStep, ctx: StepContext) -> str:
        return focus_question(step.query or ctx.query, ctx.user_inputs)

    async def _rag_search(self, step: PlanStep, ctx: StepContext) -> ToolResult:
        collection = step.collection or ctx.collection
        hits = await self._kb.search(
            self._search_query(step, ctx), collection=collection, limit=self._top_k
        )
        return _search_result(visible_to(hits, ctx.team_id), "knowledge base")

    async def _web_search(self, step: PlanStep, ctx: StepContext) -> ToolResult:
        if self._web is None:
            return ToolResult(
                success=False,
                error="web search is not configured for this workspace",
            )
        hits = await self._web.search(self._search_query(step, ctx), limit=self._top_k)
        return _search_result(hits, "web")

    async def _reasoning(self, step: PlanStep, ctx: StepContext) -> ToolResult:
        passages = _dedupe(ctx.dependency_sources)
        reply = await self._llm.reason(
            ReasoningRequest(
                query=ctx.query,
                instruction=step.description,
                passages=passages,
                context=ctx.thread_context,
                user_inputs=ctx.user_inputs,
            )
        )
        allowed = urls_in([*(p.text for p in passages), *(p.source for p in passages)])
        answer = sanitize_answer(reply.value, allowed)
        if not answer.strip():
            return ToolResult(
                success=False,
                error="the model returned an empty answer",
                token_usage=reply.usage,
            )
        factors: dict[str, float] = {}
        usage = reply.usage
        note: str | None = None
        try:
            evaluation = await self._evaluate(ctx, answer, passages)
        except GraceError as exc:  # keep the answer; say it is unchecked (score lowered)
            usage = usage + (exc.usage or TokenUsage())
            note = f"the answer could not be checked ({exc.category}: {exc.message})"
        except TimeoutError:
            note = "the answer could not be checked (the evaluation ran out of time)"
        else:
            usage = usage + evaluation.usage
            factors = {
                "llm_self_eval": evaluation.value.self_eval,
                "query_coverage": evaluation.value.coverage,
            }
        if note is not None:
            factors[EVALUATION_FAILED] = 1.0
        focus = focus_question(ctx.query, ctx.user_inputs)
        return ToolResult(
            success=True,
            output=answer,
            sources=passages,
            confidence_factors=factors,
            answer_features=answer_features(focus, answer, passages),
            error=note,
            token_usage=usage,
        )

    async def _evaluate(
        self, ctx: StepContext, answer: str, passages: list[Source]
    ) -> LLMReply[Evaluation]:
        work = self._llm.evaluate(
            EvaluationRequest(
                query=focus_question(ctx.query, ctx.user_inputs), answer=answer, passages=passages
            )
        )
        if ctx.deadline is None:
            return await work
        left = ctx.deadline - time.monotonic() - EVALUATION_MARGIN
        return await asyncio.wait_for(work, timeout=max(0.0, left))


def _search_result(hits: list[Source], where: str) -> ToolResult:
    similarities = [h.similarity for h in hits]
    factors = {"result_count": float(len(hits))}
    if hits:
        factors |= {
            "max_similarity": max(similarities),
            "mean_similarity": fmean(similarities),
            "variance": pvariance(similarities) if len(hits) > 1 else 0.0,
        }
    lines = [
        f"[{i}] ({h.similarity:.2f}) {h.source}: {h.text[:200]}" for i, h in enumerate(hits, 1)
    ]
    output = "\n".join(lines) if hits else f"no results in the {where}"
    return ToolResult(success=True, output=output, sources=hits, confidence_factors=factors)


def _dedupe(sources: list[Source]) -> list[Source]:
    seen: dict[tuple[str, str], Source] = {}
    for s in sources:
        seen.setdefault((s.source, s.chunk_id or s.text), s)
    return list(seen.values())
