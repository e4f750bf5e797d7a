"""The whole agent on the Gemini path: the real `GeminiModel` and `GeminiEmbedder`
(google-genai SDK, real HTTP) against the fake Gemini server, with the real sample KB."""

from __future__ import annotations

import pytest
from google import genai

from agent.llm.gemini import DEFAULT_MODEL, GeminiEmbedder, GeminiModel
from agent.schemas import InterventionLevel, RunStatus
from tests.agent.conftest import ASKER, OrchestratorFactory
from tests.fakes.fake_gemini import BATCH_EMBED, GENERATE, FakeGemini
from tests.fakes.gemini_fixtures import API_KEY
from tests.fakes.vacation_run import ANSWER, EVALUATION, QUESTION, SEARCH_QUERY, plan_for


async def test_a_question_runs_through_the_whole_agent_on_gemini(
    fake: FakeGemini, client: genai.Client, make_orchestrator: OrchestratorFactory
) -> None:
    fake.reply_json(plan_for(SEARCH_QUERY), prompt_tokens=400, output_tokens=120)
    fake.reply_text(ANSWER, prompt_tokens=900, output_tokens=40)
    fake.reply_json(EVALUATION, prompt_tokens=700, output_tokens=30)
    orchestrator = make_orchestrator(
        llm=GeminiModel(client=client),
        embedder=GeminiEmbedder(client=client, dimension=64),
    )

    state = await orchestrator.start(QUESTION, asker=ASKER)

    assert state.status is RunStatus.ANSWERED, state.error
    assert state.final_answer == ANSWER
    assert {s.source for s in state.sources} == {"vacation-policy.md"}
    assert state.llm_model == DEFAULT_MODEL
    assert state.plan is not None
    assert [s.query for s in state.plan.steps][:1] == ["vacation days new employees"]
    assert state.overall_detail is not None
    assert state.overall_detail.breakdown["llm_self_eval"] == 0.95
    assert state.overall_detail.breakdown["query_coverage"] == 0.9
    assert state.level in (InterventionLevel.SILENT, InterventionLevel.NOTIFY)

    # plan, answer, evaluation: three calls, every scripted reply used
    calls = fake.calls(GENERATE)
    assert len(calls) == 3
    assert fake.pending(GENERATE) == 0
    assert all(c.api_key == API_KEY and c.model == DEFAULT_MODEL for c in calls)
    plan_call, answer_call, eval_call = calls
    assert plan_call.generation_config.get("responseMimeType") == "application/json"
    assert QUESTION in plan_call.prompt
    assert "grace_docs" in plan_call.prompt
    # the passages the real KB found reached the answer prompt, named by source
    assert 'source="vacation-policy.md">' in answer_call.prompt
    assert "15 days of paid vacation" in answer_call.prompt
    assert ANSWER in eval_call.prompt
    assert eval_call.generation_config.get("responseMimeType") == "application/json"

    # token usage from the responses, priced as Gemini (not free like offline)
    assert state.token_usage.input_tokens == 400 + 900 + 700
    assert state.token_usage.output_tokens == 120 + 40 + 30
    assert state.token_usage.calls == 3
    expected = (2000 * 0.30 + 190 * 2.50) / 1_000_000
    assert state.token_usage.cost_usd == pytest.approx(expected)


async def test_source_agreement_uses_gemini_embeddings(
    fake: FakeGemini, client: genai.Client, make_orchestrator: OrchestratorFactory
) -> None:
    fake.reply_json(plan_for("remote work days per week"))
    fake.reply_text(
        "Employees may work remotely up to 3 days per week [Source: remote-work-policy.md], "
        "but the 2022 handbook says one day [Source: employee-handbook-2022.md]."
    )
    fake.reply_json({"self_eval": 0.6, "coverage": 0.8, "rationale": "sources disagree"})
    orchestrator = make_orchestrator(
        llm=GeminiModel(client=client),
        embedder=GeminiEmbedder(client=client, dimension=64),
    )

    state = await orchestrator.start("How many days per week can I work remotely?", asker=ASKER)

    assert state.status is RunStatus.ANSWERED, state.error
    assert fake.calls(BATCH_EMBED), "source agreement did not embed the passages"
    assert state.overall_detail is not None
    assert state.overall_detail.breakdown["source_agreement"] < 1.0
    assert state.level is not InterventionLevel.SILENT
    assert {s.source for s in state.sources} == {
        "remote-work-policy.md",
        "employee-handbook-2022.md",
    }


async def test_gemini_returning_no_usable_plan_fails_the_run_clearly(
    fake: FakeGemini, client: genai.Client, make_orchestrator: OrchestratorFactory
) -> None:
    fake.reply_text("Sure! Here is my plan: first search, then answer.", times=2)
    orchestrator = make_orchestrator(llm=GeminiModel(client=client))

    state = await orchestrator.start(QUESTION, asker=ASKER)

    assert state.status is RunStatus.FAILED
    assert state.error is not None
    assert state.error.startswith("Planning failed: Gemini (gemini-2.5-flash) did not return")
    assert "after 2 attempts" in state.error
    assert len(fake.calls(GENERATE)) == 2
