"""`grace dev --workspaces 2` in a real browser (issue 21): a person installs GRACE to
each simulated workspace with the page's "Add to Slack" — GRACE's own install page, the
simulator's authorize page, GRACE's OAuth redirect — then asks one question in each
workspace and gets an answer there."""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import BrowserContext, Locator, expect

from bot.simulator.server import SECOND_TEAM
from bot.simulator.workspace import DEFAULT_TEAM_ID

from .conftest import ALICE, FEEDBACK, GENERAL, SimPage, running_dev

VACATION_Q = "How many vacation days do new employees get?"
DAVE = "U0DAVE"
LOBBY = "C0LOBBY01"


def channels(sim: SimPage) -> Locator:
    """The channel list's links (not the DMs)."""
    return sim.testid("channel-link", sim.testid("channel-list"))


async def install_here(sim: SimPage, context: BrowserContext, team_id: str) -> None:
    """Add to Slack (a new tab): GRACE's install page → Allow in `team_id` → back on
    GRACE's success page; the tab is closed and the page says GRACE is installed."""
    status = sim.testid("install-status")
    await expect(status).to_have_attribute("data-installed", "false")
    async with context.expect_page() as opened:
        await sim.testid("add-to-slack").click()
    tab = await opened.value
    await tab.locator('a[href*="/oauth/v2/authorize"]').click()
    await tab.locator(f'a.allow[data-team="{team_id}"]').click()
    await expect(tab.locator("body")).to_contain_text("Thank you")
    await tab.close()
    await sim.page.bring_to_front()
    await expect(status).to_have_attribute("data-installed", "true")
    await expect(sim.testid("add-to-slack")).to_be_hidden()


async def ask_and_get_answer(sim: SimPage) -> None:
    await sim.ask(f"@grace {VACATION_Q}")
    answer = sim.bot_message_with(FEEDBACK)
    await expect(answer).to_have_count(1)
    await expect(answer).to_contain_text("15 days")


async def test_install_to_two_workspaces_and_ask_in_each(
    tmp_path: Path, context: BrowserContext, sim: SimPage
) -> None:
    async with running_dev(tmp_path, "workspaces_page", "--workspaces", "2") as dev:
        await sim.open(dev.url)
        await expect(sim.testid("workspaces")).to_be_visible()
        await expect(sim.testid("team-name")).to_have_text("GRACE Simulator")
        await expect(channels(sim)).to_have_count(2)  # #general, #random
        await sim.shot("first-workspace-not-installed")
        await install_here(sim, context, DEFAULT_TEAM_ID)
        await ask_and_get_answer(sim)
        await sim.shot("first-workspace-answered")

        await sim.testid("workspace-switcher").select_option(SECOND_TEAM[0])
        await expect(sim.testid("team-name")).to_have_text(SECOND_TEAM[1])
        await expect(sim.testid("user-switcher")).to_have_value(DAVE)
        await expect(sim.testid("channel-title")).to_have_text("#lobby")
        await expect(channels(sim)).to_have_count(1)
        await expect(sim.channel_messages).to_have_count(0)  # nothing of the other one
        await sim.ready()
        await install_here(sim, context, SECOND_TEAM[0])
        await ask_and_get_answer(sim)
        await sim.shot("second-workspace-answered")

        await sim.testid("workspace-switcher").select_option(DEFAULT_TEAM_ID)
        await expect(sim.testid("user-switcher")).to_have_value(ALICE)
        await expect(sim.page).to_have_url(f"{dev.url}?user={ALICE}&channel={GENERAL}")
        await expect(sim.testid("install-status")).to_have_attribute("data-installed", "true")
