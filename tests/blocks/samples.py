"""Domain objects for the Block Kit tests, built directly with the schema models."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from slack_sdk.models.blocks import Block

from agent.schemas import (
    ActionType,
    ConfidenceScore,
    ExecutionPlan,
    InterventionKind,
    InterventionLevel,
    InterventionRequest,
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
)
from blocks.limits import (
    MAX_BLOCKS_PER_MESSAGE,
    MAX_BUTTON_TEXT,
    MAX_BUTTON_VALUE,
    MAX_HEADER_TEXT,
    MAX_SECTION_TEXT,
    to_payload,
    validate_message,
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


def walk(value: Any) -> Iterator[dict[str, Any]]:
    """Every dict inside a payload, depth first."""
    if isinstance(value, dict):
        yield value
        for child in value.values():
            yield from walk(child)
    elif isinstance(value, list):
        for child in value:
            yield from walk(child)


def assert_valid(blocks: Sequence[Block]) -> list[dict[str, Any]]:
    """Slack would accept `blocks` as one message; checked twice (sdk + by hand)."""
    validate_message(blocks)
    payload = to_payload(blocks)
    assert 1 <= len(payload) <= MAX_BLOCKS_PER_MESSAGE
    for block in payload:
        if block["type"] == "section" and "text" in block:
            assert 0 < len(block["text"]["text"]) <= MAX_SECTION_TEXT
        if block["type"] == "header":
            assert len(block["text"]["text"]) <= MAX_HEADER_TEXT
        for element in walk(block):
            if element.get("type") == "button":
                assert len(element["text"]["text"]) <= MAX_BUTTON_TEXT
                assert len(element.get("value", "")) <= MAX_BUTTON_VALUE
    return payload


def all_text(payload: list[dict[str, Any]]) -> str:
    """Every text string of a payload joined, to search what a reader sees."""
    texts = [d["text"] for d in walk(payload) if isinstance(d.get("text"), str)]
    return "\n".join(texts)


def actions_of(payload: list[dict[str, Any]]) -> list[str]:
    """The action ids of every interactive element, in order."""
    return [d["action_id"] for d in walk(payload) if "action_id" in d]
