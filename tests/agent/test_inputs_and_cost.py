"""Acceptance 7: bad input is refused with a clear message before anything is stored,
and spending limits stop runs instead of calling the LLM."""

from __future__ import annotations

from datetime import timedelta

import pytest

from agent.config import AgentConfig, CostConfig
from agent.errors import CostLimitError, InvalidInputError
from agent.memory_store import InMemoryLedger
from agent.ports import RunEventType
from agent.schemas import RunStatus, TokenUsage, utcnow
from tests.agent.conftest import ASKER, OrchestratorFactory
from tests.agent.doubles import RecordingObserver, ScriptedModel

VACATION = "How many vacation days do new employees get?"


async def test_unknown_collection_is_invalid_input(make_orchestrator: OrchestratorFactory) -> None:
    observer = RecordingObserver()
    orchestrator = make_orchestrator(observers=[observer])

    with pytest.raises(InvalidInputError) as caught:
        await orchestrator.start(VACATION, asker=ASKER, collection="no_such_collection")

    message = str(caught.value)
    assert "Unknown collection 'no_such_collection'" in message
    assert "grace_docs" in message  # it names the collections that do exist
    assert observer.events == []  # nothing was stored or announced
    with pytest.raises(InvalidInputError):
        await orchestrator.validate_collection("no_such_collection")
    assert await orchestrator.validate_collection("grace_docs") == "grace_docs"


async def test_known_collection_is_used(make_orchestrator: OrchestratorFactory) -> None:
    state = await make_orchestrator().start(VACATION, asker=ASKER, collection="grace_docs")
    assert state.status is RunStatus.ANSWERED
    assert state.collection == "grace_docs"


@pytest.mark.parametrize("question", ["", "   \n\t "])
async def test_empty_question_is_invalid_input(
    make_orchestrator: OrchestratorFactory, question: str
) -> None:
    observer = RecordingObserver()
    with pytest.raises(InvalidInputError) as caught:
        await make_orchestrator(observers=[observer]).start(question, asker=ASKER)
    assert str(caught.value).startswith("The question is empty.")
    assert observer.events == []


async def test_a_40000_character_question_is_invalid_input(
    make_orchestrator: OrchestratorFactory,
) -> None:
    observer = RecordingObserver()
    with pytest.raises(InvalidInputError) as caught:
        await make_orchestrator(observers=[observer]).start("why " * 10_000, asker=ASKER)
    message = str(caught.value)
    assert "39,999 characters long; the limit is 4,000" in message  # stripped of the last space
    assert "shorten it or split it" in message
    assert observer.events == []


async def test_question_at_the_limit_is_accepted(make_orchestrator: OrchestratorFactory) -> None:
    config = AgentConfig()
    limit = config.execution.max_question_chars
    question = (VACATION + " ") * (limit // len(VACATION))
    question = question[:limit]
    state = await make_orchestrator(config=config).start(question, asker=ASKER)
    assert len(state.query) <= limit
    assert state.status is not RunStatus.FAILED, state.error


async def test_a_zero_per_query_budget_fails_the_run_with_a_clear_message(
    make_orchestrator: OrchestratorFactory,
) -> None:
    priced = ScriptedModel(
        name="priced-test-model",
        usage=TokenUsage(input_tokens=10_000, output_tokens=1_000, calls=1),
    )
    ledger = InMemoryLedger()
    observer = RecordingObserver()
    config = AgentConfig(cost=CostConfig(max_usd_per_query=0.0))
    orchestrator = make_orchestrator(llm=priced, config=config, ledger=ledger, observers=[observer])

    state = await orchestrator.start(VACATION, asker=ASKER)

    assert state.status is RunStatus.FAILED
    assert state.error is not None
    assert state.error.startswith("This question has used its LLM budget")
    assert "stopping instead of spending more" in state.error
    # planning was paid for and recorded; no step ran after the limit was hit
    expected = (10_000 * 0.30 + 1_000 * 2.50) / 1_000_000
    assert state.token_usage.cost_usd == pytest.approx(expected)
    assert [e[3] for e in ledger.entries] == ["priced-test-model"]
    assert state.step_results == {}
    assert priced.reason_requests == []
    assert observer.events[-1].type is RunEventType.RUN_FAILED


async def test_the_offline_model_is_free(make_orchestrator: OrchestratorFactory) -> None:
    ledger = InMemoryLedger()
    config = AgentConfig(cost=CostConfig(max_usd_per_query=0.0001))
    state = await make_orchestrator(config=config, ledger=ledger).start(VACATION, asker=ASKER)
    assert state.status is RunStatus.ANSWERED
    assert state.token_usage.calls >= 3 and state.token_usage.total_tokens > 0
    assert state.token_usage.cost_usd == 0.0
    assert all(u.cost_usd == 0.0 for _, _, u, _ in ledger.entries)


async def test_hourly_budget_refuses_new_runs(make_orchestrator: OrchestratorFactory) -> None:
    ledger = InMemoryLedger()
    await ledger.record("earlier-run", TokenUsage(calls=1, cost_usd=5.0), "priced-test-model")
    observer = RecordingObserver()
    orchestrator = make_orchestrator(ledger=ledger, observers=[observer])

    with pytest.raises(CostLimitError) as caught:
        await orchestrator.start(VACATION, asker=ASKER)

    assert "hourly LLM budget is used up ($5.00 of $5.00)" in str(caught.value)
    assert "GRACE_COST__MAX_USD_PER_HOUR" in str(caught.value)
    assert observer.events == []


async def test_spending_older_than_an_hour_counts_only_for_the_day(
    make_orchestrator: OrchestratorFactory,
) -> None:
    ledger = InMemoryLedger()
    two_hours_ago = utcnow() - timedelta(hours=2)
    ledger.entries.append((two_hours_ago, "old", TokenUsage(cost_usd=4.0), "priced"))
    config = AgentConfig(cost=CostConfig(max_usd_per_hour=5.0, max_usd_per_day=4.0))

    with pytest.raises(CostLimitError) as caught:
        await make_orchestrator(ledger=ledger, config=config).start(VACATION, asker=ASKER)
    assert "Today's LLM budget is used up ($4.00 of $4.00)" in str(caught.value)

    relaxed = AgentConfig(cost=CostConfig(max_usd_per_hour=5.0, max_usd_per_day=10.0))
    state = await make_orchestrator(ledger=ledger, config=relaxed).start(VACATION, asker=ASKER)
    assert state.status is RunStatus.ANSWERED
