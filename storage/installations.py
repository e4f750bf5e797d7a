"""Slack installations and OAuth states in our database (issue 21): slack_sdk's async
installation-store and OAuth-state-store interfaces, which Bolt's OAuth flow and its
`authorize` call, on SQL.

One row per workspace — or per Enterprise Grid org for an org-wide install (`team_key`
""), the latest install winning. Every token (bot, refresh, installer's) lives only in
`sealed`, encrypted (storage/sealing.py). An uninstall or a revocation empties `sealed`
at once and stamps `uninstalled_at`: the row stays so the team's data can be deleted
when its retention runs out (storage/team_data.py), or at once with `grace teams forget`.
"""

from __future__ import annotations

import json
import logging
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from slack_sdk.oauth.installation_store import Bot, Installation
from slack_sdk.oauth.installation_store.async_installation_store import AsyncInstallationStore
from slack_sdk.oauth.state_store.async_state_store import AsyncOAuthStateStore
from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from agent.schemas import utcnow
from storage.db import WriteHealth, retried_write
from storage.sealing import Sealer, SealError
from storage.sql import SqlStore, rowcount
from storage.tables import InstallationRow, OAuthStateRow

log = logging.getLogger(__name__)

_BOT_FIELDS = (
    "bot_token",
    "bot_id",
    "bot_user_id",
    "bot_scopes",
    "bot_refresh_token",
    "bot_token_expires_at",
)


@dataclass(frozen=True)
class InstalledTeam:
    """What `grace teams` shows of an installation: never a token."""

    enterprise_id: str | None
    team_id: str | None
    team_name: str | None
    enterprise_name: str | None
    is_enterprise_install: bool
    installed_at: datetime
    uninstalled_at: datetime | None

    @property
    def key(self) -> str:
        """The id `grace teams forget` takes: the team id, or the org's id for an
        org-wide install."""
        return self.team_id or self.enterprise_id or ""


def _plain(values: dict[str, Any]) -> dict[str, Any]:
    return {k: v.isoformat() if isinstance(v, datetime) else v for k, v in values.items()}


def _keys(enterprise_id: str | None, team_id: str | None, org_wide: bool) -> tuple[str, str]:
    return (enterprise_id or "", "" if org_wide else team_id or "")


