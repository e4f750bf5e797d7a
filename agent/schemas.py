"""Domain schemas shared by every layer (SPEC §2.1).

Everything that crosses a boundary — the LLM, the run store, the Slack layer — is a
pydantic model here, so a run can be saved as JSON and loaded back unchanged. It stays
one module a little over 500 lines because the models nest into one document (a
`RunState` holds its plan, step results, interventions, sources and replans) and every
layer imports them from this one place; split, the parts would only import each other.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from enum import StrEnum
from typing import Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from agent.policy import RunPolicy


def utcnow() -> datetime:
    return datetime.now(UTC)


def new_id() -> str:
    return uuid.uuid4().hex[:12]


class ActionType(StrEnum):
    RAG_SEARCH = "rag_search"
    WEB_SEARCH = "web_search"
    REASONING = "reasoning"
    ASK_USER = "ask_user"


class StepStatus(StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    SUCCESS = "success"
    PARTIAL = "partial"
    FAILED = "failed"
    SKIPPED = "skipped"


class InterventionLevel(StrEnum):
    SILENT = "silent"
    NOTIFY = "notify"
    CONFIRM = "confirm"
    ESCALATE = "escalate"


class InterventionAction(StrEnum):
    PROCEED = "proceed"
    MODIFY = "modify"
    CANCEL = "cancel"
    INPUT = "input"
    RETRY = "retry"
    SKIP = "skip"


class InterventionKind(StrEnum):
    """Why a run paused: the Slack layer renders each kind differently."""

    PLAN_APPROVAL = "plan_approval"
    CONFIRM = "confirm"
    ESCALATE = "escalate"
    ASK_USER = "ask_user"


class InterventionStatus(StrEnum):
    PENDING = "pending"
    ANSWERED = "answered"
    EXPIRED = "expired"
    CANCELLED = "cancelled"


class ReplanTrigger(StrEnum):
    STEP_FAILED = "step_failed"
    LOW_CONFIDENCE = "low_confidence"
    USER_FEEDBACK = "user_feedback"
    NEW_INFORMATION = "new_information"
    TIMEOUT = "timeout"


class ReplanStrategy(StrEnum):
    PARTIAL = "partial"
    FULL = "full"
    FALLBACK = "fallback"
    SKIP = "skip"
    ABORT = "abort"


class RunStatus(StrEnum):
    PLANNING = "planning"
    RUNNING = "running"
    PAUSED = "paused"
    ANSWERED = "answered"
    CANCELLED = "cancelled"
    FAILED = "failed"

    @property
    def is_final(self) -> bool:
        return self in {RunStatus.ANSWERED, RunStatus.CANCELLED, RunStatus.FAILED}

    @property
    def is_active(self) -> bool:
        """A worker process is driving the run (and holds its lease)."""
        return self in {RunStatus.PLANNING, RunStatus.RUNNING}


# --------------------------------------------------------------------------- plans


class PlanStep(BaseModel):
    step_id: int = Field(ge=1)
    action: ActionType
    description: str
    query: str = ""
    collection: str | None = None
    depends_on: list[int] = Field(default_factory=list)
    expected_output: str = ""
    fallback: ActionType | None = None
    timeout_seconds: float = Field(default=30.0, gt=0)
    fallback_of: ActionType | None = None
    """Set when this step is a failed step's fallback: the action it replaces."""
    options: list[str] = Field(default_factory=list)
    """For `ask_user`: the possible answers, offered as buttons."""


class ExecutionPlan(BaseModel):
    plan_id: str = Field(default_factory=new_id)
    original_query: str
    complexity: float = Field(ge=0.0, le=1.0)
    estimated_steps: int
    requires_confirmation: bool = False
    steps: list[PlanStep]
    success_criteria: str = ""
    created_at: datetime = Field(default_factory=utcnow)

    def step(self, step_id: int) -> PlanStep:
        for step in self.steps:
            if step.step_id == step_id:
                return step
        raise KeyError(f"plan {self.plan_id} has no step {step_id}")


class PlanDraftStep(BaseModel):
    """What an LLM is asked to produce for one step: no ids it could get wrong twice."""

    step_id: int
    action: str
    description: str
    query: str = ""
    collection: str | None = None
    depends_on: list[int] = Field(default_factory=list)
    expected_output: str = ""
    fallback: str | None = None
    options: list[str] = Field(default_factory=list)


class PlanDraft(BaseModel):
    """The LLM's structured planning output, validated and repaired by the planner."""

    complexity: float = 0.5
    steps: list[PlanDraftStep]
    success_criteria: str = ""


