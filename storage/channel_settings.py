"""Per-channel settings (0011): what a channel overrides of the global configuration,
and the record of every change (who, when, which field, from → to).

`ChannelSettings` is the typed value callers read; `ChannelUpdate` says what to change:
a field it sets changes, a field it sets to None is unset (falls back to the global
setting again), a field it leaves out stays as it is. The change and its record are
written in one transaction, so no change is stored without its record."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import delete, select

from agent.schemas import utcnow
from storage.db import retried_write
from storage.sql import SqlStore, rowcount
from storage.tables import ChannelSettingChangeRow, ChannelSettingsRow, ExpertReminderRow

AnswerMode = Literal["mentions", "all"]
"""`mentions`: GRACE answers when mentioned (and in DMs); `all`: every question posted
in the channel too."""
ReplyMode = Literal["thread", "ephemeral"]
"""Where the answer goes: the thread, or only the asker sees it."""

LIST_FIELDS = ("collections", "experts", "approvers")
FIELDS = (*LIST_FIELDS, "silent", "notify", "confirm", "answer_mode", "reply_mode", "follow_ups")
"""The settable fields, in the order they are shown."""


class _Values(BaseModel):
    collections: list[str] | None = None
    experts: list[str] | None = None
    """User ids (U…, W…) and user-group ids (S…) mentioned when GRACE escalates."""
    approvers: list[str] | None = None
    silent: float | None = Field(default=None, ge=0, le=1)
    notify: float | None = Field(default=None, ge=0, le=1)
    confirm: float | None = Field(default=None, ge=0, le=1)
    answer_mode: AnswerMode | None = None
    reply_mode: ReplyMode | None = None
    follow_ups: bool | None = None


class ChannelSettings(_Values):
    """One channel's own settings; None = not set here (the global setting applies)."""

    model_config = ConfigDict(frozen=True)

    team_id: str = ""
    channel_id: str
    updated_by: str | None = None
    updated_at: datetime | None = None

    def values(self) -> dict[str, Any]:
        """field → value of the settable fields (None = unset)."""
        return {name: getattr(self, name) for name in FIELDS}


class ChannelUpdate(_Values):
    """What to change: only the fields given are touched; given as None = unset."""

    def changes(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in FIELDS if name in self.model_fields_set}


class ChannelSettingChange(BaseModel):
    """One recorded change of one field."""

    team_id: str
    channel_id: str
    field: str
    old: Any
    new: Any
    changed_by: str
    changed_at: datetime


def _dump(value: Any) -> str | None:
    return None if value is None else json.dumps(value)


def _change_of(row: ChannelSettingChangeRow) -> ChannelSettingChange:
    """A stored change as the record callers get (no ORM row leaves storage)."""
    return ChannelSettingChange(
        team_id=row.team_id,
        channel_id=row.channel_id,
        field=row.field,
        old=None if row.old_value is None else json.loads(row.old_value),
        new=None if row.new_value is None else json.loads(row.new_value),
        changed_by=row.changed_by,
        changed_at=row.changed_at,
    )


def _settings_of(row: ChannelSettingsRow) -> ChannelSettings:
    def listed(blob: str | None) -> list[str] | None:
        return None if blob is None else [str(v) for v in json.loads(blob)]

    return ChannelSettings(
        team_id=row.team_id,
        channel_id=row.channel_id,
        collections=listed(row.collections_json),
        experts=listed(row.experts_json),
        approvers=listed(row.approvers_json),
        silent=row.silent,
        notify=row.notify,
        confirm=row.confirm,
        answer_mode=row.answer_mode,  # type: ignore[arg-type]
        reply_mode=row.reply_mode,  # type: ignore[arg-type]
        follow_ups=row.follow_ups,
        updated_by=row.updated_by,
        updated_at=row.updated_at,
    )


def _columns(values: dict[str, Any]) -> dict[str, Any]:
    """The row's columns for the settable fields' values."""
    columns = {f"{name}_json": _dump(values[name]) for name in LIST_FIELDS}
    columns.update({name: values[name] for name in FIELDS if name not in LIST_FIELDS})
    return columns


