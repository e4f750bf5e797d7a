"""Prompt builders: the rules are there, user text is fenced, passages are bounded."""

from __future__ import annotations

from agent.ports import EvaluationRequest, PlanRequest, ReasoningRequest
from agent.prompts import (
    MAX_PASSAGES_TOTAL_CHARS,
    build_evaluation_prompt,
    build_plan_prompt,
    build_reasoning_prompt,
    format_passages,
    truncate,
)
from agent.schemas import Source


def test_plan_prompt_has_rules_actions_and_collections() -> None:
    prompt = build_plan_prompt(
        PlanRequest(query="最新の X は?", collections=["docs", "faq"], default_collection="docs")
    )

    for needle in ("2 to 5 steps", "first step always gathers", "last resort", "fallback"):
        assert needle in prompt
    for action in ("rag_search", "web_search", "reasoning", "ask_user"):
        assert f"`{action}`" in prompt
    assert "`docs` (default)" in prompt and "`faq`" in prompt
    assert "<question>\n最新の X は?\n</question>" in prompt
    assert "This is a replan" not in prompt


def test_plan_prompt_feedback_and_context_sections() -> None:
    prompt = build_plan_prompt(
        PlanRequest(
            query="q",
            context="Q: earlier question\nA: earlier answer",
            feedback="Step 1 failed: collection not found",
            completed_steps=["1. rag_search done"],
        )
    )

    assert "earlier answer" in prompt
    assert "This is a replan" in prompt
    assert "Step 1 failed: collection not found" in prompt
    assert "1. rag_search done" in prompt
    assert "none listed" in prompt


def test_reasoning_prompt_numbers_passages_and_includes_clarifications() -> None:
    prompt = build_reasoning_prompt(
        ReasoningRequest(
            query="How many vacation days?",
            passages=[Source(source="hr.md", text="20 days."), Source(source="faq", text="x")],
            user_inputs=["full-time staff"],
            context="earlier step output",
        )
    )

    assert "[1] (source: hr.md)\n20 days." in prompt
    assert "[2] (source: faq)" in prompt
    assert "full-time staff" in prompt
    assert "earlier step output" in prompt
    assert "[Source: name]" in prompt
    assert "same language as the question" in prompt
    assert "never invent" in prompt


def test_reasoning_prompt_without_passages_says_so() -> None:
    prompt = build_reasoning_prompt(ReasoningRequest(query="q"))

    assert "(no passages were found)" in prompt
    assert "Clarifications" not in prompt


def test_passages_are_truncated_within_budget() -> None:
    passages = [Source(source=f"doc{i}", text="word " * 2000) for i in range(30)]

    text = format_passages(passages)

    assert len(text) < MAX_PASSAGES_TOTAL_CHARS + 2000
    assert "[1] (source: doc0)" in text
    assert "…[truncated]" in text
    assert "more passage(s) omitted" in text


def test_truncate_keeps_short_text() -> None:
    assert truncate("  short  ", 100) == "short"
    assert len(truncate("x" * 500, 100)) == 100


def test_evaluation_prompt_asks_for_both_scores() -> None:
    prompt = build_evaluation_prompt(
        EvaluationRequest(
            query="q?", answer="a [Source: s]", passages=[Source(source="s", text="t")]
        )
    )

    assert "`self_eval`" in prompt and "`coverage`" in prompt and "`rationale`" in prompt
    assert "<answer>\na [Source: s]\n</answer>" in prompt
    assert "[1] (source: s)" in prompt