# --------------------------------------------------------------------------- results


class TokenUsage(BaseModel):
    input_tokens: int = 0
    output_tokens: int = 0
    calls: int = 0
    cost_usd: float = 0.0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            calls=self.calls + other.calls,
            cost_usd=self.cost_usd + other.cost_usd,
        )


VERIFIED_PREFIX = "verified answer "
"""Source names of saved verified answers: `verified answer <id>` (agent/knowledge/verified.py)."""


class Verification(BaseModel):
    """Who vouched for a passage that is a saved verified answer, when, and until when it
    counts as a strong source (its review date). Names are display names, never raw ids."""

    model_config = ConfigDict(frozen=True)

    answer_id: str
    question: str
    verified_by: str
    """The approver's display name, as `Verified by @alice` shows it."""
    verified_at: datetime
    review_by: datetime
    permalink: str | None = None
    team_id: str | None = None
    """The one team it answers for (several Slack workspaces on one deployment: saved
    from that team's run); None: every team's (added by an operator, or one workspace)."""

    def visible_to(self, team_id: str) -> bool:
        return self.team_id is None or self.team_id == team_id

    def fresh(self, now: datetime | None = None) -> bool:
        """Still before its review date: a strong source."""
        return (now or utcnow()) < self.review_by

    @property
    def label(self) -> str:
        """How an answer cites it: `Verified by @alice on 26 Nov 2026`."""
        day = self.verified_at.astimezone(UTC)
        return f"Verified by @{self.verified_by} on {day.day} {day:%b %Y}"


class Source(BaseModel):
    """A passage an answer rests on. `similarity` is 0–1, comparable across backends."""

    source: str
    text: str
    chunk_id: str = ""
    score: float = 0.0
    similarity: float = 0.0
    collection: str | None = None
    vector: list[float] | None = Field(default=None, exclude=True, repr=False)
    """The passage's stored dense vector when the search had it (reused for source
    agreement instead of embedding the text again); never saved with the run."""
    doc_title: str = ""
    """The title of the document the passage comes from (empty when unknown)."""
    doc_date: str | None = None
    """ISO date of that document, from its file name or its text, when it states one."""
    stale: bool = False
    """True when the document is an older copy of another one in the knowledge base."""
    superseded_by: str | None = None
    """The source name of the current version, when `stale`."""
    from_person: bool = False
    """A person's reply in the thread (cited as the person), not a document."""
    page: int | None = None
    """The PDF page the passage is on (1-based), when the document has pages."""
    section: str = ""
    """The heading trail the passage sits under ("Leave › Sick days"), when known."""
    url: str | None = None
    """The web address of the page the passage comes from (crawled web pages)."""
    verified: Verification | None = None
    """A saved verified answer (a person's reply an approver vouched for), not a document."""

    @property
    def citation(self) -> str:
        """Where the passage is, in the words a reader looks for: "handbook.pdf, p. 12",
        "handbook.docx › Leave › Sick days", or a web page's title (its link is `url`);
        a verified answer: "Verified by @alice on 26 Nov 2026"."""
        if self.verified is not None:
            if self.verified.fresh():
                return self.verified.label
            return f"{self.verified.label} (past its review date)"
        if self.url:
            return self.doc_title or self.url
        if self.page is not None:
            return f"{self.source}, p. {self.page}"
        if self.section:
            return f"{self.source} › {self.section}"
        return self.source


class AnswerFeatures(BaseModel):
    """What predicts that an answer is right, read from the answer and its passages for
    any model (agent/evidence/features.py); the confidence map (agent/confidence.py) is
    fitted on these. An answer taken from a person's reply carries `from_person` only."""

    model_config = ConfigDict(frozen=True)

    from_person: bool = False
    verified: bool = False
    """The answer rests on a saved verified answer still before its review date."""
    answer_coverage: float = 0.0
    """IDF-weighted share of the question the quoted evidence covers."""
    value_type_match: bool = False
    """The quoted evidence holds a value of the kind asked for."""
    document_margin: float = 0.0
    """How clearly the answer's document beats the best other one holding such a value."""
    competing_documents: int = 0
    """Other documents whose best candidate scores close to the answer's."""
    search_match: float = 0.0
    sources_conflict: bool = False
    """Sources disagree: the answer says so, or an older version says something else."""
    passage_coverage: float = 0.0
    answer_score: float = 0.0
    unit_margin: float = 0.0
    question_terms: int = 0
    value_asked: bool = False
    absent_terms: float = 0.0
    """IDF-weighted share of the question no candidate passage holds."""
    missing_name: bool = False
    """The question names something the answer's document never mentions."""
    question_spread: int = 0
    """How many documents (versions of one counted once) among the passages hold the
    question's most specific word: 1 when some word of the question singles out one
    document, 0 when no passage holds any."""

    def as_map(self) -> dict[str, float]:
        """The features as numbers by name: what the calibration weighs and the step's
        confidence breakdown shows."""
        if self.from_person:
            return {"from_person": 1.0}
        if self.verified:
            return {"verified": 1.0}
        return {
            name: float(value)
            for name, value in self.model_dump().items()
            if name not in ("from_person", "verified")
        }


