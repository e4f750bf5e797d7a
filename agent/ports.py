"""The small interfaces the agent needs from the outside world.

`agent/` imports nothing from `bot/`, `storage/` or `blocks/`; those packages implement
these protocols and are handed in by whoever wires the application.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel, Field

from agent.schemas import (
    InterventionAnswer,
    PlanDraft,
    RunState,
    Source,
    TokenUsage,
    Verification,
    utcnow,
)

if TYPE_CHECKING:  # agent.confidence imports this module
    from agent.confidence import FittedCalibration

T = TypeVar("T")


# --------------------------------------------------------------------------- LLM


class LLMReply(BaseModel, Generic[T]):
    value: T
    usage: TokenUsage = Field(default_factory=TokenUsage)
    model: str = ""


class PlanRequest(BaseModel):
    query: str
    context: str = ""
    collections: list[str] = Field(default_factory=list)
    default_collection: str | None = None
    feedback: str | None = None
    """A human's request to change the plan (Modify / Edit)."""
    failure: str | None = None
    """Why the previous plan is being replaced, when the agent itself decided to replan."""
    completed_steps: list[str] = Field(default_factory=list)
    tried: list[str] = Field(default_factory=list)
    """What earlier steps of this run tried and found (query, hits, top sources, error),
    so a replan can do something else instead of repeating them."""


class ReasoningRequest(BaseModel):
    query: str
    instruction: str = ""
    passages: list[Source] = Field(default_factory=list)
    context: str = ""
    user_inputs: list[str] = Field(default_factory=list)


class Evaluation(BaseModel):
    """Self-evaluation and coverage in one call (SPEC §2.5: cheaper)."""

    self_eval: float = Field(default=0.5, ge=0.0, le=1.0)
    coverage: float = Field(default=0.5, ge=0.0, le=1.0)
    rationale: str = ""


class EvaluationRequest(BaseModel):
    query: str
    answer: str
    passages: list[Source] = Field(default_factory=list)


class LanguageModel(Protocol):
    """Task-level LLM interface: Gemini implements it with prompts, offline with heuristics."""

    @property
    def name(self) -> str: ...

    async def plan(self, request: PlanRequest) -> LLMReply[PlanDraft]: ...

    async def reason(self, request: ReasoningRequest) -> LLMReply[str]: ...

    async def evaluate(self, request: EvaluationRequest) -> LLMReply[Evaluation]: ...


