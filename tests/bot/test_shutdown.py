"""A shutdown (SIGTERM in a deploy) with agents still busy and questions still queued:
the bot stops within its grace period and hands those runs to the next process at once,
instead of leaving them to wait out their leases."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from agent.schemas import RunState, utcnow
from bot.service.settings import SlackSettings
from bot.simulator.webapi import FakeSlack
from tests.durable.helpers import stored_runs

from .conftest import VACATION_Q, BotHarness, has_feedback_buttons, make_settings

THREADS = ["1700007000.000100", "1700007000.000200", "1700007000.000300"]


async def _runs(harness: BotHarness) -> list[RunState]:
    return await stored_runs(harness.settings.resolved_database_url)


async def test_a_shutdown_hands_busy_and_queued_runs_to_the_next_process(
    fake: FakeSlack, data_dir: Path
) -> None:
    settings = make_settings(data_dir, fake).model_copy(
        update={"slack": SlackSettings(max_concurrent_runs=1, plan_display="message")}
    )
    harness = BotHarness(fake, settings)
    await harness.start()
    try:
        fake.set_delay("chat.postMessage", 60)  # the first run hangs posting its plan
        for ts in THREADS:
            await harness.mention(VACATION_Q, ts=ts, settle=False)
        for _ in range(500):
            if len(await _runs(harness)) == len(THREADS):
                break
            await asyncio.sleep(0.01)
        first_worker = harness.bot.services.orchestrator.worker_id

        started = time.monotonic()
        await harness.stop(grace=0.5)
        assert time.monotonic() - started < 10, "the shutdown waited for the hung run"

        handed_over = await _runs(harness)
        assert len(handed_over) == len(THREADS)
        for state in handed_over:
            assert state.status.is_active and state.worker == first_worker
            assert state.lease_expires_at is not None and state.lease_expires_at <= utcnow()

        fake.set_delay("chat.postMessage", 0)
        await harness.start()
        assert await harness.bot.recover() == len(THREADS), "all taken over at start-up"
        await harness.settle()
        for ts in THREADS:
            run = await harness.run_in(ts)
            assert run.status.value == "answered", run.error
            answers = [m for m in harness.thread(ts) if has_feedback_buttons(m)]
            assert len(answers) == 1, f"thread {ts}: {len(answers)} answers"
    finally:
        await harness.close()
