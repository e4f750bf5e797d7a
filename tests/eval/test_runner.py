"""`run_eval` on the real orchestrator (offline model, Qdrant in memory, in-memory run
store): plan approvals are granted, pauses are recorded where they happen and then run
on with Proceed, and the first search step's top five sources are kept."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agent.evaluation import CaseKind, EvalCase, load_cases, run_eval
from agent.knowledge.ingest import ingest_paths
from agent.knowledge.lexical import HashingEmbedder
from agent.knowledge.qdrant_kb import QdrantKnowledgeBase, open_knowledge_base
from agent.memory_store import InMemoryRunStore
from agent.orchestrator import Orchestrator
from agent.ports import LanguageModel
from agent.schemas import PlanDraftStep
from tests.agent.doubles import ScriptedModel, draft, reasoning, search

DATA = Path(__file__).parent / "data"


@pytest.fixture
async def kb() -> AsyncIterator[QdrantKnowledgeBase]:
    base = open_knowledge_base(path=None, url=None, default_collection="fixture")
    await ingest_paths(base, [DATA / "kb"])
    try:
        yield base
    finally:
        await base.close()


def orchestrator(kb: QdrantKnowledgeBase, llm: LanguageModel | None = None) -> Orchestrator:
    return Orchestrator(
        llm=llm or ScriptedModel(),
        knowledge_base=kb,
        store=InMemoryRunStore(),
        embedder=HashingEmbedder(),
    )


async def test_the_fixture_runs_and_every_record_is_consistent(kb: QdrantKnowledgeBase) -> None:
    cases = load_cases(DATA / "cases.jsonl")
    seen: list[str] = []
    agent = orchestrator(kb)
    report = await run_eval(agent, cases, progress=lambda r: seen.append(r.id))
    assert seen == [c.id for c in cases]
    assert [r.id for r in report.records] == seen
    assert agent.observers == []  # the evaluation's own observer is gone again
    assert report.collection == "fixture" and report.model == "offline"
    for record in report.records:
        assert record.level in {"silent", "notify", "confirm", "escalate", "asked", "failed"}
        assert record.final_status == "answered", record  # Proceed runs every pause on
        assert record.plan_generated and record.seconds > 0
        assert record.total_seconds >= record.seconds
        if record.status == "answered":
            assert record.answer == record.final_answer and record.proceeded == 0
        else:
            assert record.pause is not None and record.proceeded >= 1
    hotel = report.records[0]
    assert hotel.top5 and hotel.top5[0] == "travel.md" and hotel.recall_hit is True
    m = report.metrics
    assert m.correct == sum(r.correct for r in report.records)
    assert m.per_kind["all"].n == 8 and m.per_kind["answerable"].n == 3
    assert m.answers == 8 and m.auroc is not None

    # several at once: the same outcomes, in the cases' order
    together = await run_eval(orchestrator(kb), cases, concurrency=4)
    assert [(r.id, r.level, r.final_answer, r.top5) for r in together.records] == [
        (r.id, r.level, r.final_answer, r.top5) for r in report.records
    ]


async def test_a_plan_approval_is_granted_and_is_not_the_first_stop(
    kb: QdrantKnowledgeBase,
) -> None:
    plan = draft(search(1, "maximum hotel rate per night"), reasoning(2, [1]), complexity=0.9)
    case = EvalCase(
        id="p", kind=CaseKind.ANSWERABLE, q="hotel rate per night?", expect_any=["$250"]
    )
    report = await run_eval(orchestrator(kb, ScriptedModel([plan])), [case])
    record = report.records[0]
    assert record.pauses[0] == "plan_approval"
    assert record.level != "approval"
    assert record.final_answer and "$250" in record.final_answer
    assert record.answer_correct


async def test_a_clarifying_question_is_asked_then_proceeded_without_an_option(
    kb: QdrantKnowledgeBase,
) -> None:
    ask = PlanDraftStep(
        step_id=1,
        action="ask_user",
        description="Which deadline?",
        query="Which deadline do you mean?",
        options=["expense reports", "benefits election"],
    )
    plan = draft(ask, search(2, "deadline", depends_on=[1]), reasoning(3, [2]))
    case = EvalCase(id="b", kind=CaseKind.AMBIGUOUS, q="When is the deadline?")

    report = await run_eval(orchestrator(kb, ScriptedModel([plan])), [case])
    record = report.records[0]
    assert (record.status, record.level, record.pause) == ("paused", "asked", "ask_user")
    assert record.correct and not record.confidently_wrong
    assert record.proceeded >= 1 and record.final_status == "answered"
    assert record.final_answer and not record.answer_correct  # no answer is right here
    assert record.top5 and "deadlines.md" in record.top5

    held = await run_eval(orchestrator(kb, ScriptedModel([plan])), [case], proceed=False)
    record = held.records[0]
    assert (record.level, record.final_status, record.final_answer) == ("asked", "paused", "")
    assert record.proceeded == 0 and record.top5 == []  # the search never ran
    assert held.metrics.answers == 0 and held.metrics.auroc is None
