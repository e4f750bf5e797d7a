"""GeminiModel through the real google-genai client against the fake server."""

from __future__ import annotations

import json

import pytest
from google import genai

from agent.errors import LLMError, PlanningError
from agent.llm.gemini import GeminiEmbedder, GeminiModel
from agent.ports import (
    Embedder,
    EvaluationRequest,
    LanguageModel,
    PlanRequest,
    ReasoningRequest,
)
from agent.schemas import PlanDraft, Source
from tests.fakes.fake_gemini import (
    GENERATE,
    FakeGemini,
    blocked_body,
    empty_candidate_body,
)
from tests.fakes.gemini_fixtures import API_KEY

PLAN = {
    "complexity": 0.35,
    "steps": [
        {
            "step_id": 1,
            "action": "rag_search",
            "description": "Search the handbook for the VPN policy",
            "query": "VPN policy",
            "collection": "handbook",
            "depends_on": [],
            "expected_output": "passages about VPN",
            "fallback": "web_search",
        },
        {
            "step_id": 2,
            "action": "reasoning",
            "description": "Answer from the passages",
            "query": "What is the VPN policy?",
            "collection": None,
            "depends_on": [1],
            "expected_output": "an answer",
            "fallback": None,
        },
    ],
    "success_criteria": "States the VPN policy with a citation.",
}

PLAN_REQUEST = PlanRequest(
    query="What is our VPN policy?", collections=["handbook", "faq"], default_collection="handbook"
)

PASSAGES = [
    Source(source="handbook.md", text="Employees must use the corporate VPN on public Wi-Fi."),
    Source(source="faq.csv", text="The VPN client is GlobalProtect."),
]


async def test_plan_returns_draft_and_sends_structured_output_request(
    fake: FakeGemini, model: GeminiModel
) -> None:
    fake.reply_json(PLAN, prompt_tokens=321, output_tokens=45)

    reply = await model.plan(PLAN_REQUEST)

    assert isinstance(reply.value, PlanDraft)
    assert [s.action for s in reply.value.steps] == ["rag_search", "reasoning"]
    assert reply.value.steps[1].depends_on == [1]
    assert reply.value.complexity == pytest.approx(0.35)
    assert (reply.usage.input_tokens, reply.usage.output_tokens, reply.usage.calls) == (321, 45, 1)
    assert reply.usage.cost_usd == 0.0
    assert reply.model == "gemini-fake-001"

    (request,) = fake.calls(GENERATE)
    assert request.path == "/v1beta/models/gemini-2.5-flash:generateContent"
    assert request.api_key == API_KEY
    config = request.generation_config
    assert config["responseMimeType"] == "application/json"
    schema = config["responseSchema"]
    assert schema["type"] == "OBJECT"
    assert "steps" in schema["properties"]
    assert "What is our VPN policy?" in request.prompt
    assert "`handbook` (default)" in request.prompt
    assert "`faq`" in request.prompt


async def test_token_usage_is_none_safe(fake: FakeGemini, model: GeminiModel) -> None:
    fake.reply_text("An answer.", prompt_tokens=None, output_tokens=None)

    reply = await model.reason(ReasoningRequest(query="q"))

    assert (reply.usage.input_tokens, reply.usage.output_tokens, reply.usage.calls) == (0, 0, 1)


async def test_thinking_tokens_count_as_output(fake: FakeGemini, model: GeminiModel) -> None:
    fake.reply_text("An answer.", prompt_tokens=7, output_tokens=5, thoughts_tokens=100)

    reply = await model.reason(ReasoningRequest(query="q"))

    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (7, 105)


async def test_plan_json_in_markdown_fences_is_repaired(
    fake: FakeGemini, model: GeminiModel
) -> None:
    fake.reply_json("Here is the plan:\n```json\n" + json.dumps(PLAN, indent=2) + "\n```\nDone.")

    reply = await model.plan(PLAN_REQUEST)

    assert len(reply.value.steps) == 2
    assert len(fake.calls(GENERATE)) == 1, "a repairable reply must not cost a second call"


async def test_plan_bare_step_list_is_accepted(fake: FakeGemini, model: GeminiModel) -> None:
    fake.reply_json(PLAN["steps"])

    reply = await model.plan(PLAN_REQUEST)

    assert [s.step_id for s in reply.value.steps] == [1, 2]


