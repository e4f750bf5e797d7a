"""Issue 20, point 7 (agent sessions): in `grace dev`, a question's thread shows its agent
session — titled with the question, `suspended` while grace waits for the asker — and
while the session is `processing` Slack's Stop button, which stops the run: the thread
says who stopped it and the session is closed. Screenshots in `test-artifacts/browser/`."""

from __future__ import annotations

import aiohttp
from playwright.async_api import expect

from .conftest import COMPARE_Q, GENERAL, GraceDev, SimPage


async def test_the_thread_shows_its_session_and_stop_stops_the_run(
    grace_dev: GraceDev, sim: SimPage
) -> None:
    await sim.open(grace_dev.url)
    ts = await sim.ask(f"@grace {COMPARE_Q}")
    await sim.open_thread(ts)

    await expect(sim.testid("session-status")).to_have_text("suspended")  # the plan to approve
    await expect(sim.testid("session-title")).to_contain_text(COMPARE_Q[:30])
    await expect(sim.testid("session-stop")).to_be_hidden()
    await sim.shot("session-suspended")

    # Slack still shows the session processing (as it does until the app's "suspended"
    # lands): its Stop button appears
    async with aiohttp.ClientSession() as http:
        answer = await http.post(
            grace_dev.url.rstrip("/") + "/api/agents.sessions.setStatus",
            json={"channel_id": GENERAL, "thread_ts": ts, "status": "processing"},
            headers={"Authorization": "Bearer xoxb-simulator"},
        )
        assert (await answer.json())["ok"]
    stop = sim.testid("session-stop")
    await expect(stop).to_be_visible()
    await expect(sim.thread).to_have_attribute("data-session-status", "processing")
    await sim.shot("session-processing-with-stop")

    await stop.click()

    await expect(sim.testid("session-status")).to_have_text("closed")
    await expect(stop).to_be_hidden()
    await expect(sim.thread_messages.last).to_contain_text("Stopped")
    await expect(sim.thread_messages.last).to_contain_text("Stop button")
    await sim.shot("session-stopped")
