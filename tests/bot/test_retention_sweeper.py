"""Issue 23 point 4, the sweeper half: with `GRACE_RETENTION_DAYS` set, the background pass
forgets a finished Slack run older than that (with its message refs and outbox row) and
keeps a run waiting for a person however old; at 0 (the default) it forgets nothing."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from sqlalchemy import func, select, update

from agent.schemas import RunStatus, utcnow
from bot.service.sweeper import retain_once
from storage.tables import DeliveryRow, MessageRefRow, RunRow

from .conftest import COMPARE_Q, VACATION_Q, BotHarness

ANSWERED_TS = "1700095000.000100"
PAUSED_TS = "1700095000.000200"


async def test_the_sweeper_forgets_old_finished_runs_only(harness: BotHarness) -> None:
    await harness.mention(VACATION_Q, ts=ANSWERED_TS)
    await harness.mention(COMPARE_Q, ts=PAUSED_TS)
    answered, paused = await harness.run_in(ANSWERED_TS), await harness.run_in(PAUSED_TS)
    assert answered.status is RunStatus.ANSWERED and paused.status is RunStatus.PAUSED
    services = harness.bot.services
    async with services.engine.begin() as connection:  # both last changed 3 days ago
        await connection.execute(update(RunRow).values(updated_at=utcnow() - timedelta(days=3)))

    assert services.settings.retention_days == 0
    assert await retain_once(services) is None, "0 keeps everything"
    assert await harness.store.load(answered.run_id) is not None

    keep_two_days = services.settings.model_copy(update={"retention_days": 2.0})
    purged = await retain_once(replace(services, settings=keep_two_days))

    assert purged is not None and purged.runs == 1 and purged.message_refs >= 1
    assert await harness.store.load(answered.run_id) is None
    assert await harness.store.load(paused.run_id) is not None
    async with services.engine.connect() as connection:
        for table in (MessageRefRow, DeliveryRow):
            left = select(func.count()).select_from(table).where(table.run_id == answered.run_id)
            assert (await connection.execute(left)).scalar_one() == 0, table
