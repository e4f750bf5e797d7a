"""Issue 22 point 1: one member cannot move everyone's thresholds. The feedback window
needs a quorum of distinct voters (none filling it alone), votes are rate-limited per
person, and every change is recorded and shown by `/grace thresholds`."""

from __future__ import annotations

import json

from agent.config import Thresholds
from agent.schemas import RunState, RunStatus
from blocks import ids
from tests.bot.conftest import (
    APPROVER,
    ASKER,
    OTHER,
    VACATION_Q,
    BotHarness,
    has_feedback_buttons,
    proceed_through_confirms,
    stored_answers,
)

from .conftest import SecureFactory

THIRD = "U0THIRD0004"
START = Thresholds()


async def ask_and_vote_down(h: BotHarness, n: int, user: str) -> None:
    ts = f"1700260{n:03d}.000100"
    await h.mention(VACATION_Q, ts=ts, user=user)
    state = await proceed_through_confirms(h, ts)
    assert state.status is RunStatus.ANSWERED, state.status
    answer = await h.answer_message(state)
    assert has_feedback_buttons(answer)
    assert (await h.vote(answer, up=False, user=user)).status == 200


async def thresholds_text(h: BotHarness, user: str = OTHER) -> str:
    reply = await h.command("thresholds", user=user)
    return json.dumps(reply.json(), ensure_ascii=False)


async def test_one_member_voting_on_their_own_answers_moves_nothing(
    secure: SecureFactory,
) -> None:
    h = await secure(slack={"runs_per_user_per_minute": 100, "runs_per_thread_per_minute": 100})
    for n in range(14):
        await ask_and_vote_down(h, n, ASKER)
    assert len(await h.store.recent_feedback(limit=100)) == 14, "every vote is kept"
    assert await h.store.load_thresholds() is None
    assert h.bot.deps.orchestrator.thresholds == START
    assert not any("Thresholds" in t for t in h.ephemerals(ASKER))
    assert "No change recorded yet." in await thresholds_text(h)


async def ask_answers(h: BotHarness, count: int, asker: str, prefix: str) -> list[RunState]:
    return await stored_answers(
        h, count, prefix=prefix, asker=asker, confidence=0.95, ts_prefix="1700270"
    )


async def vote_down(h: BotHarness, runs: list[RunState], user: str) -> None:
    for run in runs:
        value = ids.ButtonValue(run_id=run.run_id).encode()
        reply = await h.click(ids.FEEDBACK_DOWN, value, user=user, thread_ts=run.thread.thread_ts)
        assert reply.status == 200


async def test_a_quorum_of_people_moves_them_and_the_change_is_recorded(
    secure: SecureFactory,
) -> None:
    h = await secure(approvers=[APPROVER])
    await vote_down(h, await ask_answers(h, 6, ASKER, "aaaa"), ASKER)
    await vote_down(h, await ask_answers(h, 6, OTHER, "bbbb"), OTHER)
    assert await h.store.load_thresholds() is None, "two people are not a quorum"
    await vote_down(h, await ask_answers(h, 2, THIRD, "cccc"), THIRD)
    moved = await h.store.load_thresholds()
    assert moved is not None and moved.notify > START.notify
    shown = await thresholds_text(h)
    assert f"<@{THIRD}>" in shown, "who"
    assert f"notify {START.notify:.2f} → {moved.notify:.2f}" in shown, "from → to"
    assert "raised" in shown, "why"


async def test_votes_per_person_are_rate_limited(secure: SecureFactory) -> None:
    h = await secure(feedback={"max_votes_per_hour": 3})
    await vote_down(h, await ask_answers(h, 5, ASKER, "rate"), ASKER)
    assert len(await h.store.recent_feedback(limit=100)) == 3
    assert sum("not recorded" in t for t in h.ephemerals(ASKER)) == 2
