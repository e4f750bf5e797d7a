"""Acceptance for `grace dev` in a real browser: a person in headless Chromium talks to the
real GRACE bot through the simulator's page — plan approval, live answers with sources,
escalation answered in a thread, 👍 feedback, `/grace status`, only the asker may answer,
and a restart that keeps history and paused runs.

Every stage is saved as a screenshot in `test-artifacts/browser/`.
"""

from __future__ import annotations

from playwright.async_api import expect

from .conftest import (
    ALICE,
    BOB,
    BOT,
    COMPARE_Q,
    CONFIRM_PROCEED,
    DETAILS,
    GENERAL,
    MONGOLIA_Q,
    PLAN_CANCEL,
    PLAN_EDIT,
    PLAN_RUN,
    PROCEED,
    REFUSAL,
    GraceDev,
    SimPage,
)

NO_RELOAD = "window.__graceNoReload"


async def ask_for_approval(sim: SimPage) -> str:
    """alice asks a question that needs approval; its thread shows the plan with
    Run / Edit / Cancel. The question's ts."""
    question_ts = await sim.ask(f"@grace {COMPARE_Q}")
    await expect(sim.thread).to_be_visible()
    await expect(sim.thread).to_have_attribute("data-thread-ts", question_ts)
    plan = sim.bot_message_with(PLAN_RUN)
    await expect(plan).to_have_count(1)
    await expect(plan).to_contain_text("Run this plan?")
    for action, label in ((PLAN_RUN, "Run plan"), (PLAN_EDIT, "Edit"), (PLAN_CANCEL, "Cancel")):
        await expect(sim.button(action, plan)).to_contain_text(label)
    return question_ts


async def test_plan_approval_live_answer_feedback_and_status(
    grace_dev: GraceDev, sim: SimPage
) -> None:
    await sim.open(grace_dev.url)
    await expect(sim.testid("empty-channel")).to_be_visible()
    await expect(sim.testid("connection-status")).to_contain_text("grace connected")
    await sim.shot("empty-general")

    question_ts = await ask_for_approval(sim)
    await sim.shot("plan-awaiting-approval")
    plan = sim.bot_message_with(PLAN_RUN)
    plan_ts = await plan.get_attribute("data-ts")
    assert grace_dev.runs(question_ts) == [("paused", grace_dev.runs(question_ts)[0][1])]

    await sim.page.evaluate(f"{NO_RELOAD} = true")
    await sim.click(sim.button(PLAN_RUN, plan))
    answer = await sim.proceed_until_answered()
    await expect(answer).to_contain_text("Sources")
    await expect(answer).to_contain_text(".md")
    await expect(sim.thumbs_up(answer)).to_be_visible()
    # the plan message was edited in place: approved, no more buttons
    edited = sim.thread_messages.and_(sim.page.locator(f'[data-ts="{plan_ts}"]'))
    await expect(edited).to_contain_text("approved by")
    await expect(sim.button(PLAN_RUN, edited)).to_have_count(0)
    assert await sim.page.evaluate(NO_RELOAD) is True, "the page reloaded"
    assert [status for status, _ in grace_dev.runs(question_ts)] == ["answered"]
    await sim.shot("answer-with-sources")

    await sim.click(sim.thumbs_up(answer))
    ack = sim.thread_ephemerals.filter(has_text="recorded as")
    await expect(ack).to_be_visible()
    await expect(ack).to_contain_text("👍")
    await expect(sim.testid("ephemeral-note", ack)).to_have_text("👁 Only visible to you")
    await sim.shot("thumbs-up-acknowledged")

    await sim.command("/grace status")
    status = sim.testid("ephemeral", sim.testid("message-list"))
    await expect(status).to_have_count(1)
    await expect(status).to_contain_text("GRACE — your recent questions")
    await expect(sim.testid("ephemeral-note", status)).to_have_text("👁 Only visible to you")
    await sim.shot("grace-status-ephemeral")
    assert await sim.page.evaluate(NO_RELOAD) is True, "the page reloaded"


async def test_an_escalation_is_answered_by_a_reply_in_the_thread(
    grace_dev: GraceDev, sim: SimPage
) -> None:
    await sim.open(grace_dev.url)
    question_ts = await sim.ask(f"@grace {MONGOLIA_Q}")
    escalation = sim.bot_message_with(PROCEED[1])
    await expect(escalation).to_have_count(1)
    await expect(escalation).to_contain_text("I need your help to answer this")
    await expect(escalation).to_contain_text("Reply in this thread")
    await expect(escalation).not_to_contain_text("replan limit")
    escalation_ts = await escalation.get_attribute("data-ts")
    assert [status for status, _ in grace_dev.runs(question_ts)] == ["paused"]
    await sim.shot("escalated")

    # close the thread and open it again from the channel, as a person coming back would
    await sim.testid("thread-close").click()
    await expect(sim.thread).to_be_hidden()
    await sim.open_thread(question_ts)
    await sim.reply_in_thread("It is Ulaanbaatar, according to our travel guide.")
    # the decided escalation quotes the reply too, so look only at alice's own messages
    mine = sim.thread_messages.and_(sim.page.locator(f'[data-user="{ALICE}"]')).filter(
        has_text="according to our travel guide"
    )
    await expect(mine).to_have_count(1)

    # the run resumed with the new information: the question was decided (no more buttons)
    decided = sim.thread_messages.and_(sim.page.locator(f'[data-ts="{escalation_ts}"]'))
    await expect(sim.button(PROCEED[1], decided)).to_have_count(0)
    await expect(decided).to_contain_text("Answered by @alice")
    after_reply = sim.page.locator(f'[data-testid="thread-messages"] [data-user="{BOT}"]')
    await expect(after_reply.last).not_to_have_attribute("data-ts", escalation_ts or "")
    await sim.shot("resumed-after-thread-reply")

    answer = await sim.proceed_until_answered()
    await expect(sim.thumbs_up(answer)).to_be_visible()
    assert [status for status, _ in grace_dev.runs(question_ts)] == ["answered"]
    await sim.shot("answered-after-escalation")