class Embedder(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    async def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


# --------------------------------------------------------------------------- tools


class KnowledgeBase(Protocol):
    async def search(self, query: str, *, collection: str | None, limit: int) -> list[Source]:
        """Hybrid search; raises `VectorStoreError` when the store is unreachable and
        `InvalidInputError` for an unknown collection."""
        ...

    async def collections(self) -> list[str]: ...

    @property
    def default_collection(self) -> str: ...


class WebSearchProvider(Protocol):
    async def search(self, query: str, *, limit: int) -> list[Source]: ...


# --------------------------------------------------------------------------- run life


class RunEventType(StrEnum):
    RUN_STARTED = "run_started"
    RUN_RECOVERED = "run_recovered"
    PLAN_CREATED = "plan_created"
    STEP_STARTED = "step_started"
    STEP_FINISHED = "step_finished"
    INTERVENTION_REQUESTED = "intervention_requested"
    INTERVENTION_ANSWERED = "intervention_answered"
    REPLANNED = "replanned"
    ANSWER_READY = "answer_ready"
    RUN_CANCELLED = "run_cancelled"
    RUN_FAILED = "run_failed"


class RunEvent(BaseModel):
    type: RunEventType
    run_id: str
    step_id: int | None = None
    message: str = ""
    data: dict[str, Any] = Field(default_factory=dict)
    at: datetime = Field(default_factory=utcnow)


@runtime_checkable
class RunObserver(Protocol):
    """Told about every transition *after* the run store has committed it."""

    async def on_event(self, event: RunEvent, state: RunState) -> None: ...


class ClaimResult(BaseModel):
    """Outcome of trying to take an intervention for answering."""

    claimed: bool
    state: RunState | None = None
    answered_by: str | None = None
    reason: str = ""


class RunConflictError(Exception):
    """The stored run changed since the caller loaded it (a cancel, another worker that
    took it over): the caller's copy is stale and was not written."""

    def __init__(self, run_id: str, *, expected: int, stored: int | None) -> None:
        super().__init__(f"run {run_id} is at version {stored}, not {expected}")
        self.run_id = run_id
        self.expected = expected
        self.stored = stored


class RunStore(Protocol):
    """Durable (or in-memory) home of run state. `save` must commit before returning."""

    async def save(self, state: RunState, event: RunEvent | None = None) -> None:
        """Write `state` if the stored run is still at `state.version` (0: a new run),
        then bump `version`; otherwise raise `RunConflictError` and write nothing.

        `event` is the transition being saved: a durable store appends it to the run's
        audit trail in the same transaction, so the trail never misses or invents one."""
        ...

    async def load(self, run_id: str) -> RunState | None: ...

    async def renew_lease(self, run_id: str, worker: str, until: datetime) -> bool:
        """Extend the lease of a run `worker` is driving; False once it is no longer
        that worker's (taken over, paused, finished). Does not change `version`."""
        ...

    async def claim_intervention(
        self, run_id: str, intervention_id: str, answer: InterventionAnswer
    ) -> ClaimResult:
        """Atomically mark a pending intervention answered: of concurrent callers exactly
        one gets `claimed=True`; the rest learn who answered."""
        ...


class UsageLedger(Protocol):
    """Where spent money is recorded, so hourly and daily limits can be enforced."""

    async def record(self, run_id: str, usage: TokenUsage, model: str) -> None: ...

    async def spent_since(self, since: datetime) -> float: ...


# --------------------------------------------------------------------------- verified answers


class VerifiedAnswer(BaseModel):
    """A person's answer an approver saved (issue 19): the question, the answer, who
    verified it (Slack id and display name), when, until when it counts as strong, and
    the thread's permalink — nothing else from Slack. The database row is the record of
    truth; the knowledge base holds a searchable copy (agent/knowledge/verified.py)."""

    answer_id: str
    question: str
    answer: str
    verified_by: str
    """Who verified it: a Slack user id, or the name an operator gave `grace verified add`."""
    verified_by_name: str
    verified_at: datetime = Field(default_factory=utcnow)
    review_by: datetime
    permalink: str | None = None
    run_id: str | None = None
    """The run whose answer was saved (one saved answer per run), None when added by hand."""
    team_id: str | None = None
    """The team whose runs it answers (see `Verification.team_id`); None: every team's."""

    def verification(self) -> Verification:
        return Verification(
            answer_id=self.answer_id,
            question=self.question,
            verified_by=self.verified_by_name,
            verified_at=self.verified_at,
            review_by=self.review_by,
            permalink=self.permalink,
            team_id=self.team_id,
        )


class VerifiedAnswers(Protocol):
    """Where verified answers are kept (storage/verified_answers.py)."""

    async def add(self, answer: VerifiedAnswer) -> VerifiedAnswer:
        """Store it; when its run already has one, return that one and store nothing."""
        ...

    async def get(self, answer_id: str) -> VerifiedAnswer | None: ...

    async def for_run(self, run_id: str) -> VerifiedAnswer | None: ...

    async def recent(self, *, limit: int = 100) -> list[VerifiedAnswer]: ...

    async def remove(self, answer_id: str) -> bool:
        """Delete it; False when there was none."""
        ...


@runtime_checkable
class CalibrationStore(Protocol):
    """Where the confidence maps fitted by `grace calibrate` are kept, one per provider;
    whatever wires the agent loads them and hands them to the orchestrator."""

    async def load(self) -> list[FittedCalibration]: ...

    async def get(self, provider: str) -> FittedCalibration | None: ...

    async def save(self, fit: FittedCalibration) -> None: ...

    async def reset(self, provider: str) -> bool: ...