class SqlInstallationStore(SqlStore, AsyncInstallationStore):
    """`AsyncInstallationStore` on our database, tokens sealed with `sealer`."""

    def __init__(
        self, engine: AsyncEngine, sealer: Sealer | None, *, health: WriteHealth | None = None
    ) -> None:
        """Without a `sealer` the store lists and forgets teams but reads no token."""
        super().__init__(engine, health=health)
        self._sealer = sealer

    @property
    def sealer(self) -> Sealer:
        if self._sealer is None:
            raise SealError("GRACE_ENCRYPTION_KEY is not set: the tokens cannot be read")
        return self._sealer

    @property
    def logger(self) -> logging.Logger:
        return log

    # ------------------------------------------------------------------ writes

    @retried_write
    async def async_save(self, installation: Installation) -> None:
        """Store (or replace) the workspace's installation; a reinstall after an
        uninstall revives the team (its retention clock stops)."""
        await self._put(installation.to_dict(), installation.is_enterprise_install or False)

    @retried_write
    async def async_save_bot(self, bot: Bot) -> None:
        """Store a bot's new tokens (after a rotation), keeping the installer's fields."""
        org_wide = bot.is_enterprise_install or False
        found = await self._row(bot.enterprise_id, bot.team_id, org_wide)
        values = self._open(found) if found is not None else {"user_id": ""}
        fresh = bot.to_dict()
        values.update({k: fresh.get(k) for k in _BOT_FIELDS})
        for k in ("app_id", "enterprise_id", "enterprise_name", "team_id", "team_name"):
            values[k] = fresh.get(k) or values.get(k)
        values.setdefault("installed_at", fresh.get("installed_at"))
        await self._put(values, org_wide)

    async def _put(self, values: dict[str, Any], org_wide: bool) -> None:
        now = utcnow()
        enterprise_key, team_key = _keys(
            values.get("enterprise_id"), values.get("team_id"), org_wide
        )
        expires = values.get("bot_token_expires_at")
        row = {
            "is_enterprise_install": org_wide,
            "team_name": values.get("team_name"),
            "enterprise_name": values.get("enterprise_name"),
            "bot_user_id": values.get("bot_user_id"),
            "installer_user_id": values.get("user_id") or None,
            "sealed": self.sealer.seal(json.dumps(_plain(values))),
            "bot_token_expires_at": expires if isinstance(expires, datetime) else None,
            "updated_at": now,
            "uninstalled_at": None,
        }
        stmt = self._insert(InstallationRow).values(
            enterprise_key=enterprise_key, team_key=team_key, installed_at=now, **row
        )
        stmt = stmt.on_conflict_do_update(
            index_elements=[InstallationRow.enterprise_key, InstallationRow.team_key], set_=row
        )
        async with self._sessions.begin() as session:
            await session.execute(stmt)

    @retried_write
    async def async_delete_bot(
        self,
        *,
        enterprise_id: str | None,
        team_id: str | None,
        is_enterprise_install: bool | None = False,
    ) -> None:
        await self.revoke(enterprise_id, team_id, bool(is_enterprise_install))

    @retried_write
    async def async_delete_installation(
        self,
        *,
        enterprise_id: str | None,
        team_id: str | None,
        user_id: str | None = None,
        is_enterprise_install: bool | None = False,
    ) -> None:
        if user_id is None:
            await self.revoke(enterprise_id, team_id, bool(is_enterprise_install))
            return
        await self.drop_user_token(enterprise_id, team_id, user_id, bool(is_enterprise_install))

    async def async_delete_all(
        self,
        *,
        enterprise_id: str | None,
        team_id: str | None,
        is_enterprise_install: bool | None = False,
    ) -> None:
        await self.async_delete_installation(
            enterprise_id=enterprise_id,
            team_id=team_id,
            is_enterprise_install=is_enterprise_install,
        )

    async def revoke(
        self, enterprise_id: str | None, team_id: str | None, org_wide: bool = False
    ) -> bool:
        """Forget the tokens now (app uninstalled, bot tokens revoked); the row stays, with
        `uninstalled_at`, until the team's data is deleted. False when nothing was installed."""
        found = await self._row(enterprise_id, team_id, org_wide, live=False)
        if found is None or found.sealed is None:
            return False
        stmt = (
            update(InstallationRow)
            .where(
                InstallationRow.enterprise_key == found.enterprise_key,
                InstallationRow.team_key == found.team_key,
            )
            .values(sealed=None, bot_token_expires_at=None, uninstalled_at=utcnow())
        )
        async with self._sessions.begin() as session:
            return rowcount(await session.execute(stmt)) == 1

    async def drop_user_token(
        self, enterprise_id: str | None, team_id: str | None, user_id: str, org_wide: bool = False
    ) -> None:
        """A person's own token was revoked: the bot's stay."""
        found = await self._row(enterprise_id, team_id, org_wide, live=False)
        if found is None or found.sealed is None or found.installer_user_id != user_id:
            return
        values = self._open(found)
        for key in ("user_token", "user_refresh_token", "user_token_expires_at"):
            values[key] = None
        await self._put(values, found.is_enterprise_install)

    @retried_write
    async def remove(self, enterprise_key: str, team_key: str) -> None:
        """Delete the row itself (its team's data is gone)."""
        stmt = delete(InstallationRow).where(
            InstallationRow.enterprise_key == enterprise_key,
            InstallationRow.team_key == team_key,
        )
        async with self._sessions.begin() as session:
            await session.execute(stmt)

    # ------------------------------------------------------------------ reads

    async def async_find_bot(
        self,
        *,
        enterprise_id: str | None,
        team_id: str | None,
        is_enterprise_install: bool | None = False,
    ) -> Bot | None:
        found = await self._row(enterprise_id, team_id, bool(is_enterprise_install))
        if found is None:
            return None
        values = self._open(found)
        if not values.get("bot_token"):
            return None
        fields = (
            "app_id",
            "enterprise_id",
            "enterprise_name",
            "team_id",
            "team_name",
            *_BOT_FIELDS,
            "is_enterprise_install",
            "installed_at",
        )
        return Bot(**{k: values.get(k) for k in fields})

    async def async_find_installation(
        self,
        *,
        enterprise_id: str | None,
        team_id: str | None,
        user_id: str | None = None,
        is_enterprise_install: bool | None = False,
    ) -> Installation | None:
        """The workspace's latest installation; with `user_id`, only when that person
        installed it (GRACE asks for no user scopes: nobody else has a token here)."""
        found = await self._row(enterprise_id, team_id, bool(is_enterprise_install))
        if found is None or (user_id is not None and found.installer_user_id != user_id):
            return None
        values = self._open(found)
        standard = set(Installation.__init__.__code__.co_varnames) - {"self", "custom_values"}
        known = {k: v for k, v in values.items() if k in standard}
        known.setdefault("user_id", "")
        extra = {k: v for k, v in values.items() if k not in standard}
        return Installation(**known, custom_values=extra)

    async def teams(self) -> list[InstalledTeam]:
        """Every installation, current or uninstalled, oldest first."""
        query = select(InstallationRow).order_by(InstallationRow.installed_at)
        async with self._reads.begin() as session:
            rows = (await session.scalars(query)).all()
        return [_team(row) for row in rows]

    async def find_team(self, key: str) -> InstalledTeam | None:
        """The installation of a team id, or of an org id for an org-wide install."""
        for team in await self.teams():
            if key in (team.team_id, team.enterprise_id if team.team_id is None else None):
                return team
        return None

    async def uninstalled_before(self, cutoff: datetime) -> list[InstalledTeam]:
        """The installations uninstalled before `cutoff`, whose data may go — except a
        workspace uninstalled on its own that its org's live org-wide install still
        serves (its data is in use)."""
        query = select(InstallationRow).where(InstallationRow.uninstalled_at <= cutoff)
        live_orgs = select(InstallationRow.enterprise_key).where(
            InstallationRow.team_key == "", InstallationRow.sealed.is_not(None)
        )
        async with self._reads.begin() as session:
            rows = (await session.scalars(query)).all()
            served = set((await session.scalars(live_orgs)).all())
        return [_team(row) for row in rows if not (row.team_key and row.enterprise_key in served)]

    async def _row(
        self, enterprise_id: str | None, team_id: str | None, org_wide: bool, *, live: bool = True
    ) -> InstallationRow | None:
        """The installation that acts for this team: its own (team ids are unique across
        Slack, so the enterprise id is only a tie-break), else its org's. With `live`, a
        revoked row does not act, so a workspace uninstalled on its own falls through to an
        org-wide install made later; without it, the team's own row is found even revoked
        (so revoking it again never reaches the org's install)."""
        async with self._reads.begin() as session:
            if team_id and not org_wide:
                rows = (
                    await session.scalars(
                        select(InstallationRow).where(InstallationRow.team_key == team_id)
                    )
                ).all()
                mine = sorted(rows, key=lambda r: r.enterprise_key != (enterprise_id or ""))
                if mine and (mine[0].sealed is not None or not live):
                    return mine[0]
            if enterprise_id:
                row = await session.get(InstallationRow, (enterprise_id, ""))
                if row is not None and (row.sealed is not None or not live):
                    return row
            return None

    def _open(self, row: InstallationRow) -> dict[str, Any]:
        return dict(json.loads(self.sealer.open(row.sealed or "")))