class ToolResult(BaseModel):
    success: bool
    output: str = ""
    sources: list[Source] = Field(default_factory=list)
    confidence_factors: dict[str, float] = Field(default_factory=dict)
    answer_features: AnswerFeatures | None = None
    """The answer's evidence features (reasoning steps), for the confidence map."""
    error: str | None = None
    execution_time_ms: float = 0.0
    token_usage: TokenUsage = Field(default_factory=TokenUsage)


class ConfidenceScore(BaseModel):
    score: float = Field(ge=0.0, le=1.0)
    breakdown: dict[str, float] = Field(default_factory=dict)
    penalties: list[str] = Field(default_factory=list)
    is_search_step: bool = False


class StepResult(BaseModel):
    step_id: int
    action: ActionType
    status: StepStatus
    output: str = ""
    confidence: float = 0.0
    confidence_detail: ConfidenceScore | None = None
    level: InterventionLevel | None = None
    sources: list[Source] = Field(default_factory=list)
    answer_features: AnswerFeatures | None = None
    """The answer's evidence features (reasoning steps), kept even when the model's map
    does not weigh them (Gemini's default), so `grace calibrate` can fit one that does."""
    error: str | None = None
    execution_time_ms: float = 0.0
    token_usage: TokenUsage = Field(default_factory=TokenUsage)
    used_fallback: ActionType | None = None
    attempts: int = 1


class ReplanDecision(BaseModel):
    """What to do about a trigger, and why (`agent/replan.py` decides)."""

    trigger: ReplanTrigger
    strategy: ReplanStrategy
    reason: str
    failed_step_id: int | None = None
    tried: list[str] = Field(default_factory=list)
    """What the run's steps had tried and found up to this replan (cumulative)."""
    searched: list[str] = Field(default_factory=list)
    """The searches run up to this replan, normalised (cumulative; see agent/replan.py),
    so no later replan runs one of them again."""


class ReplanRecord(ReplanDecision):
    """A decision carried out, kept in the run's history: the plan before and after."""

    old_steps: list[str] = Field(default_factory=list)
    new_steps: list[str] = Field(default_factory=list)
    created_at: datetime = Field(default_factory=utcnow)


class InterventionRequest(BaseModel):
    """A question the run needs a human to answer before it can go on (SPEC §2.6)."""

    intervention_id: str = Field(default_factory=new_id)
    run_id: str
    step_id: int | None = None
    kind: InterventionKind
    level: InterventionLevel
    question: str
    reason: str = ""
    options: list[str] = Field(default_factory=list)
    urgency: Literal["blocking", "optional"] = "blocking"
    confidence: ConfidenceScore | None = None
    status: InterventionStatus = InterventionStatus.PENDING
    allowed_responders: list[str] = Field(default_factory=list)
    allowed_groups: list[str] = Field(default_factory=list)
    """Groups whose members may also answer (an escalation's expert user groups): who is
    a member is for the caller to check, where the groups live."""
    answered_by: str | None = None
    answer: InterventionAnswer | None = None
    created_at: datetime = Field(default_factory=utcnow)
    expires_at: datetime | None = None
    answered_at: datetime | None = None


class InterventionAnswer(BaseModel):
    action: InterventionAction
    text: str | None = None
    option: int | None = None
    user: str | None = None
    """Who answered, as an id: what permissions and `answered_by` go by."""
    member_of: list[str] = Field(default_factory=list)
    """The request's `allowed_groups` the caller found `user` in (empty when the person
    is named directly): why a person no list names may answer."""
    user_name: str | None = None
    """Their display name, when known: how an answer citing their reply names them."""