class SqlChannelSettings(SqlStore):
    """Channel settings and their history; reminders sent to a channel's experts."""

    async def get(self, channel_id: str, *, team_id: str = "") -> ChannelSettings | None:
        """The channel's settings; None when nothing was ever set for it."""
        async with self._reads.begin() as session:
            row = await session.get(ChannelSettingsRow, (team_id, channel_id))
        return None if row is None else _settings_of(row)

    async def all_channels(self, *, team_id: str | None = None) -> list[ChannelSettings]:
        """Every channel with settings (of one workspace when `team_id` is given)."""
        query = select(ChannelSettingsRow).order_by(
            ChannelSettingsRow.team_id, ChannelSettingsRow.channel_id
        )
        if team_id is not None:
            query = query.where(ChannelSettingsRow.team_id == team_id)
        rows = await self._read_all(query)
        return [_settings_of(r) for r in rows]

    @retried_write
    async def update(
        self, channel_id: str, update: ChannelUpdate, *, changed_by: str, team_id: str = ""
    ) -> ChannelSettings:
        """Apply `update` and record each field that changed; returns the new settings."""
        now = utcnow()
        changes = update.changes()
        async with self._sessions.begin() as session:
            if any(value is not None for value in changes.values()):
                # the row exists before it is locked: concurrent first changes queue up
                await session.execute(
                    self._insert(ChannelSettingsRow)
                    .values(
                        team_id=team_id,
                        channel_id=channel_id,
                        updated_by=changed_by,
                        updated_at=now,
                    )
                    .on_conflict_do_nothing(
                        index_elements=[ChannelSettingsRow.team_id, ChannelSettingsRow.channel_id]
                    )
                )
            query = select(ChannelSettingsRow).where(
                ChannelSettingsRow.team_id == team_id, ChannelSettingsRow.channel_id == channel_id
            )
            if self._engine.dialect.name == "postgresql":
                query = query.with_for_update()
            row = await session.scalar(query)
            before = (
                _settings_of(row).values()
                if row is not None
                else ChannelSettings(channel_id=channel_id).values()
            )
            after = {**before, **changes}
            changed = [name for name in FIELDS if before[name] != after[name]]
            if not changed:
                return (
                    _settings_of(row)
                    if row is not None
                    else ChannelSettings(team_id=team_id, channel_id=channel_id)
                )
            if row is None:
                row = ChannelSettingsRow(team_id=team_id, channel_id=channel_id)
                session.add(row)
            for column, value in _columns(after).items():
                setattr(row, column, value)
            row.updated_by, row.updated_at = changed_by, now
            session.add_all(
                ChannelSettingChangeRow(
                    team_id=team_id,
                    channel_id=channel_id,
                    field=name,
                    old_value=_dump(before[name]),
                    new_value=_dump(after[name]),
                    changed_by=changed_by,
                    changed_at=now,
                )
                for name in changed
            )
            await session.flush()
            return _settings_of(row)

    async def history(
        self, channel_id: str, *, team_id: str = "", limit: int = 20
    ) -> list[ChannelSettingChange]:
        """The channel's newest changes first."""
        query = (
            select(ChannelSettingChangeRow)
            .where(
                ChannelSettingChangeRow.team_id == team_id,
                ChannelSettingChangeRow.channel_id == channel_id,
            )
            .order_by(ChannelSettingChangeRow.changed_at.desc(), ChannelSettingChangeRow.id.desc())
            .limit(limit)
        )
        return [_change_of(r) for r in await self._read_all(query)]

    @retried_write
    async def claim_reminder(
        self, intervention_id: str, *, run_id: str, now: datetime | None = None
    ) -> bool:
        """True for the one caller (of any replica) that is to send this escalation's
        reminder; False once it was claimed."""
        stmt = (
            self._insert(ExpertReminderRow)
            .values(intervention_id=intervention_id, run_id=run_id, reminded_at=now or utcnow())
            .on_conflict_do_nothing(index_elements=[ExpertReminderRow.intervention_id])
        )
        async with self._sessions.begin() as session:
            result = await session.execute(stmt)
        return rowcount(result) == 1

    @retried_write
    async def release_reminder(self, intervention_id: str) -> None:
        """Give a claim back when its reminder could not be sent: the next pass tries."""
        async with self._sessions.begin() as session:
            await session.execute(
                delete(ExpertReminderRow).where(
                    ExpertReminderRow.intervention_id == intervention_id
                )
            )
