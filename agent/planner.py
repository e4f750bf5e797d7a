"""Planner (SPEC §2.2): ask the model for a plan, then validate and repair it.

A model's plan is never trusted blindly: ids are renumbered, dependencies pointing
forward or nowhere are dropped, unknown actions and collections are mapped or removed,
and the plan always ends in a step that produces the answer.
"""

from __future__ import annotations

import logging

from pydantic import BaseModel, Field

from agent.config import ExecutionConfig
from agent.errors import PlanningError
from agent.ports import LanguageModel, LLMReply, PlanRequest
from agent.schemas import ActionType, ExecutionPlan, PlanDraft, PlanStep

log = logging.getLogger(__name__)

CONFIRMATION_COMPLEXITY = 0.6

_ACTION_ALIASES: dict[str, ActionType] = {
    "rag_search": ActionType.RAG_SEARCH,
    "rag": ActionType.RAG_SEARCH,
    "search": ActionType.RAG_SEARCH,
    "kb_search": ActionType.RAG_SEARCH,
    "knowledge_search": ActionType.RAG_SEARCH,
    "web_search": ActionType.WEB_SEARCH,
    "web": ActionType.WEB_SEARCH,
    "reasoning": ActionType.REASONING,
    "reason": ActionType.REASONING,
    "answer": ActionType.REASONING,
    "synthesize": ActionType.REASONING,
    "ask_user": ActionType.ASK_USER,
    "ask": ActionType.ASK_USER,
    "clarify": ActionType.ASK_USER,
}
_GATHERING = {ActionType.RAG_SEARCH, ActionType.WEB_SEARCH}


class PlanOutcome(BaseModel):
    plan: ExecutionPlan
    repairs: list[str] = Field(default_factory=list)
    reply: LLMReply[PlanDraft]


def parse_action(raw: str | None) -> ActionType | None:
    if raw is None:
        return None
    return _ACTION_ALIASES.get(raw.strip().lower().replace("-", "_").replace(" ", "_"))


class Planner:
    def __init__(self, llm: LanguageModel, config: ExecutionConfig) -> None:
        self._llm = llm
        self._config = config

    async def create_plan(self, request: PlanRequest) -> PlanOutcome:
        reply = await self._llm.plan(request)
        plan, repairs = repair_plan(
            reply.value,
            query=request.query,
            collections=request.collections,
            default_collection=request.default_collection,
            config=self._config,
        )
        if repairs:
            log.info("plan repaired", extra={"repairs": repairs})
        return PlanOutcome(plan=plan, repairs=repairs, reply=reply)


def repair_plan(
    draft: PlanDraft,
    *,
    query: str,
    collections: list[str],
    default_collection: str | None,
    config: ExecutionConfig,
) -> tuple[ExecutionPlan, list[str]]:
    """Turn an untrusted draft into a valid plan, or raise `PlanningError` saying why."""
    repairs: list[str] = []
    kept: list[tuple[int, PlanStep]] = []  # (the draft's id, repaired step)
    seen_ids: set[int] = set()
    id_map: dict[int, int] = {}

    for raw in draft.steps:
        action = parse_action(raw.action)
        if action is None:
            repairs.append(f"dropped step {raw.step_id}: unknown action {raw.action!r}")
            continue
        if raw.step_id in seen_ids:
            repairs.append(f"duplicate step id {raw.step_id} renumbered")
        seen_ids.add(raw.step_id)
        new_id = len(kept) + 1
        deps: list[int] = []
        for dep in raw.depends_on:
            mapped = id_map.get(dep)
            if mapped is None or mapped >= new_id:
                repairs.append(f"step {raw.step_id}: dropped dependency on {dep}")
                continue
            if mapped not in deps:
                deps.append(mapped)
        id_map.setdefault(raw.step_id, new_id)
        collection = raw.collection
        if action is ActionType.RAG_SEARCH:
            if collection not in collections:
                if collection is not None:
                    repairs.append(
                        f"step {raw.step_id}: unknown collection {collection!r} → "
                        f"{default_collection!r}"
                    )
                collection = default_collection
        else:
            collection = None
        fallback = parse_action(raw.fallback)
        if raw.fallback and fallback is None:
            repairs.append(f"step {raw.step_id}: dropped unknown fallback {raw.fallback!r}")
        if fallback in (action, ActionType.ASK_USER):
            fallback = None
        step_query = raw.query.strip() or (query if action in _GATHERING else "")
        kept.append(
            (
                raw.step_id,
                PlanStep(
                    step_id=new_id,
                    action=action,
                    description=raw.description.strip() or action.value,
                    query=step_query,
                    collection=collection,
                    depends_on=deps,
                    expected_output=raw.expected_output,
                    fallback=fallback,
                    timeout_seconds=config.default_step_timeout,
                    options=_options(raw.options) if action is ActionType.ASK_USER else [],
                ),
            )
        )

    steps = [s for _, s in kept]
    if not steps:
        raise PlanningError(
            "The model returned a plan with no usable steps "
            f"({len(draft.steps)} proposed, none with a known action)."
        )

    if (
        not any(s.action in _GATHERING for s in steps)
        and steps[0].action is not ActionType.ASK_USER
    ):
        repairs.append("inserted a knowledge-base search as the first step")
        steps = [
            PlanStep(
                step_id=1,
                action=ActionType.RAG_SEARCH,
                description="Search the knowledge base",
                query=query,
                collection=default_collection,
                fallback=ActionType.WEB_SEARCH,
                timeout_seconds=config.default_step_timeout,
            ),
            *[
                s.model_copy(
                    update={"step_id": s.step_id + 1, "depends_on": [d + 1 for d in s.depends_on]}
                )
                for s in steps
            ],
        ]

    if len(steps) > config.max_steps:
        repairs.append(f"trimmed the plan from {len(steps)} to {config.max_steps} steps")
        steps = steps[: config.max_steps - 1]

    if steps[-1].action is not ActionType.REASONING:
        repairs.append("appended a final reasoning step to produce the answer")
        steps.append(
            PlanStep(
                step_id=len(steps) + 1,
                action=ActionType.REASONING,
                description="Answer the question from the gathered information",
                depends_on=[s.step_id for s in steps if s.action is not ActionType.REASONING],
                timeout_seconds=config.default_step_timeout,
            )
        )

    fixed: list[PlanStep] = []
    for step in steps:
        if step.action is ActionType.REASONING and not step.depends_on and step.step_id > 1:
            repairs.append(f"step {step.step_id}: reasoning now depends on the earlier steps")
            step = step.model_copy(
                update={"depends_on": [s.step_id for s in fixed if s.action in _GATHERING]}
            )
        fixed.append(step)

    complexity = min(1.0, max(0.0, draft.complexity))
    plan = ExecutionPlan(
        original_query=query,
        complexity=complexity,
        estimated_steps=len(fixed),
        requires_confirmation=complexity > CONFIRMATION_COMPLEXITY,
        steps=fixed,
        success_criteria=draft.success_criteria,
    )
    return plan, repairs


MAX_OPTIONS = 10


def _options(raw: list[str]) -> list[str]:
    """Distinct, non-empty answer choices, at most MAX_OPTIONS (a model may repeat itself)."""
    kept: list[str] = []
    for option in (o.strip() for o in raw):
        if option and option not in kept:
            kept.append(option)
    return kept[:MAX_OPTIONS]