class ExecutionResult(BaseModel):
    plan: ExecutionPlan | None
    step_results: list[StepResult] = Field(default_factory=list)
    final_answer: str = ""
    sources: list[Source] = Field(default_factory=list)
    overall_confidence: float = 0.0
    overall_detail: ConfidenceScore | None = None
    level: InterventionLevel | None = None
    replan_count: int = 0
    replan_history: list[ReplanRecord] = Field(default_factory=list)
    total_execution_time_ms: float = 0.0
    step_success_rate: float = 0.0
    token_usage: TokenUsage = Field(default_factory=TokenUsage)
    cost_usd: float = 0.0


class ThreadKey(BaseModel):
    """Where a run lives in Slack; the CLI uses a synthetic key."""

    team_id: str = "local"
    channel_id: str = "cli"
    thread_ts: str = ""
    enterprise_id: str | None = None
    """The Enterprise Grid org of the team, when it is in one: which installation acts."""


class RunOrigin(StrEnum):
    """Where a run was asked, and so where it answers."""

    SLACK_THREAD = "slack_thread"
    """A mention, a DM or a thread in a channel: the answer goes to that thread."""
    ASSISTANT_PANE = "assistant_pane"
    """A thread of Slack's assistant pane: the thread, plus its status line and title."""
    COMMAND_LINE = "command_line"
    """`grace ask` (or `grace eval`): nothing is posted anywhere."""


class RunState(BaseModel):
    """The whole, serialisable state of one run: what the run store saves and loads."""

    run_id: str = Field(default_factory=new_id)
    query: str
    asker: str = "local-user"
    thread: ThreadKey = Field(default_factory=ThreadKey)
    origin: RunOrigin = RunOrigin.COMMAND_LINE
    """Stored in the run's JSON; runs stored before it existed (and runs created without
    one) get it from their thread: a Slack thread has a ts, the command line's key none."""
    collection: str | None = None
    policy: RunPolicy = Field(default_factory=RunPolicy)
    """Where the run was asked may narrow its collections, name its approvers, experts
    and thresholds (agent/policy.py); the default is the global configuration."""
    context: str = ""
    status: RunStatus = RunStatus.PLANNING
    plan: ExecutionPlan | None = None
    step_results: dict[int, StepResult] = Field(default_factory=dict)
    pending: InterventionRequest | None = None
    interventions: list[InterventionRequest] = Field(default_factory=list)
    user_inputs: list[str] = Field(default_factory=list)
    human_sources: list[Source] = Field(default_factory=list)
    """Facts people supplied in replies to an escalation: the answer may rest on them."""
    replan_history: list[ReplanRecord] = Field(default_factory=list)
    final_answer: str = ""
    sources: list[Source] = Field(default_factory=list)
    overall_confidence: float | None = None
    overall_detail: ConfidenceScore | None = None
    level: InterventionLevel | None = None
    token_usage: TokenUsage = Field(default_factory=TokenUsage)
    llm_model: str = ""
    error: str | None = None
    failure_count: int = 0
    consecutive_failures: int = 0
    low_confidence_accepted: bool = False
    """A human said "proceed anyway" once: do not escalate low confidence again."""
    version: int = 0
    worker: str | None = None
    """The process driving the run while it is PLANNING or RUNNING (see agent/workers.py)."""
    lease_expires_at: datetime | None = None
    """Until when `worker` is presumed alive; it renews the lease while it works."""
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)
    execution_time_ms: float = 0.0

    @model_validator(mode="after")
    def _origin_from_thread(self) -> Self:
        if "origin" not in self.model_fields_set and self.thread.thread_ts:
            self.origin = RunOrigin.SLACK_THREAD
        return self

    @property
    def replan_count(self) -> int:
        return len(self.replan_history)

    def result(self) -> ExecutionResult:
        steps = [self.step_results[k] for k in sorted(self.step_results)]
        done = [s for s in steps if s.status is not StepStatus.SKIPPED]
        ok = [s for s in done if s.status in (StepStatus.SUCCESS, StepStatus.PARTIAL)]
        return ExecutionResult(
            plan=self.plan,
            step_results=steps,
            final_answer=self.final_answer,
            sources=self.sources,
            overall_confidence=self.overall_confidence or 0.0,
            overall_detail=self.overall_detail,
            level=self.level,
            replan_count=self.replan_count,
            replan_history=self.replan_history,
            total_execution_time_ms=self.execution_time_ms,
            step_success_rate=(len(ok) / len(done)) if done else 0.0,
            token_usage=self.token_usage,
            cost_usd=self.token_usage.cost_usd,
        )


InterventionRequest.model_rebuild()
