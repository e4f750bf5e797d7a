"""Installed workspaces (issue 21, OAuth mode): forgetting a team's data once the
retention after its uninstall has run out (the sweeper of `grace serve`), or at once
(`grace teams forget TEAM`)."""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncEngine

from agent.schemas import utcnow
from storage.installations import InstalledTeam, SqlInstallationStore
from storage.team_data import Forgotten, SqlTeamData

log = logging.getLogger(__name__)


async def forget_team(engine: AsyncEngine, team: InstalledTeam) -> Forgotten:
    forgotten = await SqlTeamData(engine).forget(team)
    log.warning("forgot team %s: %d runs and its installation", team.key, forgotten.runs)
    return forgotten


async def forget_uninstalled(
    installations: SqlInstallationStore,
    *,
    retention_days: float,
    now: datetime | None = None,
) -> list[InstalledTeam]:
    """Delete the data of every team uninstalled more than `retention_days` ago."""
    cutoff = (now or utcnow()) - timedelta(days=retention_days)
    due = await installations.uninstalled_before(cutoff)
    for team in due:
        await forget_team(installations.engine, team)
    return due


async def forget_uninstalled_forever(
    installations: SqlInstallationStore, retention_days: float, interval: float = 60.0
) -> None:
    while True:
        try:
            await forget_uninstalled(installations, retention_days=retention_days)
        except Exception:  # a database fault: the next pass tries again
            log.exception("forgetting uninstalled teams failed")
        await asyncio.sleep(interval)
