"""The offline model's second and third ways of searching, and two-part questions: a
search per part beside the whole question, the evidence combined, both parts answered.
Real parts: the offline model, real Qdrant local mode, real documents."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agent.knowledge.ingest import ingest_paths
from agent.knowledge.qdrant_kb import QdrantKnowledgeBase, open_knowledge_base
from agent.llm.rephrase import question_parts, retry_searches, subject
from agent.replan import describe_attempts, normalised
from agent.schemas import (
    ActionType,
    InterventionKind,
    ReplanStrategy,
    RunStatus,
)
from tests.agent.conftest import ASKER, OrchestratorFactory
from tests.agent.doubles import ControlledKB

TRIP = "on a work trip, what's the max per night for a hotel and how much per day for meals?"

# Ten hotel notes that share most of the question's words, and the meal allowance buried
# in a long expenses page: the whole question's search fills its five places with hotel
# notes, the search for the second part finds the expenses page.
HOTELS = [
    f"# Hotel note {i}\n\n## A hotel night on a work trip\n\nOn a work trip, hotel rule {i}: "
    "the max for a hotel night is $300; a hotel night includes no meals."
    for i in range(10)
]
MEALS = (
    "# Expenses while away\n\n## What we pay back\n\n"
    + " ".join(f"Receipts of type {i} go to the finance inbox within a month." for i in range(12))
    + " Meals are reimbursed up to $80 per day. "
    + " ".join(f"Card rule {i} applies to taxis and trains." for i in range(12))
    + "\n"
)
DRESS_CODE = "What is the dress code for the quarterly all-hands meeting?"


@pytest.fixture
async def travel_kb(tmp_path: Path) -> AsyncIterator[QdrantKnowledgeBase]:
    docs = tmp_path / "docs"
    docs.mkdir()
    for i, text in enumerate(HOTELS):
        (docs / f"hotel-{i}.md").write_text(text + "\n", encoding="utf-8")
    (docs / "meals.md").write_text(MEALS, encoding="utf-8")
    kb = open_knowledge_base(path=None, url=None)
    try:
        await ingest_paths(kb, [docs])
        yield kb
    finally:
        await kb.close()


# ----------------------------------------------------------------- cutting a question


def test_a_two_part_question_is_cut_into_parts_that_keep_its_opening_words() -> None:
    assert question_parts(TRIP) == [
        "on a work trip, what's the max per night for a hotel",
        "on a work trip, how much per day for meals?",
    ]
    assert question_parts("how long is paid parental leave, and how early do I tell my boss?")


@pytest.mark.parametrize(
    "query",
    [
        "is there money for a local meetup? how much?",  # a follow-up, not a question
        "カンファレンスの懇親会の参加費って会社から出ますか？上限はいくら？",
        "入社したその日にもらえる有給は何日ですか？（フルタイムの正社員です）",  # a remark
        "How many vacation days do new employees get?",
        "what are the monthly internet and phone stipends?",  # one question about two things
    ],
)
def test_questions_with_one_part_are_not_cut(query: str) -> None:
    assert question_parts(query) == []


def test_the_subject_is_the_names_and_noun_phrases_without_the_asking_words() -> None:
    assert subject("Who looks after the zebra enclosure?") == "zebra enclosure"
    assert subject("under Apache 2.0, can I use the project logo?").split()[:2] == [
        "Apache",
        "2.0",
    ]
    assert subject("What is the capital of Mongolia?") == ""  # one word searches too wide
    assert subject("経費精算の締め切りはいつですか？") == ""


def test_each_retry_takes_the_next_strategy_not_yet_run() -> None:
    query = "Who looks after the zebra enclosure?"
    tried = ['plan 1 step 1 rag_search "Who looks after the zebra enclosure?" → success']
    assert retry_searches(query, tried) == ["zebra enclosure"]
    tried.append('plan 2 step 2 rag_search "Zebra  enclosure." in grace_kb → success')
    assert retry_searches(query, tried) == ["look zebra enclosure"]
    tried.append('plan 3 step 3 rag_search "look zebra enclosure" → success')
    # nothing new is left: the keywords again, which the replan manager drops as a repeat
    assert retry_searches(query, tried) == ["look zebra enclosure"]


def test_a_retry_with_the_words_of_an_earlier_retry_is_no_new_search() -> None:
    """Issue 23 (c): "key points of “Expense Policy”" was searched three times over:
    the question, "key points Expense Policy", then "key point expense policy"."""
    query = "What are the key points of “Expense Policy”?"
    tried = [f'plan 1 step 1 rag_search "{query}" → success']
    assert retry_searches(query, tried) == ["key points Expense Policy"]
    tried.append('plan 2 step 2 rag_search "key points Expense Policy" → success')
    # the keywords are the same words: a search already run, which the manager drops
    (again,) = retry_searches(query, tried)
    assert normalised(again) == normalised("key points Expense Policy")


def test_a_two_part_question_is_retried_part_by_part_first() -> None:
    assert retry_searches(TRIP, [f'plan 1 step 1 rag_search "{TRIP}" → success']) == [
        "on a work trip, what's the max per night for a hotel",
        "on a work trip, how much per day for meals?",
    ]


# ----------------------------------------------------------------- in a run


async def test_a_search_per_part_finds_the_half_the_whole_question_misses(
    travel_kb: QdrantKnowledgeBase, make_orchestrator: OrchestratorFactory
) -> None:
    whole = await travel_kb.search(TRIP, limit=5)
    assert "meals.md" not in {s.source for s in whole}  # the whole question alone misses it

    counting = ControlledKB(travel_kb)
    orchestrator = make_orchestrator(knowledge_base=counting)
    state = await orchestrator.start(TRIP, asker=ASKER)

    assert [c.query for c in counting.calls][:2] == [
        TRIP,
        "on a work trip, how much per day for meals?",
    ]
    assert state.status is RunStatus.ANSWERED, (state.pending, state.error)
    assert "$300" in state.final_answer and "$80" in state.final_answer
    assert "[Source: meals.md]" in state.final_answer
    assert "[Source: hotel-" in state.final_answer  # both halves, each cited
    assert state.plan is not None
    reasoning = state.plan.steps[-1]
    assert reasoning.action is ActionType.REASONING
    assert reasoning.depends_on == [s.step_id for s in state.plan.steps[:-1]]


async def test_a_weak_answer_is_retried_with_new_searches_that_add_to_the_passages_found(
    kb: QdrantKnowledgeBase, make_orchestrator: OrchestratorFactory
) -> None:
    counting = ControlledKB(kb)
    orchestrator = make_orchestrator(knowledge_base=counting)

    state = await orchestrator.start(DRESS_CODE, asker=ASKER)  # not in the sample KB

    assert state.pending is not None and state.pending.kind is InterventionKind.ESCALATE
    assert [r.strategy for r in state.replan_history] == [ReplanStrategy.PARTIAL]
    assert all("the passages found are kept" in r.reason for r in state.replan_history)
    # Its keywords ("dress code quarterly hand meeting") are the words of what it is about
    # once more: no third, near-identical search (issue 23 c).
    assert [c.query for c in counting.calls] == [
        DRESS_CODE,
        "dress code quarterly all-hands meeting",  # what it is about
    ]
    assert state.plan is not None
    searches = [s.query for s in state.plan.steps if s.action is ActionType.RAG_SEARCH]
    # every search of the run is still in the plan the answer was drawn from
    assert searches == [c.query for c in counting.calls]
    attempts = describe_attempts(state)
    assert len(attempts) == len(state.plan.steps)
