"""The plan as Slack's native plan, seen in `grace dev`: with `--pace` a person watches
the streamed reply's tasks move pending → in progress → complete and the answer arrive in
the same reply; with `--no-streaming` the workspace refuses to stream and the plan is
the edited message of `plan` / `task_card` blocks. Screenshots of each stage go to
`test-artifacts/browser/`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from playwright.async_api import expect

from .conftest import BOT, FEEDBACK, GraceDev, SimPage, running_dev

VACATION_Q = "How many vacation days do new employees get?"


@pytest.fixture
async def paced_dev(tmp_path: Path) -> AsyncIterator[GraceDev]:
    async with running_dev(tmp_path, "streamed_plan", "--pace", "0.8") as dev:
        yield dev


@pytest.fixture
async def refusing_dev(tmp_path: Path) -> AsyncIterator[GraceDev]:
    async with running_dev(tmp_path, "no_streaming", "--no-streaming") as dev:
        yield dev


async def test_streamed_plan_progresses_then_answers(paced_dev: GraceDev, sim: SimPage) -> None:
    await sim.open(paced_dev.url)
    await sim.ask(f"@grace {VACATION_Q}")
    await expect(sim.thread).to_be_visible()

    stream = sim.thread_messages.and_(sim.page.locator(f'[data-user="{BOT}"]'))
    await expect(stream).to_have_count(1)
    await expect(sim.testid("streaming", stream)).to_be_visible()
    tasks = sim.testid("task-card", stream)
    working = tasks.and_(sim.page.locator('[data-status="in_progress"]'))
    await expect(working).to_have_count(1, timeout=30_000)
    await expect(sim.testid("plan-title", stream)).to_have_text("Looking into your question")
    await sim.shot("plan-streaming")

    await expect(sim.testid("streaming", stream)).to_have_count(0, timeout=30_000)
    count = await tasks.count()
    assert count >= 2
    await expect(tasks.and_(sim.page.locator('[data-status="complete"]'))).to_have_count(count)
    await expect(sim.testid("plan-title", stream)).to_have_text("Done")
    await expect(stream).to_contain_text("15 days")
    await expect(stream).to_contain_text("Sources")
    await expect(sim.button(FEEDBACK, stream)).to_have_count(2)
    await expect(stream).to_have_count(1)  # plan and answer are one reply
    await sim.shot("plan-streamed-answer")


async def test_a_workspace_without_streaming_shows_the_plan_card_message(
    refusing_dev: GraceDev, sim: SimPage
) -> None:
    await sim.open(refusing_dev.url)
    await sim.ask(f"@grace {VACATION_Q}")
    await expect(sim.thread).to_be_visible()
    answer = sim.bot_message_with(FEEDBACK)
    await expect(answer).to_have_count(1, timeout=30_000)
    bot = sim.thread_messages.and_(sim.page.locator(f'[data-user="{BOT}"]'))
    await expect(bot).to_have_count(2)  # the plan message, then the answer
    plan = bot.first
    await expect(plan.locator('[data-block-type="plan"]')).to_have_count(1)
    tasks = sim.testid("task-card", plan)
    count = await tasks.count()
    assert count >= 2
    await expect(tasks.and_(sim.page.locator('[data-status="complete"]'))).to_have_count(count)
    await expect(sim.testid("streaming")).to_have_count(0)
    await sim.shot("plan-card-message")