def _team(row: InstallationRow) -> InstalledTeam:
    return InstalledTeam(
        enterprise_id=row.enterprise_key or None,
        team_id=row.team_key or None,
        team_name=row.team_name,
        enterprise_name=row.enterprise_name,
        is_enterprise_install=row.is_enterprise_install,
        installed_at=row.installed_at,
        uninstalled_at=row.uninstalled_at,
    )


class SqlOAuthStateStore(SqlStore, AsyncOAuthStateStore):
    """`AsyncOAuthStateStore` on our database: a random state per install page, valid
    for `expiration_seconds`, good for one callback only (consuming deletes it)."""

    def __init__(
        self,
        engine: AsyncEngine,
        *,
        expiration_seconds: int = 600,
        health: WriteHealth | None = None,
    ) -> None:
        super().__init__(engine, health=health)
        self.expiration_seconds = expiration_seconds

    @property
    def logger(self) -> logging.Logger:
        return log

    @retried_write
    async def async_issue(self, *args: Any, **kwargs: Any) -> str:
        state = secrets.token_urlsafe(32)
        now = utcnow()
        async with self._sessions.begin() as session:
            await session.execute(delete(OAuthStateRow).where(OAuthStateRow.expires_at <= now))
            session.add(
                OAuthStateRow(
                    state=state, expires_at=now + timedelta(seconds=self.expiration_seconds)
                )
            )
        return state

    @retried_write
    async def async_consume(self, state: str) -> bool:
        """True once for a state this store issued and that has not expired."""
        if not state or len(state) > 64:
            return False
        stmt = delete(OAuthStateRow).where(
            OAuthStateRow.state == state, OAuthStateRow.expires_at > utcnow()
        )
        async with self._sessions.begin() as session:
            return rowcount(await session.execute(stmt)) == 1
