"""The JSON shapes a model is asked to return (structured output).

These models are sent to the model as `response_schema`, so their field descriptions are
written for the model (what to put there), not for us, and they carry every constraint the
API can enforce: enums for actions, required fields, numeric bounds, list lengths. What the
agent uses internally (`PlanDraft`, `Evaluation`) stays looser on purpose — the planner
repairs drafts from any source — so these convert into them (`coerce_plan`,
`coerce_evaluation`: decoded JSON, whichever model wrote it, to the agent's types).
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agent.ports import Evaluation
from agent.schemas import ActionType, PlanDraft, PlanDraftStep

MAX_PLAN_STEPS = 5


class PlanStepOutput(BaseModel):
    """One step of the plan."""

    model_config = ConfigDict(use_enum_values=True)

    step_id: int = Field(
        ge=1, le=MAX_PLAN_STEPS, description="Position of the step: 1 for the first, then 2, 3…"
    )
    action: ActionType = Field(description="The tool this step uses.")
    description: str = Field(
        min_length=1, description="What this step does, in the language of the question."
    )
    query: str = Field(
        default="",
        description=(
            "Search terms for rag_search/web_search, the question to ask for ask_user, "
            "or what to answer for reasoning."
        ),
    )
    collection: str | None = Field(
        default=None,
        description="For rag_search: one of the known collections; null for the default.",
    )
    depends_on: list[int] = Field(
        default_factory=list,
        description="step_id values of EARLIER steps whose results this step needs.",
    )
    expected_output: str = Field(default="", description="What the step should produce.")
    fallback: ActionType | None = Field(
        default=None, description="Another action to try if this step fails, or null."
    )
    options: list[str] = Field(
        default_factory=list,
        max_length=10,
        description="For ask_user only: the few possible answers, offered as buttons.",
    )


class PlanOutput(BaseModel):
    """An execution plan for answering the user's question."""

    complexity: float = Field(
        ge=0.0, le=1.0, description="How hard the question is, from 0.0 (simple) to 1.0."
    )
    steps: list[PlanStepOutput] = Field(
        min_length=1, max_length=MAX_PLAN_STEPS, description="The steps, in order."
    )
    success_criteria: str = Field(
        default="", description="One sentence: what a complete answer must contain."
    )

    def to_draft(self) -> PlanDraft:
        return PlanDraft(
            complexity=self.complexity,
            steps=[PlanDraftStep.model_validate(s.model_dump(mode="json")) for s in self.steps],
            success_criteria=self.success_criteria,
        )


class EvaluationOutput(BaseModel):
    """A review of the answer."""

    self_eval: float = Field(
        ge=0.0,
        le=1.0,
        description="How sure you are that the answer is correct and grounded in the passages.",
    )
    coverage: float = Field(
        ge=0.0, le=1.0, description="How much of what the question asks the answer covers."
    )
    rationale: str = Field(description="One or two short sentences explaining the scores.")

    def to_evaluation(self) -> Evaluation:
        return Evaluation(
            self_eval=self.self_eval, coverage=self.coverage, rationale=self.rationale
        )


def _clamp01(value: Any) -> Any:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return value  # let validation report it
    if math.isnan(number):
        return value
    return min(1.0, max(0.0, number))


def coerce_plan(data: Any) -> PlanDraft:
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


def coerce_evaluation(data: Any) -> Evaluation:
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