async def test_plan_unrepairable_once_is_retried(fake: FakeGemini, model: GeminiModel) -> None:
    fake.reply_json('{"complexity": 0.3, "steps": [{"step_id": 1, "acti', output_tokens=9)
    fake.reply_json(PLAN, output_tokens=40)

    reply = await model.plan(PLAN_REQUEST)

    assert len(reply.value.steps) == 2
    assert len(fake.calls(GENERATE)) == 2
    assert reply.usage.calls == 2
    assert reply.usage.output_tokens == 49


async def test_plan_hopeless_json_raises_planning_error_after_one_retry(
    fake: FakeGemini, model: GeminiModel
) -> None:
    fake.reply_json("I cannot make a plan for that, sorry.")
    fake.reply_json('{"complexity": "high", "steps": "none"}')

    with pytest.raises(PlanningError) as info:
        await model.plan(PLAN_REQUEST)

    assert len(fake.calls(GENERATE)) == 2
    message = str(info.value)
    assert "did not return a usable plan" in message
    assert "no JSON object" in message
    assert "did not match the schema" in message
    assert "steps" in message


async def test_plan_without_steps_is_a_planning_error(fake: FakeGemini, model: GeminiModel) -> None:
    fake.reply_json({"complexity": 0.1, "steps": []}, times=2)

    with pytest.raises(PlanningError, match="at least 1 item"):
        await model.plan(PLAN_REQUEST)


async def test_plan_blocked_prompt_is_a_planning_error(
    fake: FakeGemini, model: GeminiModel
) -> None:
    fake.enqueue(GENERATE, blocked_body("PROHIBITED_CONTENT"), blocked_body("PROHIBITED_CONTENT"))

    with pytest.raises(PlanningError, match="PROHIBITED_CONTENT") as info:
        await model.plan(PLAN_REQUEST)

    first, second = fake.calls(GENERATE)
    assert first.prompt != second.prompt, "a blocked prompt is rephrased, never resent as is"
    assert "blocked by the safety filter" in second.prompt
    assert info.value.usage is not None and info.value.usage.calls == 2


async def test_replan_prompt_carries_feedback_and_completed_steps(
    fake: FakeGemini, model: GeminiModel
) -> None:
    fake.reply_json(PLAN)
    request = PLAN_REQUEST.model_copy(
        update={
            "feedback": "Please also check the security FAQ",
            "completed_steps": ["1. rag_search: VPN policy → 3 passages"],
        }
    )

    await model.plan(request)

    prompt = fake.calls(GENERATE)[0].prompt
    assert "Please also check the security FAQ" in prompt
    assert "1. rag_search: VPN policy" in prompt


async def test_reason_returns_text_and_sends_passages(fake: FakeGemini, model: GeminiModel) -> None:
    fake.reply_text("  Use the VPN on public Wi-Fi [Source: handbook.md].\n")

    reply = await model.reason(
        ReasoningRequest(
            query="What is our VPN policy?",
            instruction="Answer from the passages",
            passages=PASSAGES,
            user_inputs=["I mean the laptop VPN"],
        )
    )

    assert reply.value == "Use the VPN on public Wi-Fi [Source: handbook.md]."
    (request,) = fake.calls(GENERATE)
    assert "responseMimeType" not in request.generation_config
    clarification = '<passage id="1" source="user reply">\nI mean the laptop VPN\n</passage>'
    assert clarification in request.prompt
    assert '<passage id="2" source="handbook.md">' in request.prompt
    assert '<passage id="3" source="faq.csv">' in request.prompt
    assert request.body["systemInstruction"]["parts"][0]["text"].startswith("You are GRACE")
    assert "I mean the laptop VPN" in request.prompt
    assert "[Source: name]" in request.prompt


async def test_reason_empty_candidate_is_llm_error_with_finish_reason(
    fake: FakeGemini, model: GeminiModel
) -> None:
    fake.enqueue(GENERATE, empty_candidate_body("SAFETY"), empty_candidate_body("SAFETY"))

    with pytest.raises(LLMError, match="finish reason SAFETY") as info:
        await model.reason(ReasoningRequest(query="q"))

    first, second = fake.calls(GENERATE)
    assert first.prompt != second.prompt
    assert info.value.usage is not None and info.value.usage.input_tokens == 20


