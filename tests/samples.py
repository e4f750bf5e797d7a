"""Domain objects built directly with the schema models, for the tests of every layer.

Two runs, for two jobs: `state()` is a run as the Block Kit tests render it (every step
status, long text on demand); `make_state()` is a run as the storage tests round-trip it
(a collection, user inputs, replans and an intervention awaiting an answer). And one
verified answer, as the agent cites it, the blocks show it and storage keeps it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from agent.ports import VerifiedAnswer
from agent.schemas import (
    ActionType,
    ConfidenceScore,
    ExecutionPlan,
    InterventionKind,
    InterventionLevel,
    InterventionRequest,
    InterventionStatus,
    PlanStep,
    ReplanRecord,
    ReplanStrategy,
    ReplanTrigger,
    RunState,
    RunStatus,
    Source,
    StepResult,
    StepStatus,
    ThreadKey,
    TokenUsage,
    utcnow,
)

WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu".split()


def words(n_chars: int, seed: int = 0) -> str:
    """Deterministic prose of about `n_chars` characters, with sentences and paragraphs."""
    out: list[str] = []
    size = 0
    i = seed
    while size < n_chars:
        word = WORDS[i % len(WORDS)]
        if i % 13 == 12:
            word += "."
        if i % 97 == 96:
            word += "\n\n"
        out.append(word)
        size += len(word) + 1
        i += 1
    return " ".join(out)[:n_chars]


def detail(score: float = 0.55) -> ConfidenceScore:
    return ConfidenceScore(
        score=score,
        breakdown={
            "search_quality": 0.31,
            "tool_success": 1.0,
            "source_agreement": 0.45,
            "llm_self_eval": 0.5,
            "query_coverage": 0.8,
        },
        penalties=["single source ×0.9", "tool failures ×0.9"],
        is_search_step=True,
    )


def plan(n_steps: int = 3, description_chars: int = 40, query: str = "q") -> ExecutionPlan:
    actions = [ActionType.RAG_SEARCH, ActionType.WEB_SEARCH, ActionType.REASONING]
    steps = [
        PlanStep(
            step_id=i,
            action=actions[(i - 1) % len(actions)],
            description=words(description_chars, seed=i),
            query=f"query {i}",
            depends_on=[i - 1] if i > 1 else [],
        )
        for i in range(1, n_steps + 1)
    ]
    return ExecutionPlan(
        original_query=query,
        complexity=0.72,
        estimated_steps=n_steps,
        requires_confirmation=True,
        steps=steps,
    )


def results(n_steps: int) -> dict[int, StepResult]:
    """A mix of every step status for the first steps, the rest pending."""
    statuses = [
        StepStatus.SUCCESS,
        StepStatus.PARTIAL,
        StepStatus.FAILED,
        StepStatus.SKIPPED,
        StepStatus.RUNNING,
    ]
    out: dict[int, StepResult] = {}
    for i, status in enumerate(statuses[:n_steps], start=1):
        out[i] = StepResult(
            step_id=i,
            action=ActionType.RAG_SEARCH,
            status=status,
            output="out",
            confidence=0.82 if status is StepStatus.SUCCESS else 0.35,
            level=InterventionLevel.NOTIFY if status is StepStatus.SUCCESS else None,
            error="timed out <!channel> & more" if status is StepStatus.FAILED else None,
        )
    return out


def plan_approval(run_id: str) -> InterventionRequest:
    return InterventionRequest(
        run_id=run_id,
        kind=InterventionKind.PLAN_APPROVAL,
        level=InterventionLevel.CONFIRM,
        question="Run this plan?",
        reason="complexity 0.72 > 0.6",
        allowed_responders=["U0ASKER001"],
        expires_at=datetime(2030, 1, 1, tzinfo=UTC),
    )


def confirm_request(run_id: str, step_id: int = 2) -> InterventionRequest:
    return InterventionRequest(
        run_id=run_id,
        step_id=step_id,
        kind=InterventionKind.CONFIRM,
        level=InterventionLevel.CONFIRM,
        question="Step 2 found weak evidence. Proceed?",
        reason="confidence 0.55 < notify threshold 0.70",
        confidence=detail(0.55),
        allowed_responders=["U0ASKER001", "U0APPROVER"],
        expires_at=datetime.now(UTC) + timedelta(hours=24),
    )


def escalate_request(
    run_id: str,
    options: Sequence[str] = ("Tokyo office", "Osaka office"),
    kind: InterventionKind = InterventionKind.ESCALATE,
    question: str = "Which office do you mean?",
) -> InterventionRequest:
    return InterventionRequest(
        run_id=run_id,
        step_id=1,
        kind=kind,
        level=InterventionLevel.ESCALATE,
        question=question,
        reason="the question is ambiguous",
        options=list(options),
        confidence=detail(0.21),
    )


def sources(n: int, text_chars: int = 400) -> list[Source]:
    return [
        Source(
            source=f"doc-{i % max(1, n // 2)}.md",
            text=words(text_chars, seed=i),
            chunk_id=f"c{i}",
            similarity=0.5 + (i % 5) / 10,
        )
        for i in range(n)
    ]


def state(
    *,
    n_steps: int = 3,
    description_chars: int = 40,
    query: str = "How many vacation days do new employees get?",
    status: RunStatus = RunStatus.RUNNING,
    pending: InterventionRequest | None = None,
    answer: str = "",
    n_sources: int = 2,
) -> RunState:
    run = RunState(
        run_id="run123abc456",
        query=query,
        asker="U0ASKER001",
        thread=ThreadKey(team_id="T0FAKE0001", channel_id="C0GENERAL1", thread_ts="1.000100"),
        status=status,
        plan=plan(n_steps, description_chars, query) if n_steps else None,
        step_results=results(n_steps),
        final_answer=answer,
        sources=sources(n_sources),
        overall_confidence=0.82 if answer else None,
        overall_detail=detail(0.82) if answer else None,
        level=InterventionLevel.NOTIFY if answer else None,
        llm_model="offline",
        token_usage=TokenUsage(input_tokens=1200, output_tokens=300, calls=4, cost_usd=0.0012),
        execution_time_ms=4321.0,
        replan_history=[
            ReplanRecord(
                trigger=ReplanTrigger.STEP_FAILED,
                strategy=ReplanStrategy.PARTIAL,
                reason="step 3 timed out",
                failed_step_id=3,
            )
        ],
    )
    if pending is not None:
        run.pending = pending.model_copy(update={"run_id": run.run_id})
        run.interventions.append(run.pending)
    return run


# ---- runs as the storage tests round-trip them ----------------------------------------


def make_request(
    run_id: str,
    *,
    step_id: int | None = 2,
    expires_in: timedelta | None = timedelta(hours=24),
    now: datetime | None = None,
) -> InterventionRequest:
    now = now or utcnow()
    return InterventionRequest(
        run_id=run_id,
        step_id=step_id,
        kind=InterventionKind.CONFIRM,
        level=InterventionLevel.CONFIRM,
        question="Proceed with the answer? 有給休暇",
        reason="confidence 0.55 is below 0.7",
        options=["Proceed", "Modify", "Cancel"],
        confidence=ConfidenceScore(score=0.55, breakdown={"search_quality": 0.6}),
        allowed_responders=["U_ASKER", "U_APPROVER"],
        created_at=now,
        expires_at=(now + expires_in) if expires_in is not None else None,
    )


def make_state(
    *,
    thread_ts: str = "1700000000.000100",
    channel_id: str = "C1",
    status: RunStatus = RunStatus.PAUSED,
    replans: int = 1,
    with_intervention: bool = True,
    created_at: datetime | None = None,
) -> RunState:
    """A run with a plan, step results, replan history and (optionally) a pending pause."""
    state = RunState(
        query="How many days of paid leave do I get? 有給休暇は何日？",
        asker="U_ASKER",
        thread=ThreadKey(team_id="T1", channel_id=channel_id, thread_ts=thread_ts),
        collection="hr",
        status=status,
        llm_model="offline",
    )
    if created_at is not None:
        state.created_at = created_at
    state.plan = ExecutionPlan(
        original_query=state.query,
        complexity=0.4,
        estimated_steps=2,
        steps=[
            PlanStep(step_id=1, action=ActionType.RAG_SEARCH, description="search", query="leave"),
            PlanStep(
                step_id=2,
                action=ActionType.REASONING,
                description="answer",
                depends_on=[1],
                fallback=ActionType.WEB_SEARCH,
            ),
        ],
    )
    source = Source(source="hr/leave.md", text="20 days", chunk_id="c1", similarity=0.8)
    state.step_results = {
        1: StepResult(
            step_id=1,
            action=ActionType.RAG_SEARCH,
            status=StepStatus.SUCCESS,
            output="found",
            confidence=0.8,
            confidence_detail=ConfidenceScore(score=0.8, penalties=["single source ×0.9"]),
            sources=[source],
            token_usage=TokenUsage(input_tokens=10, output_tokens=5, calls=1, cost_usd=0.001),
        ),
        2: StepResult(
            step_id=2,
            action=ActionType.REASONING,
            status=StepStatus.PARTIAL,
            output="20 days [Source: hr/leave.md]",
            confidence=0.55,
            level=InterventionLevel.CONFIRM,
            sources=[source],
        ),
    }
    state.replan_history = [
        ReplanRecord(
            trigger=ReplanTrigger.LOW_CONFIDENCE,
            strategy=ReplanStrategy.PARTIAL,
            reason=f"replan {i}",
            failed_step_id=2,
            old_steps=["search", "answer"],
            new_steps=["search", "answer better"],
        )
        for i in range(replans)
    ]
    state.token_usage = TokenUsage(input_tokens=100, output_tokens=50, calls=3, cost_usd=0.02)
    state.overall_confidence = 0.55
    state.level = InterventionLevel.CONFIRM
    state.user_inputs = ["the Tokyo office"]
    if with_intervention:
        request = make_request(state.run_id)
        state.interventions = [request]
        state.pending = request
    return state


def answered(request: InterventionRequest, user: str) -> InterventionRequest:
    """A copy of `request` as the orchestrator would hold it after a local answer."""
    return request.model_copy(
        update={"status": InterventionStatus.ANSWERED, "answered_by": user, "answered_at": utcnow()}
    )


# ---- a verified answer ---------------------------------------------------------------

VERIFIED_QUESTION = "What is the capital of Mongolia?"
VERIFIED_PERMALINK = "https://example.slack.com/archives/C1/p1700000000000100"


def verified_answer(
    *, answer_id: str = "ab12cd34", verified_at: datetime | None = None, run_id: str | None = None
) -> VerifiedAnswer:
    """A person's answer that alice (an approver) saved at `verified_at` (default now), to
    be reviewed 180 days later."""
    at = verified_at or utcnow()
    return VerifiedAnswer(
        answer_id=answer_id,
        question=VERIFIED_QUESTION,
        answer="It is Ulaanbaatar.",
        verified_by="U0APPROVER3",
        verified_by_name="alice",
        verified_at=at,
        review_by=at + timedelta(days=180),
        permalink=VERIFIED_PERMALINK,
        run_id=run_id,
    )
