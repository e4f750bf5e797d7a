"""Acceptance 2: the seed's four evaluation scenarios, on the real agent.

Real `OfflineModel`, real Qdrant local mode with the shipped sample KB, in-memory store.
"""

from __future__ import annotations

import pytest

from agent.evidence import focus_question
from agent.orchestrator import Orchestrator
from agent.schemas import (
    ActionType,
    InterventionAction,
    InterventionKind,
    InterventionLevel,
    RunState,
    RunStatus,
)
from tests.agent.conftest import ASKER
from tests.agent.doubles import ScriptedModel
from tests.agent.helpers import reply

from .conftest import OrchestratorFactory

SURE = {InterventionLevel.SILENT, InterventionLevel.NOTIFY}


def cited_sources(state: RunState) -> set[str]:
    return {s.source for s in state.sources}


# ----------------------------------------------------------------- (a) simple facts


@pytest.mark.parametrize(
    ("question", "fact", "source"),
    [
        ("How many vacation days do new employees get?", "15", "vacation-policy.md"),
        ("経費精算の締め切りはいつですか？", "翌月5日", "経費精算ガイド.md"),
    ],
    ids=["english-vacation-policy", "japanese-expense-guide"],
)
async def test_a_simple_fact_is_answered_confidently_from_its_document(
    orchestrator: Orchestrator, question: str, fact: str, source: str
) -> None:
    state = await orchestrator.start(question, asker=ASKER)

    assert state.status is RunStatus.ANSWERED, state.error
    assert state.level in SURE
    assert fact in state.final_answer
    assert cited_sources(state) == {source}
    assert f"[Source: {source}]" in state.final_answer
    assert state.pending is None
    assert state.replan_history == []
    assert state.overall_confidence is not None and state.overall_confidence >= 0.7


# ----------------------------------------------------------------- (b) ambiguity


async def test_ambiguous_question_asks_the_user_instead_of_guessing(
    orchestrator: Orchestrator,
) -> None:
    state = await orchestrator.start("What is the latest version?", asker=ASKER)

    assert state.status is RunStatus.PAUSED
    assert state.pending is not None
    assert state.pending.kind in (InterventionKind.ASK_USER, InterventionKind.ESCALATE)
    assert state.pending.level is InterventionLevel.ESCALATE
    assert state.pending.allowed_responders == [ASKER]
    # nothing was guessed: no answer, and no search ran before the question was asked
    assert state.final_answer == ""
    assert not any(r.action is ActionType.RAG_SEARCH for r in state.step_results.values())


async def test_answering_the_clarification_continues_from_the_product_faq(
    spied: Orchestrator, spy: ScriptedModel
) -> None:
    state = await spied.start("What is the latest version?", asker=ASKER)

    state = await reply(spied, state, InterventionAction.INPUT, text="Beacon Server")

    assert state.status is RunStatus.ANSWERED, state.error
    assert state.user_inputs == ["Beacon Server"]
    assert cited_sources(state) == {"product-faq.csv"}
    assert "4.2" in state.final_answer
    assert "Beacon Server" in state.final_answer
    assert spy.reason_requests[-1].user_inputs == ["Beacon Server"]


async def test_the_clarification_offers_the_closest_entries_as_choices(
    orchestrator: Orchestrator,
) -> None:
    state = await orchestrator.start("What is the latest version?", asker=ASKER)
    assert state.pending is not None
    choices = state.pending.options
    assert sorted(choices) == [
        "What is the latest version of Beacon CLI?",
        "What is the latest version of Beacon Mobile?",
        "What is the latest version of Beacon Server?",
    ]

    state = await reply(
        orchestrator,
        state,
        InterventionAction.INPUT,
        option=choices.index("What is the latest version of Beacon CLI?"),
    )

    assert state.status is RunStatus.ANSWERED, state.error
    assert state.user_inputs == ["What is the latest version of Beacon CLI?"]
    assert "1.9" in state.final_answer and "Beacon CLI" in state.final_answer


async def test_a_picked_choice_is_answered_alone_not_with_the_other_choices(
    make_orchestrator: OrchestratorFactory,
) -> None:
    """Issue 23 (a): the picked option restates the vague question; joined to it, the
    pair read as a two-part question and the answer also gave another product's version."""
    for picked in range(3):
        orchestrator = make_orchestrator()
        state = await orchestrator.start("What is the latest version?", asker=ASKER)
        assert state.pending is not None
        choices = state.pending.options
        assert len(choices) == 3
        state = await reply(orchestrator, state, InterventionAction.INPUT, option=picked)

        assert state.status is RunStatus.ANSWERED, state.error
        product = choices[picked].removeprefix("What is the latest version of ").rstrip("?")
        assert product in state.final_answer
        for other, choice in enumerate(choices):
            if other != picked:
                name = choice.removeprefix("What is the latest version of ").rstrip("?")
                assert name not in state.final_answer, (product, state.final_answer)


