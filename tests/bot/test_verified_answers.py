"""Verified answers (issue 19, point 4) through the real Bolt app and the fake Slack:
escalate → a person replies → an approver saves the answer → a new thread asking the
same thing is answered from it, citing who verified it; non-approvers save nothing;
`/grace verified` lists, `/grace forget` removes; past its review date it is no longer
a strong source and the answer says so."""

from __future__ import annotations

from datetime import timedelta

from agent.schemas import InterventionLevel, RunStatus, utcnow
from blocks import ids
from bot.slack.listeners.verified import NOT_AN_APPROVER, ONLY_APPROVERS_FORGET

from .conftest import (
    APPROVER,
    ASKER,
    CHANNEL,
    MONGOLIA_Q,
    BotHarness,
    HarnessFactory,
    button_values,
    message_text,
    proceed_through_confirms,
)
from .test_commands import ephemeral_body, shown

TS = "1700009000.000100"
LATER = "1700009100.000100"
REPLY = "It is Ulaanbaatar, according to our travel guide."


def _today() -> str:
    now = utcnow()
    return f"{now.day} {now:%b %Y}"


async def _answered_by_a_reply(harness: BotHarness) -> None:
    """A question the knowledge base cannot answer, escalated, answered by a reply."""
    state = await harness.ask(MONGOLIA_Q, ts=TS)
    assert state.status is RunStatus.PAUSED, state.status
    await harness.thread_reply(REPLY, thread_ts=TS, ts="1700009000.000200")
    state = await proceed_through_confirms(harness, TS)
    assert state.status is RunStatus.ANSWERED, state.error


async def test_a_saved_reply_answers_the_next_thread_citing_who_verified_it(
    make_harness: HarnessFactory,
) -> None:
    harness = await make_harness(approvers=[APPROVER])
    harness.fake.workspace.add_user(APPROVER, name="alice")
    await _answered_by_a_reply(harness)
    state = await harness.run_in(TS)
    answer = await harness.answer_message(state)
    buttons = button_values(answer)
    assert ids.SAVE_VERIFIED in buttons, "an answer resting on a reply offers Save"

    # Someone who is not an approver: a polite ephemeral, nothing saved.
    reply = await harness.click(ids.SAVE_VERIFIED, buttons[ids.SAVE_VERIFIED], message=answer)
    assert reply.status == 200
    assert NOT_AN_APPROVER in harness.ephemerals(ASKER)
    assert await harness.store.verified.recent() == []

    await harness.click(
        ids.SAVE_VERIFIED, buttons[ids.SAVE_VERIFIED], message=answer, user=APPROVER
    )
    [saved] = await harness.store.verified.recent()
    told = harness.ephemerals(APPROVER)[-1]
    assert f"Saved as verified answer `{saved.answer_id}`" in told
    assert f"Verified by @alice on {_today()}" in told
    assert saved.question == MONGOLIA_Q
    assert saved.answer == REPLY, "the answer's words, without citation marks"
    assert (saved.verified_by, saved.verified_by_name) == (APPROVER, "alice")
    assert saved.run_id == state.run_id
    # The mention itself never reached the fake workspace: the answer's link opens the thread.
    assert saved.permalink == harness.fake.workspace.permalink(CHANNEL, answer.ts)
    assert f"thread_ts={TS}" in saved.permalink
    assert timedelta(days=179) < saved.review_by - saved.verified_at <= timedelta(days=180)

    # A second click (by anyone allowed) saves nothing more.
    await harness.click(
        ids.SAVE_VERIFIED, buttons[ids.SAVE_VERIFIED], message=answer, user=APPROVER
    )
    assert (
        f"already saved as verified answer `{saved.answer_id}`" in harness.ephemerals(APPROVER)[-1]
    )
    assert len(await harness.store.verified.recent()) == 1

    # A new thread asking the same thing: answered from the verified answer, no pause.
    later = await harness.ask(MONGOLIA_Q, ts=LATER)
    assert later.status is RunStatus.ANSWERED, later.error
    assert later.interventions == [], "no escalation: the verified answer answers it"
    assert "Ulaanbaatar" in later.final_answer
    [cited] = [s for s in later.sources if s.verified is not None]
    assert cited.verified is not None and cited.verified.verified_by == "alice"
    assert later.level is InterventionLevel.SILENT, "a fresh verified answer is strong"
    shown_answer = message_text(await harness.answer_message(later))
    assert f"Verified by @alice on {_today()}" in shown_answer
    assert saved.permalink is not None and saved.permalink in shown_answer
    assert "past its review date" not in shown_answer
    assert ids.SAVE_VERIFIED not in button_values(await harness.answer_message(later))


async def test_grace_verified_lists_and_forget_removes_for_approvers_only(
    make_harness: HarnessFactory,
) -> None:
    harness = await make_harness(approvers=[APPROVER])
    assert "No verified answers yet" in shown(ephemeral_body(await harness.command("verified")))
    assert harness.bot.deps.verified is not None
    saved, _ = await harness.bot.deps.verified.save(
        question=MONGOLIA_Q, answer=REPLY, verified_by=APPROVER, verified_by_name="alice"
    )

    listed = shown(ephemeral_body(await harness.command("verified")))
    assert saved.answer_id in listed and "Ulaanbaatar" in listed
    assert f"Verified by @alice on {_today()}" in listed
    assert "/grace verified" in shown(ephemeral_body(await harness.command("help")))

    refused = ephemeral_body(await harness.command(f"forget {saved.answer_id}"))
    assert ONLY_APPROVERS_FORGET in shown(refused)
    assert await harness.store.verified.get(saved.answer_id) is not None

    removed = ephemeral_body(await harness.command(f"forget {saved.answer_id}", user=APPROVER))
    assert f"Removed verified answer `{saved.answer_id}`" in removed["text"]
    assert await harness.store.verified.get(saved.answer_id) is None
    unknown = ephemeral_body(await harness.command(f"forget {saved.answer_id}", user=APPROVER))
    assert "No verified answer" in unknown["text"]

    # Gone from the knowledge base too: the question escalates again.
    state = await harness.ask(MONGOLIA_Q, ts=LATER)
    assert state.status is RunStatus.PAUSED
    assert not any(s.verified for s in state.sources)


async def test_past_its_review_date_it_is_no_longer_strong_and_the_answer_says_so(
    harness: BotHarness,
) -> None:
    assert harness.bot.deps.verified is not None
    long_ago = utcnow() - timedelta(days=200)
    await harness.bot.deps.verified.save(
        question=MONGOLIA_Q,
        answer=REPLY,
        verified_by=APPROVER,
        verified_by_name="alice",
        now=long_ago,
    )
    await harness.mention(MONGOLIA_Q, ts=LATER)
    state = await proceed_through_confirms(harness, LATER)
    assert state.status is RunStatus.ANSWERED, state.error
    assert "Ulaanbaatar" in state.final_answer
    assert "past its review date" in state.final_answer
    assert state.level is not InterventionLevel.SILENT
    assert state.overall_detail is not None
    assert "verified" not in state.overall_detail.breakdown
    shown_answer = message_text(await harness.answer_message(state))
    assert "Verified by @alice" in shown_answer and "past its review date" in shown_answer
