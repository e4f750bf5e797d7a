"""The agent on Gemini when things go wrong: bounded requests, answers kept, every billed
token in the run JSON and the ledger, replans that change course.

Real parts throughout: the real `GeminiModel` (google-genai SDK over HTTP) against the
fake Gemini server, the real sample KB in Qdrant local mode, and the real SQL ledger on
a SQLite file. The fake answers by call kind (read from the system instruction), as a
model would, so the run takes whatever path the agent chooses.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections.abc import AsyncIterator, Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from google import genai

from agent.config import AgentConfig, ExecutionConfig
from agent.llm.gemini import CallPolicy, GeminiModel
from agent.schemas import (
    InterventionKind,
    InterventionLevel,
    RunState,
    RunStatus,
    StepStatus,
    utcnow,
)
from storage.db import make_engine, migrate
from storage.ledger import SqlUsageLedger
from tests.agent.conftest import ASKER, OrchestratorFactory
from tests.databases import sqlite_url
from tests.fakes.fake_gemini import (
    GENERATE,
    CannedResponse,
    FakeGemini,
    RecordedRequest,
    blocked_body,
    error_body,
    generate_body,
    json_body,
)
from tests.fakes.vacation_run import QUESTION

POLICY = CallPolicy(attempts=4, deadline_seconds=10, attempt_timeout_seconds=5, initial_delay=0.01)
ANSWER = "New employees get 15 days of paid vacation. [Source: vacation-policy.md]"
PLAN = {
    "complexity": 0.2,
    "steps": [
        {
            "step_id": 1,
            "action": "rag_search",
            "description": "Search the knowledge base",
            "query": "vacation days new employees",
            "depends_on": [],
            "expected_output": "passages",
        },
        {
            "step_id": 2,
            "action": "reasoning",
            "description": "Answer with citations",
            "query": QUESTION,
            "depends_on": [1],
            "expected_output": "a cited answer",
        },
    ],
    "success_criteria": "a cited answer",
}
GOOD_EVALUATION = {"self_eval": 0.95, "coverage": 0.95, "rationale": "grounded"}

Answer = Callable[[RecordedRequest], CannedResponse]


def kind(request: RecordedRequest) -> str:
    system = request.body.get("systemInstruction", {}).get("parts", [{}])[0].get("text", "")
    if "planning agent" in system:
        return "plan"
    if "strict reviewer" in system:
        return "evaluation"
    return "reasoning"


def ok(body: dict[str, Any]) -> CannedResponse:
    return CannedResponse(body)


def script(**by_kind: Answer) -> Callable[[RecordedRequest], CannedResponse]:
    """Answer each call kind with its own function; the defaults answer well."""
    defaults: dict[str, Answer] = {
        "plan": lambda _: ok(json_body(PLAN, prompt_tokens=400, output_tokens=90)),
        "reasoning": lambda _: ok(generate_body(ANSWER, prompt_tokens=900, output_tokens=40)),
        "evaluation": lambda _: ok(
            json_body(GOOD_EVALUATION, prompt_tokens=700, output_tokens=30, thoughts_tokens=5)
        ),
    }
    answers = {**defaults, **by_kind}
    return lambda request: answers[kind(request)](request)


def finds_nothing(plan: Answer) -> Callable[[RecordedRequest], CannedResponse]:
    """Plans by `plan`; every answer says the passages hold nothing, and is judged so."""
    return script(
        plan=plan,
        reasoning=lambda _: ok(generate_body("The passages do not say.")),
        evaluation=lambda _: ok(
            json_body({"self_eval": 0.1, "coverage": 0.0, "rationale": "not found"})
        ),
    )


def by_kind(fake: FakeGemini, name: str) -> list[RecordedRequest]:
    return [r for r in fake.calls(GENERATE) if kind(r) == name]


@pytest.fixture
async def ledger(tmp_path: Path) -> AsyncIterator[SqlUsageLedger]:
    url = sqlite_url(tmp_path)
    await migrate(url)
    engine = make_engine(url)
    yield SqlUsageLedger(engine)
    await engine.dispose()


async def run(
    fake: FakeGemini,
    client: genai.Client,
    make_orchestrator: OrchestratorFactory,
    ledger: SqlUsageLedger,
    question: str = QUESTION,
) -> RunState:
    orchestrator = make_orchestrator(llm=GeminiModel(client=client, policy=POLICY), ledger=ledger)
    return await orchestrator.start(question, asker=ASKER)


async def assert_all_usage_counted(
    fake: FakeGemini, state: RunState, ledger: SqlUsageLedger
) -> None:
    billed = fake.billed()
    assert billed[0] > 0
    totals = await ledger.totals(utcnow() - timedelta(hours=1))
    assert (totals.input_tokens, totals.output_tokens) == billed, "ledger"
    assert (state.token_usage.input_tokens, state.token_usage.output_tokens) == billed, "JSON"
    answered = sum(1 for r in fake.calls(GENERATE) if r.response_usage)
    assert totals.calls == state.token_usage.calls == answered
    assert totals.cost_usd == pytest.approx(state.token_usage.cost_usd)


async def test_a_persistent_429_on_the_answer_step_makes_four_requests_and_stops(
    fake: FakeGemini,
    client: genai.Client,
    make_orchestrator: OrchestratorFactory,
    ledger: SqlUsageLedger,
) -> None:
    quota = error_body(429, "Quota exceeded")
    quota["error"]["details"] = [
        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "0.2s"}
    ]
    fake.set_responder(GENERATE, script(reasoning=lambda _: CannedResponse(quota, 429)))

    state = await run(fake, client, make_orchestrator, ledger)

    answers = by_kind(fake, "reasoning")
    assert len(answers) == 4, "one call layer, no step retries or replans on top"
    gaps = [b.received_at - a.received_at for a, b in itertools.pairwise(answers)]
    assert min(gaps) >= 0.19, "retryDelay honoured"
    assert len(fake.calls(GENERATE)) == 1 + 4
    assert state.status is RunStatus.FAILED
    assert state.replan_history == []
    assert state.error is not None and "rate limit" in state.error
    await assert_all_usage_counted(fake, state, ledger)


async def test_a_failed_evaluation_keeps_the_answer_and_lowers_the_level(
    fake: FakeGemini,
    client: genai.Client,
    make_orchestrator: OrchestratorFactory,
    ledger: SqlUsageLedger,
) -> None:
    fake.set_responder(GENERATE, script(evaluation=lambda _: CannedResponse(error_body(503), 503)))

    state = await run(fake, client, make_orchestrator, ledger)

    assert state.status is RunStatus.ANSWERED, state.error
    assert state.final_answer == ANSWER
    assert len(by_kind(fake, "reasoning")) == 1, "the answer was not thrown away and redone"
    assert len(by_kind(fake, "evaluation")) == 3, "the step's 4 requests: 1 answer, 3 tries"
    answer_step = state.step_results[2]
    assert answer_step.status is StepStatus.PARTIAL
    assert answer_step.error is not None and "could not be checked" in answer_step.error
    assert state.overall_detail is not None
    assert any("not checked" in p for p in state.overall_detail.penalties)
    assert state.level not in (InterventionLevel.SILENT, InterventionLevel.NOTIFY)
    await assert_all_usage_counted(fake, state, ledger)


async def test_a_well_answered_run_counts_thinking_tokens(
    fake: FakeGemini,
    client: genai.Client,
    make_orchestrator: OrchestratorFactory,
    ledger: SqlUsageLedger,
) -> None:
    fake.set_responder(GENERATE, script())

    state = await run(fake, client, make_orchestrator, ledger)

    assert state.status is RunStatus.ANSWERED, state.error
    assert state.level in (InterventionLevel.SILENT, InterventionLevel.NOTIFY)
    assert fake.billed() == (400 + 900 + 700, 90 + 40 + 30 + 5)
    await assert_all_usage_counted(fake, state, ledger)


def _flaky(first: CannedResponse) -> Answer:
    """`first` once, then the default good answer for that kind."""
    used: list[bool] = []

    def answer(request: RecordedRequest) -> CannedResponse:
        if not used:
            used.append(True)
            return first
        return script()(request)

    return answer


FAILURE_MODES: dict[str, dict[str, Answer]] = {
    "reasoning blocked (SAFETY) every time": {
        "reasoning": lambda _: ok(blocked_body("SAFETY", prompt_tokens=333)),
    },
    "reasoning blocked once, then rephrased": {
        "reasoning": _flaky(ok(blocked_body("SAFETY", prompt_tokens=333))),
    },
    "plan invalid once (discarded), then repaired": {
        "plan": _flaky(ok(json_body({"complexity": 0.1, "steps": []}, prompt_tokens=77))),
    },
    "evaluation invalid every time": {
        "evaluation": lambda _: ok(json_body({}, prompt_tokens=55, output_tokens=2)),
    },
    "503 then success (retried)": {
        "reasoning": _flaky(CannedResponse(error_body(503), 503)),
    },
    "evaluation 429 every time after the answer": {
        "evaluation": lambda _: CannedResponse(error_body(429), 429),
    },
}


@pytest.mark.parametrize("mode", list(FAILURE_MODES))
async def test_the_ledger_equals_what_the_server_billed(
    mode: str,
    fake: FakeGemini,
    client: genai.Client,
    make_orchestrator: OrchestratorFactory,
    ledger: SqlUsageLedger,
) -> None:
    fake.set_responder(GENERATE, script(**FAILURE_MODES[mode]))

    state = await run(fake, client, make_orchestrator, ledger)

    assert state.status in (RunStatus.ANSWERED, RunStatus.FAILED, RunStatus.PAUSED)
    await assert_all_usage_counted(fake, state, ledger)


async def test_a_blocked_prompt_is_never_resent_as_is(
    fake: FakeGemini,
    client: genai.Client,
    make_orchestrator: OrchestratorFactory,
    ledger: SqlUsageLedger,
) -> None:
    fake.set_responder(
        GENERATE, script(reasoning=lambda _: ok(blocked_body("SAFETY", prompt_tokens=333)))
    )

    await run(fake, client, make_orchestrator, ledger)

    prompts = [r.raw for r in by_kind(fake, "reasoning")]
    assert len(prompts) >= 2
    assert len(set(prompts)) == len(prompts), "a blocked prompt was sent again unchanged"


async def test_replans_for_an_unanswerable_question_never_repeat_a_prompt(
    fake: FakeGemini,
    client: genai.Client,
    make_orchestrator: OrchestratorFactory,
    ledger: SqlUsageLedger,
) -> None:
    """The model keeps proposing plans that find nothing; the KB cannot answer. Each
    replan still tells the model something new: what every earlier step searched and
    found."""
    queries = iter(["capital of Mongolia", "Mongolia capital city", "Mongolian capital"])

    def next_plan(_: RecordedRequest) -> CannedResponse:
        query = next(queries, "capital Mongolia")
        steps = [
            {**PLAN["steps"][0], "query": query},
            {**PLAN["steps"][1], "query": "What is the capital of Mongolia?"},
        ]
        return ok(json_body({**PLAN, "steps": steps}))

    fake.set_responder(GENERATE, finds_nothing(next_plan))

    state = await run(fake, client, make_orchestrator, ledger, "What is the capital of Mongolia?")

    plans = [r.raw for r in by_kind(fake, "plan")]
    assert state.replan_count >= 2, "the scenario must replan at least twice"
    assert len(plans) == 1 + sum(1 for r in state.replan_history if r.strategy.value != "fallback")
    assert len(set(plans)) == len(plans), "two plan prompts were identical"
    last = by_kind(fake, "plan")[-1].prompt
    assert '"capital of Mongolia"' in last and "results" in last and "<tried>" in last
    assert "plan 1 step 1 rag_search" in last and "plan 2 step 1 rag_search" in last
    await assert_all_usage_counted(fake, state, ledger)


async def test_a_model_proposing_the_same_search_again_has_no_new_plan(
    fake: FakeGemini,
    client: genai.Client,
    make_orchestrator: OrchestratorFactory,
    ledger: SqlUsageLedger,
) -> None:
    """The same search in other case and punctuation is not run again: the run escalates
    with what it has instead of showing the person the same search twice."""
    same = iter(["capital of Mongolia", "Capital of  MONGOLIA?"])

    def plan(_: RecordedRequest) -> CannedResponse:
        steps = [{**PLAN["steps"][0], "query": next(same, "capital of mongolia")}, PLAN["steps"][1]]
        return ok(json_body({**PLAN, "steps": steps}))

    fake.set_responder(GENERATE, finds_nothing(plan))

    state = await run(fake, client, make_orchestrator, ledger, "What is the capital of Mongolia?")

    assert len(by_kind(fake, "plan")) == 2  # asked once more, and it offered nothing new
    assert state.replan_count == 0
    assert state.pending is not None and state.pending.kind is InterventionKind.ESCALATE
    assert "would only repeat searches already run" in state.pending.reason
    await assert_all_usage_counted(fake, state, ledger)


async def test_a_hanging_model_call_ends_the_run_at_its_deadline(
    fake: FakeGemini,
    client: genai.Client,
    make_orchestrator: OrchestratorFactory,
) -> None:
    never = asyncio.Event()
    fake.set_responder(GENERATE, script(reasoning=lambda _: CannedResponse(hold=never)))
    config = AgentConfig(execution=ExecutionConfig(run_deadline_seconds=1.5))
    orchestrator = make_orchestrator(llm=GeminiModel(client=client, policy=POLICY), config=config)
    started = time.monotonic()

    try:
        state = await orchestrator.start(QUESTION, asker=ASKER)
    finally:
        never.set()

    assert time.monotonic() - started < 5.0
    assert state.status is RunStatus.FAILED
    assert state.error is not None and "ran out of time (1.5 s)" in state.error
    assert len(by_kind(fake, "reasoning")) == 1


async def test_one_info_line_per_run_and_no_sdk_chatter(
    fake: FakeGemini,
    client: genai.Client,
    make_orchestrator: OrchestratorFactory,
    ledger: SqlUsageLedger,
    caplog: pytest.LogCaptureFixture,
) -> None:
    fake.set_responder(GENERATE, script())
    caplog.set_level(logging.DEBUG, logger="agent")
    caplog.set_level(logging.INFO)

    state = await run(fake, client, make_orchestrator, ledger)

    info = [r for r in caplog.records if r.levelno == logging.INFO]
    assert [r.name for r in info] == ["agent.run_machine"], [r.getMessage() for r in info]
    (line,) = info
    assert line.getMessage().startswith("run answered after ")
    assert "3 model calls" in line.getMessage()
    assert getattr(line, "run_id", None) == state.run_id
