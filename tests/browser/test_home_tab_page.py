"""Issue 20 point 7, the Home tab: in `grace dev`, alice opens grace's Home tab and sees
the question waiting for her, watches it change live as the run goes on (without
reopening it), follows its link to the thread, and after the answer finds it among her
recent questions. Screenshots in `test-artifacts/browser/`."""

from __future__ import annotations

from playwright.async_api import expect

from .conftest import ALICE, BOB, COMPARE_Q, GENERAL, PLAN_RUN, GraceDev, SimPage


async def test_the_home_tab_lists_what_waits_live_and_links_to_the_thread(
    grace_dev: GraceDev, sim: SimPage
) -> None:
    await sim.open(grace_dev.url)
    question_ts = await sim.ask(f"@grace {COMPARE_Q}")
    plan = sim.bot_message_with(PLAN_RUN)
    await expect(plan).to_have_count(1)
    run = sim.button(PLAN_RUN, plan)
    plan_ts = await plan.get_attribute("data-ts")
    value = await run.get_attribute("data-value")

    await sim.testid("home-open").click()
    home = sim.testid("home-view")
    await expect(sim.testid("home-pane")).to_be_visible()
    await expect(sim.testid("channel")).to_be_hidden()
    await expect(home).to_contain_text("Waiting for you (1)")
    await expect(home).to_contain_text("Approve the plan")
    await expect(home).to_contain_text(COMPARE_Q[:50])
    await expect(home).to_contain_text("you asked")
    await sim.shot("home-waiting-for-plan-approval")

    # The plan is approved elsewhere (another client): the open tab follows by itself.
    response = await sim.page.request.post(
        f"{grace_dev.url}sim/actions",
        data={
            "user": ALICE,
            "channel": GENERAL,
            "message_ts": plan_ts,
            "action_id": PLAN_RUN,
            "value": value,
        },
    )
    assert response.ok
    await expect(home).to_contain_text("Confirm a step")
    await expect(home).not_to_contain_text("Approve the plan")
    await sim.shot("home-waiting-for-a-confirmation")

    await home.get_by_role("link", name="open the thread").first.click()
    await expect(sim.testid("home-pane")).to_be_hidden()
    await expect(sim.thread).to_have_attribute("data-thread-ts", question_ts)
    await sim.proceed_until_answered()

    await sim.testid("home-open").click()
    await expect(home).to_contain_text("Waiting for you (0)")
    await expect(home).to_contain_text("answered")
    await expect(home).to_contain_text(COMPARE_Q[:50])
    await sim.shot("home-answered-in-recent-questions")

    await sim.switch_user(BOB)  # someone else's Home: nothing of alice's
    await sim.testid("home-open").click()
    await expect(home).to_contain_text("You have not asked me anything yet")
    await expect(home).not_to_contain_text(COMPARE_Q[:50])
    await sim.shot("home-of-someone-else")