def test_a_reply_restating_the_question_replaces_it() -> None:
    assert (
        focus_question("what is the due date?", ["What is the due date of the Q3 report?"])
        == "What is the due date of the Q3 report?"
    )
    assert focus_question("what is the due date?", ["the Q3 report"]) == (
        "what is the due date? the Q3 report"
    )
    assert focus_question("what is the due date?", []) == "what is the due date?"


async def test_no_choices_when_the_knowledge_base_has_nothing_close(
    orchestrator: Orchestrator,
) -> None:
    state = await orchestrator.start("最新バージョンは？", asker=ASKER)  # no Japanese FAQ on it
    assert state.pending is not None and state.pending.kind is InterventionKind.ASK_USER
    assert state.pending.options == []


# ----------------------------------------------------------------- (c) unanswerable


async def test_unanswerable_question_replans_then_escalates_never_silent(
    orchestrator: Orchestrator,
) -> None:
    state = await orchestrator.start("What is the capital of Mongolia?", asker=ASKER)

    assert state.replan_history, "low confidence must trigger replanning"
    assert state.level is not InterventionLevel.SILENT
    if state.status is RunStatus.PAUSED:
        assert state.pending is not None
        assert state.pending.kind is InterventionKind.ESCALATE
        assert state.pending.level is InterventionLevel.ESCALATE
        assert state.pending.confidence is not None
        assert state.pending.confidence.score < 0.4
    else:
        assert state.status is RunStatus.ANSWERED
        assert state.level in (InterventionLevel.CONFIRM, InterventionLevel.ESCALATE)
    searches = [r for r in state.step_results.values() if r.action is ActionType.RAG_SEARCH]
    assert searches and all(r.confidence < 0.4 for r in searches)


async def test_unanswerable_question_proceeded_anyway_is_an_explicitly_weak_answer(
    orchestrator: Orchestrator,
) -> None:
    state = await orchestrator.start("What is the capital of Mongolia?", asker=ASKER)
    assert state.status is RunStatus.PAUSED

    state = await reply(orchestrator, state, InterventionAction.PROCEED)

    assert state.status is RunStatus.ANSWERED
    assert state.level is InterventionLevel.ESCALATE
    assert state.overall_confidence is not None and state.overall_confidence < 0.4
    assert "could not find" in state.final_answer
    assert "Ulaanbaatar" not in state.final_answer


# ----------------------------------------------------------------- (d) contradictions


async def test_contradicting_sources_lower_agreement_and_stay_out_of_silent(
    orchestrator: Orchestrator,
) -> None:
    single = await orchestrator.start("How many vacation days do new employees get?")
    state = await orchestrator.start("How many days per week can I work remotely?", asker=ASKER)

    assert state.status is RunStatus.ANSWERED, state.error
    assert state.level is not InterventionLevel.SILENT
    assert "remote-work-policy.md" in cited_sources(state)
    answer_step = state.step_results[max(state.step_results)]
    assert answer_step.action is ActionType.REASONING
    # both sides of the contradiction reached the answer step
    assert {"remote-work-policy.md", "employee-handbook-2022.md"} <= {
        s.source for s in answer_step.sources
    }
    assert state.overall_detail is not None
    agreement = state.overall_detail.breakdown["source_agreement"]
    assert agreement < 1.0
    assert single.overall_detail is not None
    # one source agrees with itself: 1.0 by definition (SPEC §2.5), absent or explicit
    single_agreement = single.overall_detail.breakdown.get("source_agreement", 1.0)
    assert agreement < single_agreement
    assert state.overall_detail.score < single.overall_detail.score


# ----------------------------------------------------------------- (d) comparison


COMPARISON = "Compare the remote work policy and the employee handbook: why do they differ?"


async def test_a_comparison_searches_the_question_and_each_side_and_states_both_rules(
    orchestrator: Orchestrator,
) -> None:
    """Issue 23 (d): the question was cut at "and" into two odd searches ("Compare the
    remote work policy", "the employee handbook: why do they differ?"), a weak one asked
    for a second approval, and the answer never stated the handbook's rule."""
    state = await orchestrator.start(COMPARISON, asker=ASKER)
    assert state.pending is not None
    assert state.pending.kind is InterventionKind.PLAN_APPROVAL
    assert state.plan is not None
    searches = [s.query for s in state.plan.steps if s.action is ActionType.RAG_SEARCH]
    assert searches == [COMPARISON, "remote work policy", "employee handbook"]

    state = await reply(orchestrator, state, InterventionAction.PROCEED)
    kinds = [i.kind for i in state.interventions]
    assert InterventionKind.CONFIRM not in kinds  # no search step asks for approval again
    if state.status is RunStatus.PAUSED:  # the answer is judged unsure: proceed anyway
        assert state.pending is not None and state.pending.kind is InterventionKind.ESCALATE
        state = await reply(orchestrator, state, InterventionAction.PROCEED)
    assert state.status is RunStatus.ANSWERED, state.error
    answer = state.final_answer
    assert answer.split("\n") == [
        "Employees may work remotely up to 3 days per week. [Source: remote-work-policy.md]",
        "Remote work is limited to one day per week, and only with your manager's approval. "
        "[Source: employee-handbook-2022.md]",
        "⚠️ These sources disagree; check which one is current.",
    ]
