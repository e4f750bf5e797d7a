"""Deleting one team's data (issue 21): after an uninstall once its retention has run
out (the sweeper), or at once (`grace teams forget TEAM`).

A team's runs — every status: the app is gone, nobody will answer — and what hangs off
them (interventions, audit trail, message refs, outbox rows, 👍/👎 votes, usage rows,
verified answers saved from them, expert reminders), its workspace notes and channel
settings (with their recorded changes), then its installation row.
For an org-wide install, every run of the org goes.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import ColumnElement, delete, select

from storage.db import retried_write
from storage.installations import InstalledTeam
from storage.sql import SqlStore, rowcount
from storage.tables import (
    ChannelSettingChangeRow,
    ChannelSettingsRow,
    DeliveryRow,
    ExpertReminderRow,
    FeedbackRow,
    InstallationRow,
    InterventionRow,
    MessageRefRow,
    RunEventRow,
    RunRow,
    UsageRow,
    VerifiedAnswerRow,
    WorkspaceNoteRow,
)

BATCH = 500


@dataclass(frozen=True)
class Forgotten:
    runs: int = 0
    installation: bool = False


def _runs_of(team: InstalledTeam) -> ColumnElement[bool]:
    if team.team_id is None:  # an org-wide install: every workspace of the org
        return RunRow.enterprise_id == team.enterprise_id
    return RunRow.team_id == team.team_id


class SqlTeamData(SqlStore):
    async def forget(self, team: InstalledTeam) -> Forgotten:
        """Delete the team's runs (batched, short transactions), then its notes, channel
        settings and installation row."""
        runs = 0
        while True:
            done = await self._forget_runs(team)
            runs += done
            if done < BATCH:
                break
        return Forgotten(runs=runs, installation=await self._forget_installation(team))

    @retried_write
    async def _forget_runs(self, team: InstalledTeam) -> int:
        async with self._sessions.begin() as session:
            ids = list(
                (
                    await session.scalars(select(RunRow.run_id).where(_runs_of(team)).limit(BATCH))
                ).all()
            )
            if not ids:
                return 0
            tables: tuple[
                type[
                    InterventionRow
                    | RunEventRow
                    | MessageRefRow
                    | DeliveryRow
                    | FeedbackRow
                    | UsageRow
                    | VerifiedAnswerRow
                    | ExpertReminderRow
                ],
                ...,
            ] = (
                InterventionRow,
                RunEventRow,
                MessageRefRow,
                DeliveryRow,
                FeedbackRow,
                UsageRow,
                VerifiedAnswerRow,
                ExpertReminderRow,
            )
            for table in tables:
                await session.execute(
                    delete(table)
                    .where(table.run_id.in_(ids))
                    .execution_options(synchronize_session=False)
                )
            result = await session.execute(
                delete(RunRow)
                .where(RunRow.run_id.in_(ids))
                .execution_options(synchronize_session=False)
            )
            return rowcount(result)

    @retried_write
    async def _forget_installation(self, team: InstalledTeam) -> bool:
        async with self._sessions.begin() as session:
            if team.team_id is not None:
                for kept in (WorkspaceNoteRow, ChannelSettingsRow, ChannelSettingChangeRow):
                    await session.execute(delete(kept).where(kept.team_id == team.team_id))
            result = await session.execute(
                delete(InstallationRow).where(
                    InstallationRow.enterprise_key == (team.enterprise_id or ""),
                    InstallationRow.team_key == (team.team_id or ""),
                )
            )
            return rowcount(result) == 1
