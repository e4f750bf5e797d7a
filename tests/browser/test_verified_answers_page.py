"""Verified answers in the simulator, as people use them (issue 19, point 4): alice's
question escalates, she replies in the thread and GRACE answers from her reply; her own
click on Save as verified answer is politely refused (she is no approver); carol, an
approver, saves it; the next time anyone asks, GRACE answers from the verified answer and
cites "Verified by @carol on <today>"."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from playwright.async_api import expect

from .conftest import ALICE, BOT, FEEDBACK, MONGOLIA_Q, GraceDev, SimPage, running_dev

CAROL = "U0CAROL"
SAVE_VERIFIED = "grace_save_verified"
NOT_AN_APPROVER = "Only GRACE's approvers can save verified answers, so nothing was saved."


class GraceDevWithApprover(GraceDev):
    """`grace dev` with carol as GRACE's approver."""

    def env(self) -> dict[str, str]:
        return {**super().env(), "GRACE_APPROVERS": CAROL}


@pytest.fixture
async def dev_with_approver(
    tmp_path: Path, request: pytest.FixtureRequest
) -> AsyncIterator[GraceDev]:
    name = request.node.name.removeprefix("test_")
    async with running_dev(tmp_path, name, kind=GraceDevWithApprover) as dev:
        yield dev


async def test_a_reply_saved_by_an_approver_answers_the_next_question(
    dev_with_approver: GraceDev, sim: SimPage
) -> None:
    await sim.open(dev_with_approver.url)
    question_ts = await sim.ask(f"@grace {MONGOLIA_Q}")
    await expect(sim.thread).to_have_attribute("data-thread-ts", question_ts)
    escalation = sim.bot_message_with("grace_escalate_proceed")
    await expect(escalation).to_have_count(1)
    escalation_ts = await escalation.get_attribute("data-ts")
    await sim.reply_in_thread("It is Ulaanbaatar, according to our travel guide.")
    decided = sim.thread_messages.and_(sim.page.locator(f'[data-ts="{escalation_ts}"]'))
    await expect(decided).to_contain_text("Answered by @alice")
    answer = await sim.proceed_until_answered()
    save = sim.button(SAVE_VERIFIED, answer)
    await expect(save).to_contain_text("Save as verified answer")
    await sim.shot("answer-offers-save")

    # alice is no approver: a polite note only she sees, nothing saved
    await sim.click(save)
    refusal = sim.thread_ephemerals.filter(has_text=NOT_AN_APPROVER)
    await expect(refusal).to_be_visible()
    await sim.shot("alice-may-not-save")

    # carol, an approver, saves it
    await sim.switch_user(CAROL)
    await sim.open_thread(question_ts)
    await sim.click(sim.button(SAVE_VERIFIED, sim.bot_message_with(SAVE_VERIFIED).last))
    today = datetime.now(UTC)
    cited = f"Verified by @carol on {today.day} {today:%b %Y}"
    saved = sim.thread_ephemerals.filter(has_text="Saved as verified answer")
    await expect(saved).to_be_visible()
    await expect(saved).to_contain_text(cited)
    await sim.shot("carol-saved-it")

    # the next time it is asked, the verified answer answers it at once, attributed
    await sim.switch_user(ALICE)
    again_ts = await sim.ask(f"@grace {MONGOLIA_Q}")
    await expect(sim.thread).to_have_attribute("data-thread-ts", again_ts)
    answer = sim.bot_message_with(FEEDBACK).and_(sim.page.locator(f'[data-user="{BOT}"]'))
    await expect(answer).to_have_count(1)
    await expect(answer).to_contain_text("Ulaanbaatar")
    await expect(answer).to_contain_text(cited)
    await expect(sim.button("grace_escalate_proceed")).to_have_count(0)
    await expect(sim.button(SAVE_VERIFIED, answer)).to_have_count(0)
    await sim.shot("answered-from-verified-answer")
    assert [status for status, _ in dev_with_approver.runs(again_ts)] == ["answered"]
