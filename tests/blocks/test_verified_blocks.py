"""The answer's blocks for verified answers: Save is offered only under an answer resting
on a person's reply; a verified source is cited by who verified it, with the thread's
link; one past its review date is flagged."""

from __future__ import annotations

from datetime import timedelta

from agent.schemas import RunStatus, Source, utcnow
from blocks import ids
from blocks.answer import answer_messages
from tests.blocks.payloads import actions_of, all_text, assert_valid
from tests.samples import VERIFIED_PERMALINK, state, verified_answer


def _verified_source(age_days: float) -> Source:
    saved = verified_answer(verified_at=utcnow() - timedelta(days=age_days))
    return Source(
        source=f"verified answer {saved.answer_id}",
        text=saved.answer,
        verified=saved.verification(),
    )


def test_save_is_offered_only_under_an_answer_resting_on_a_reply() -> None:
    plain = state(status=RunStatus.ANSWERED, answer="Twenty days. [Source: doc-0.md]")
    assert ids.SAVE_VERIFIED not in actions_of(assert_valid(answer_messages(plain)[-1]))
    person = Source(source="@U1 (reply in thread)", text="Twenty days.", from_person=True)
    replied = plain.model_copy(update={"sources": [person]})
    payload = assert_valid(answer_messages(replied)[-1])
    assert ids.SAVE_VERIFIED in actions_of(payload)
    assert "Save as verified answer" in all_text(payload)


def test_a_verified_source_is_cited_by_who_verified_it_and_flagged_when_overdue() -> None:
    fresh = state(status=RunStatus.ANSWERED, answer="Ulaanbaatar.").model_copy(
        update={"sources": [_verified_source(1)]}
    )
    text = all_text(assert_valid(answer_messages(fresh)[-1]))
    assert "Verified by @alice on" in text
    assert VERIFIED_PERMALINK in text
    assert "past its review date" not in text

    overdue = fresh.model_copy(update={"sources": [_verified_source(200)]})
    text = all_text(assert_valid(answer_messages(overdue)[-1]))
    assert "(past its review date)" in text
    assert "no longer counts as a strong source" in text
