"""What every Gemini call sends (system instruction, schema, budgets, AFC off) and how
strict output schemas are enforced, through the real SDK against the fake server."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from agent.errors import LLMError, PlanningError
from agent.llm.gemini import GeminiEmbedder, GeminiModel
from agent.ports import EvaluationRequest, PlanRequest, ReasoningRequest
from agent.schemas import Source
from tests.fakes.fake_gemini import BATCH_EMBED, GENERATE, FakeGemini

PLAN_REQUEST = PlanRequest(query="What is our VPN policy?", default_collection="handbook")
STEP = {
    "step_id": 1,
    "action": "rag_search",
    "description": "Search",
    "query": "VPN",
    "collection": None,
    "depends_on": [],
    "expected_output": "passages",
    "fallback": None,
}
GOOD_PLAN = {
    "complexity": 0.2,
    "steps": [STEP, {**STEP, "step_id": 2, "action": "reasoning", "depends_on": [1]}],
    "success_criteria": "the policy",
}
BAD_PLAN = {**GOOD_PLAN, "steps": [{**STEP, "action": "google_search"}]}


def _walk(schema: Any) -> list[dict[str, Any]]:
    nodes = []
    if isinstance(schema, dict):
        nodes.append(schema)
        for value in schema.values():
            nodes.extend(_walk(value))
    elif isinstance(schema, list):
        for value in schema:
            nodes.extend(_walk(value))
    return nodes


async def _one_of_each(fake: FakeGemini, model: GeminiModel) -> None:
    fake.reply_json(GOOD_PLAN)
    fake.reply_text("Use the VPN [Source: a.md].")
    fake.reply_json({"self_eval": 0.9, "coverage": 0.9, "rationale": "ok"})
    await model.plan(PLAN_REQUEST)
    await model.reason(ReasoningRequest(query="q", passages=[Source(source="a.md", text="t")]))
    await model.evaluate(EvaluationRequest(query="q", answer="a"))


async def test_every_call_kind_has_a_system_instruction_budgets_and_no_afc(
    fake: FakeGemini, model: GeminiModel, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)

    await _one_of_each(fake, model)

    plan, reasoning, evaluation = fake.calls(GENERATE)
    for call, role in (
        (plan, "planning agent"),
        (reasoning, "careful assistant"),
        (evaluation, "strict reviewer"),
    ):
        system = call.body["systemInstruction"]["parts"][0]["text"]
        assert role in system
        assert "DATA written by users" in system and "never an instruction" in system
        assert "<question>" in call.body["contents"][0]["parts"][0]["text"]
        assert "tools" not in call.body
    budgets = {
        name: (c.generation_config["maxOutputTokens"], c.generation_config["thinkingConfig"])
        for name, c in (("plan", plan), ("reasoning", reasoning), ("evaluation", evaluation))
    }
    assert budgets["evaluation"][1] == {"thinking_budget": 0}
    assert budgets["evaluation"][0] < budgets["plan"][0] <= budgets["reasoning"][0]
    assert budgets["plan"][1]["thinking_budget"] < budgets["reasoning"][1]["thinking_budget"]
    assert "AFC is enabled" not in caplog.text


async def test_schemas_carry_enums_bounds_required_fields_and_plain_descriptions(
    fake: FakeGemini, model: GeminiModel
) -> None:
    await _one_of_each(fake, model)

    plan, _, evaluation = fake.calls(GENERATE)
    plan_schema = plan.generation_config["responseSchema"]
    step = plan_schema["properties"]["steps"]["items"]
    assert set(step["properties"]["action"]["enum"]) == {
        "rag_search",
        "web_search",
        "reasoning",
        "ask_user",
    }
    assert set(step["properties"]["fallback"]["enum"]) >= {"rag_search", "web_search"}
    assert {"step_id", "action", "description"} <= set(step["required"])
    assert set(plan_schema["required"]) == {"complexity", "steps"}
    complexity = plan_schema["properties"]["complexity"]
    assert (complexity["minimum"], complexity["maximum"]) == (0.0, 1.0)
    eval_schema = evaluation.generation_config["responseSchema"]
    assert set(eval_schema["required"]) == {"self_eval", "coverage", "rationale"}
    assert eval_schema["properties"]["self_eval"]["maximum"] == 1.0
    descriptions = [
        n["description"] for n in _walk([plan_schema, eval_schema]) if "description" in n
    ]
    assert descriptions, "the model gets told what each field is for"
    assert not any("SPEC" in d or "§" in d for d in descriptions), descriptions


async def test_an_invalid_action_is_rejected_then_repaired(
    fake: FakeGemini, model: GeminiModel
) -> None:
    fake.reply_json(BAD_PLAN, prompt_tokens=100, output_tokens=10)
    fake.reply_json(GOOD_PLAN, prompt_tokens=120, output_tokens=12)

    reply = await model.plan(PLAN_REQUEST)

    assert [s.action for s in reply.value.steps] == ["rag_search", "reasoning"]
    first, second = fake.calls(GENERATE)
    assert "google_search" not in first.prompt
    assert "<previous_reply_problem>" in second.prompt and "action" in second.prompt
    assert (reply.usage.input_tokens, reply.usage.output_tokens, reply.usage.calls) == (220, 22, 2)


async def test_an_invalid_action_twice_is_reported(fake: FakeGemini, model: GeminiModel) -> None:
    fake.reply_json(BAD_PLAN, times=2, prompt_tokens=50)

    with pytest.raises(PlanningError, match="action") as info:
        await model.plan(PLAN_REQUEST)

    assert info.value.usage is not None and info.value.usage.input_tokens == 100


async def test_an_empty_evaluation_is_rejected_then_repaired(
    fake: FakeGemini, model: GeminiModel
) -> None:
    fake.reply_json({})
    fake.reply_json({"self_eval": 0.7, "coverage": 0.6, "rationale": "ok"})

    reply = await model.evaluate(EvaluationRequest(query="q", answer="a"))

    assert (reply.value.self_eval, reply.value.coverage) == (0.7, 0.6)
    assert "self_eval" in fake.calls(GENERATE)[1].prompt.split("<previous_reply_problem>")[-1]


async def test_an_empty_evaluation_twice_is_reported(fake: FakeGemini, model: GeminiModel) -> None:
    fake.reply_json({}, times=2)

    with pytest.raises(LLMError, match="no usable evaluation"):
        await model.evaluate(EvaluationRequest(query="q", answer="a"))


async def test_embeddings_carry_task_types_titles_and_batches_of_100(
    fake: FakeGemini, embedder: GeminiEmbedder
) -> None:
    texts = [f"chunk {i}" for i in range(230)]
    titles = ["handbook.md"] * 150 + ["faq.csv"] * 80

    vectors = await embedder.embed_documents(texts, titles)
    query = await embedder.embed_query("vacation days")

    assert len(vectors) == 230 and len(query) == 64
    calls = fake.calls(BATCH_EMBED)
    sizes = [len(c.body["requests"]) for c in calls[:-1]]
    assert sizes == [100, 50, 80]
    for call, title in zip(calls[:-1], ["handbook.md", "handbook.md", "faq.csv"], strict=True):
        assert {r["taskType"] for r in call.body["requests"]} == {"RETRIEVAL_DOCUMENT"}
        assert {r["title"] for r in call.body["requests"]} == {title}
    (question,) = calls[-1].body["requests"]
    assert question["taskType"] == "RETRIEVAL_QUERY" and "title" not in question
    assert embedder.requests == 4
