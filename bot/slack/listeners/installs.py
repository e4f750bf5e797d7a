"""Uninstalls (issue 21, OAuth mode): `app_uninstalled` and `tokens_revoked` forget the
workspace's tokens at once. Its data stays for GRACE_SLACK__UNINSTALLED_RETENTION_DAYS,
then the sweeper deletes it (bot/service/teams.py)."""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt.async_app import AsyncApp, AsyncBoltContext

from bot.slack.deps import BotDeps

log = logging.getLogger(__name__)


def register(app: AsyncApp, deps: BotDeps) -> None:
    installs = deps.installations
    if installs is None:  # single-workspace mode: nothing is stored to forget
        return

    async def forget(context: AsyncBoltContext, why: str) -> None:
        org_wide = bool(context.is_enterprise_install)
        if await installs.revoke(context.enterprise_id, context.team_id, org_wide):
            log.warning(
                "%s: forgot the tokens of team %s; its data is deleted after %g days",
                why,
                context.team_id or context.enterprise_id,
                deps.settings.slack.uninstalled_retention_days,
            )

    @app.event("app_uninstalled")
    async def on_uninstalled(context: AsyncBoltContext) -> None:
        await forget(context, "GRACE was uninstalled")

    @app.event("tokens_revoked")
    async def on_revoked(context: AsyncBoltContext, event: dict[str, Any]) -> None:
        tokens = event.get("tokens") or {}
        if tokens.get("bot"):
            await forget(context, "the bot's tokens were revoked")
            return
        for user in tokens.get("oauth") or []:
            await installs.drop_user_token(
                context.enterprise_id,
                context.team_id,
                str(user),
                bool(context.is_enterprise_install),
            )
