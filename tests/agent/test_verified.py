"""Verified answers on the agent side (issue 19, point 4): how one is cited, when it is a
strong source, which answers may be saved, and which new questions one answers."""

from __future__ import annotations

from datetime import timedelta

from agent.confidence import VERIFIED_CONFIDENCE, calibrated
from agent.evidence.features import answer_features
from agent.knowledge.verified import answer_words, rests_on_a_reply, verified_chunk
from agent.llm.offline import extract_answer
from agent.ports import VerifiedAnswer
from agent.schemas import (
    InterventionAction,
    InterventionAnswer,
    InterventionKind,
    InterventionLevel,
    InterventionRequest,
    InterventionStatus,
    RunState,
    RunStatus,
    Source,
    utcnow,
)
from tests.samples import VERIFIED_QUESTION, verified_answer


def _passage(answer: VerifiedAnswer) -> Source:
    chunk = verified_chunk(answer)
    return Source(source=chunk.source, text=chunk.text, similarity=0.9, verified=chunk.verified)


def test_a_fresh_verified_answer_is_cited_by_who_verified_it_and_is_strong() -> None:
    passage = _passage(verified_answer())
    today = utcnow()
    assert passage.citation == f"Verified by @alice on {today.day} {today:%b %Y}"
    answer = extract_answer(VERIFIED_QUESTION, [passage], japanese=False)
    assert answer == f"It is Ulaanbaatar. [Source: {passage.source}]"
    features = answer_features(VERIFIED_QUESTION, answer, [passage])
    assert features.verified and features.as_map() == {"verified": 1.0}
    assert calibrated(features, "offline") == VERIFIED_CONFIDENCE


def test_past_its_review_date_it_is_not_strong_and_the_answer_says_so() -> None:
    passage = _passage(verified_answer(verified_at=utcnow() - timedelta(days=200)))
    assert passage.citation.endswith("(past its review date)")
    answer = extract_answer(VERIFIED_QUESTION, [passage], japanese=False)
    assert answer.startswith(f"It is Ulaanbaatar. [Source: {passage.source}]")
    assert "past its review date" in answer
    assert not answer_features(VERIFIED_QUESTION, answer, [passage]).verified


def test_only_the_same_question_is_answered_from_it() -> None:
    passage = _passage(verified_answer())
    assert "Ulaanbaatar" in extract_answer(
        "What's the capital of Mongolia", [passage], japanese=False
    )
    neighbour = extract_answer("What is the currency of Mongolia?", [passage], japanese=False)
    assert "[Source: verified answer" not in neighbour


def _answered(**changes: object) -> RunState:
    state = RunState(
        query=VERIFIED_QUESTION,
        status=RunStatus.ANSWERED,
        final_answer="It is Ulaanbaatar. [Source: @U1 (reply in thread)]\n",
        level=InterventionLevel.NOTIFY,
    )
    return state.model_copy(update=changes)


def test_only_answers_resting_on_a_reply_may_be_saved() -> None:
    person = Source(source="@U1 (reply in thread)", text="It is Ulaanbaatar.", from_person=True)
    assert rests_on_a_reply(_answered(sources=[person]))
    assert answer_words(_answered(sources=[person])) == "It is Ulaanbaatar."
    assert not rests_on_a_reply(_answered(sources=[]))
    assert not rests_on_a_reply(_answered(sources=[person], status=RunStatus.PAUSED))
    clarified = InterventionRequest(
        run_id="r",
        kind=InterventionKind.ASK_USER,
        level=InterventionLevel.ESCALATE,
        question="Which one?",
        status=InterventionStatus.ANSWERED,
        answer=InterventionAnswer(action=InterventionAction.INPUT, text="Beacon Server"),
    )
    assert rests_on_a_reply(_answered(interventions=[clarified]))