async def test_only_the_asker_can_run_a_paused_plan(grace_dev: GraceDev, sim: SimPage) -> None:
    await sim.open(grace_dev.url)
    question_ts = await ask_for_approval(sim)
    [(status, version)] = grace_dev.runs(question_ts)
    assert status == "paused"

    await sim.switch_user(BOB)
    await expect(sim.thread).to_be_hidden()
    await expect(sim.channel_message(question_ts)).to_contain_text(COMPARE_Q)
    await sim.open_thread(question_ts)
    plan = sim.bot_message_with(PLAN_RUN)
    await sim.shot("bob-sees-alices-plan")
    await sim.click(sim.button(PLAN_RUN, plan))
    refusal = sim.thread_ephemerals.filter(has_text=REFUSAL)
    await expect(refusal).to_be_visible()
    await expect(sim.testid("ephemeral-note", refusal)).to_have_text("👁 Only visible to you")
    await expect(sim.button(PLAN_RUN, plan)).to_be_enabled()  # still there, unchanged
    await sim.shot("bob-refused")
    assert grace_dev.runs(question_ts) == [("paused", version)], "bob's click changed the run"

    await sim.switch_user(ALICE)
    await sim.open_thread(question_ts)
    await expect(sim.button(PLAN_RUN, sim.bot_message_with(PLAN_RUN))).to_be_enabled()
    await expect(sim.thread_ephemerals).to_have_count(0)  # bob's refusal is his alone
    await sim.shot("alice-still-sees-run")
    assert grace_dev.runs(question_ts) == [("paused", version)]


async def test_a_restart_keeps_history_and_the_paused_run_answerable(
    grace_dev: GraceDev, sim: SimPage
) -> None:
    await sim.open(grace_dev.url)
    question_ts = await ask_for_approval(sim)
    await sim.shot("paused-before-restart")

    assert await grace_dev.stop() == 0
    await expect(sim.testid("connection-status")).to_have_attribute("data-connected", "false")
    await sim.shot("server-stopped")

    port = grace_dev.port
    await grace_dev.start()
    assert grace_dev.port == port
    await sim.page.reload()
    await sim.ready()
    await expect(sim.channel_message(question_ts)).to_contain_text(COMPARE_Q)
    await sim.open_thread(question_ts)
    plan = sim.bot_message_with(PLAN_RUN)
    await expect(plan).to_have_count(1)
    await sim.shot("history-after-restart")
    assert [status for status, _ in grace_dev.runs(question_ts)] == ["paused"]

    await sim.click(sim.button(PLAN_RUN, plan))
    answer = await sim.proceed_until_answered()
    await expect(answer).to_contain_text("Sources")
    assert [status for status, _ in grace_dev.runs(question_ts)] == ["answered"]
    await sim.shot("answered-after-restart")


async def test_plain_confirm_card_with_details_and_a_fresh_page_like_slack(
    grace_dev: GraceDev, sim: SimPage
) -> None:
    missing: list[str] = []
    sim.page.on("response", lambda r: missing.append(r.url) if r.status == 404 else None)
    await sim.open(grace_dev.url)
    await expect(sim.testid("channel-hint")).to_contain_text("Mention @grace to ask")
    await sim.testid("dm-list").locator('[data-testid="channel-link"]').click()
    await expect(sim.testid("channel-hint")).to_contain_text("no @mention needed")
    await expect(sim.testid("channel-hint")).not_to_contain_text("Mention @grace")
    await sim.shot("dm-header")
    await sim.testid("channel-list").locator(f'[data-channel="{GENERAL}"]').click()

    await ask_for_approval(sim)
    await sim.click(sim.button(PLAN_RUN, sim.bot_message_with(PLAN_RUN)))
    card = sim.bot_message_with(CONFIRM_PROCEED)
    await expect(card).to_have_count(1)
    await expect(card).to_contain_text("Before I go on")
    await expect(card).to_contain_text("Why I am unsure:")
    await expect(card).to_contain_text("Proceed goes on with what I found")
    await expect(card).not_to_contain_text("confidence 0.")
    await sim.shot("confirm-card-plain-words")

    await sim.click(sim.button(DETAILS, card))
    modal = sim.testid("modal-overlay")
    await expect(modal).to_be_visible()
    await expect(sim.testid("modal-body")).to_contain_text("Factors:")
    await expect(sim.testid("modal-submit")).to_be_hidden()
    await sim.shot("confirm-details-modal")

    await sim.page.reload()  # a fresh page: the modal is not opened again
    await sim.ready()
    await expect(modal).to_be_hidden()
    await sim.command("/grace status")
    told = sim.testid("ephemeral", sim.testid("message-list"))
    await expect(told).to_have_count(1)
    await sim.page.reload()  # ... and ephemeral messages are gone, as in Slack
    await sim.ready()
    await expect(sim.testid("ephemeral")).to_have_count(0)
    await sim.shot("fresh-page-without-ephemerals")
    assert not [url for url in missing if url.endswith("/favicon.ico")], missing
    assert not sim.errors