async def test_reason_blocked_prompt_is_llm_error(fake: FakeGemini, model: GeminiModel) -> None:
    fake.enqueue(GENERATE, blocked_body("SAFETY"), blocked_body("SAFETY"))

    with pytest.raises(LLMError, match="prompt was blocked"):
        await model.reason(ReasoningRequest(query="q"))
    assert len(fake.calls(GENERATE)) == 2


async def test_reason_blocked_once_is_rephrased_and_answers(
    fake: FakeGemini, model: GeminiModel
) -> None:
    fake.enqueue(GENERATE, blocked_body("SAFETY", prompt_tokens=30))
    fake.reply_text("A careful answer [Source: handbook.md].", prompt_tokens=12, output_tokens=8)
    passages = [Source(source=f"doc{i}.md", text=f"passage {i}") for i in range(6)]

    reply = await model.reason(
        ReasoningRequest(query="q", passages=passages, context="earlier talk")
    )

    assert reply.value.startswith("A careful answer")
    assert (reply.usage.calls, reply.usage.input_tokens) == (2, 42), "the blocked call counts"
    first, second = fake.calls(GENERATE)
    assert "earlier talk" in first.prompt and "earlier talk" not in second.prompt
    assert second.prompt.count("<passage ") == 3 < first.prompt.count("<passage ")


async def test_evaluate_parses_scores(fake: FakeGemini, model: GeminiModel) -> None:
    fake.reply_json({"self_eval": 0.8, "coverage": 0.6, "rationale": "grounded"})

    reply = await model.evaluate(
        EvaluationRequest(query="q", answer="a [Source: handbook.md]", passages=PASSAGES)
    )

    assert (reply.value.self_eval, reply.value.coverage) == (0.8, 0.6)
    assert reply.value.rationale == "grounded"
    config = fake.calls(GENERATE)[0].generation_config
    assert config["responseMimeType"] == "application/json"
    assert set(config["responseSchema"]["properties"]) == {"self_eval", "coverage", "rationale"}


async def test_evaluate_clamps_out_of_range_scores(fake: FakeGemini, model: GeminiModel) -> None:
    fake.reply_json('```json\n{"self_eval": 1.7, "coverage": -0.2, "rationale": null}\n```')

    reply = await model.evaluate(EvaluationRequest(query="q", answer="a"))

    assert (reply.value.self_eval, reply.value.coverage) == (1.0, 0.0)
    assert len(fake.calls(GENERATE)) == 1


async def test_evaluate_garbage_twice_is_an_error_that_carries_its_cost(
    fake: FakeGemini, model: GeminiModel
) -> None:
    fake.reply_json("the answer looks fine to me", times=2, prompt_tokens=11, output_tokens=3)

    with pytest.raises(LLMError, match="no usable evaluation") as info:
        await model.evaluate(EvaluationRequest(query="q", answer="a"))

    first, second = fake.calls(GENERATE)
    assert "previous_reply_problem" in second.prompt and first.prompt != second.prompt
    assert info.value.usage is not None
    assert (info.value.usage.calls, info.value.usage.input_tokens) == (2, 22)


async def test_custom_model_name_is_used_in_path(fake: FakeGemini, client: genai.Client) -> None:
    other = GeminiModel(client=client, model="gemini-2.5-pro")
    fake.reply_text("ok")

    await other.reason(ReasoningRequest(query="q"))

    assert other.name == "gemini-2.5-pro"
    assert fake.calls(GENERATE)[0].model == "gemini-2.5-pro"


async def test_plan_complexity_out_of_range_is_clamped(
    fake: FakeGemini, model: GeminiModel
) -> None:
    fake.reply_json({**PLAN, "complexity": 7})

    reply = await model.plan(PLAN_REQUEST)

    assert reply.value.complexity == 1.0


def test_classes_satisfy_the_ports(model: GeminiModel, embedder: GeminiEmbedder) -> None:
    """Static conformance (a type checker checks these assignments) plus the basics."""
    language_model: LanguageModel = model
    embeddings: Embedder = embedder
    assert language_model.name == "gemini-2.5-flash"
    assert embeddings.dimension == 64
