"""Verified answers (storage/verified_answers.py, migration 0008): the record of truth
for answers approvers saved — one per run, listed newest first, removed by id."""

from __future__ import annotations

from datetime import timedelta

from agent.ports import VerifiedAnswer
from agent.schemas import utcnow
from storage.run_store import SqlRunStore
from tests.samples import verified_answer


def _answer(answer_id: str, *, run_id: str | None, minutes: int = 0) -> VerifiedAnswer:
    at = utcnow() + timedelta(minutes=minutes)
    return verified_answer(answer_id=answer_id, verified_at=at, run_id=run_id)


async def test_saved_once_per_run_listed_newest_first_and_removed(store: SqlRunStore) -> None:
    verified = store.verified
    first = await verified.add(_answer("a1", run_id="run1"))
    assert first.answer_id == "a1"
    again = await verified.add(_answer("a2", run_id="run1", minutes=1))
    assert again.answer_id == "a1", "a second save of the same run's answer keeps the first"
    assert await verified.get("a2") is None
    by_hand = await verified.add(_answer("b1", run_id=None, minutes=2))
    assert by_hand.answer_id == "b1"
    await verified.add(_answer("b2", run_id=None, minutes=3))

    stored = await verified.get("a1")
    assert stored is not None
    assert stored == _answer("a1", run_id="run1").model_copy(
        update={"verified_at": stored.verified_at, "review_by": stored.review_by}
    )
    assert stored.review_by - stored.verified_at == timedelta(days=180)
    assert (await verified.for_run("run1")) == stored
    assert [a.answer_id for a in await verified.recent()] == ["b2", "b1", "a1"]
    assert [a.answer_id for a in await verified.recent(limit=1)] == ["b2"]

    assert await verified.remove("b1") is True
    assert await verified.remove("b1") is False
    assert [a.answer_id for a in await verified.recent()] == ["b2", "a1"]
