"""Builders of realistic run states for the storage tests."""

from __future__ import annotations

from datetime import datetime, timedelta

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
