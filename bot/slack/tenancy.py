"""Which workspace's token a Web API call uses (issue 21, OAuth mode).

In OAuth mode GRACE holds one installation per workspace. The code that calls Slack —
the inbox processors, the outbox, the plan stream, the assistant status line — is the
same for every team, and most of it runs long after the request that started it (a
retry, the sweeper, recovery after a restart). Each of those entry points declares
whose work it does (`bot.slack.acting.acting_for`), and the one shared client
(`TeamRoutedClient`) picks that team's bot token from the installation store for each
call, rotating it first when it is about to expire. Single-workspace mode
(SLACK_BOT_TOKEN) never builds a routed client.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.oauth.installation_store import Bot
from slack_sdk.oauth.installation_store.async_installation_store import AsyncInstallationStore
from slack_sdk.oauth.token_rotation.async_rotator import AsyncTokenRotator
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.web.async_slack_response import AsyncSlackResponse

from bot.slack.acting import TeamRef, current_team
from bot.slack.app import SanitisingWebClient

log = logging.getLogger(__name__)


class TeamNotInstalled(LookupError):
    """No live installation for the team (never installed, uninstalled, revoked)."""


class TeamTokens:
    """A team's bot token from the installation store, rotated (and the new tokens stored)
    when it expires within `rotate_minutes`. One rotation per team at a time."""

    def __init__(
        self,
        store: AsyncInstallationStore,
        *,
        rotator: AsyncTokenRotator | None,
        rotate_minutes: int = 120,
    ) -> None:
        self._store = store
        self._rotator = rotator
        self._rotate_minutes = rotate_minutes
        self._locks: dict[TeamRef, asyncio.Lock] = {}

    async def bot_token(self, team: TeamRef) -> str:
        bot = await self._find(team)
        if self._rotator is None or not self._expiring(bot):
            return str(bot.bot_token)
        async with self._locks.setdefault(team, asyncio.Lock()):
            bot = await self._find(team)  # another call may have rotated it meanwhile
            fresh = await self._rotator.perform_bot_token_rotation(
                bot=bot, minutes_before_expiration=self._rotate_minutes
            )
            if fresh is not None:
                await self._store.async_save_bot(fresh)
                log.info("rotated the bot token of team %s", team.team_id)
                bot = fresh
            return str(bot.bot_token)

    async def _find(self, team: TeamRef) -> Bot:
        bot = await self._store.async_find_bot(
            enterprise_id=team.enterprise_id,
            team_id=team.team_id,
            is_enterprise_install=team.org_wide,
        )
        if bot is None or not bot.bot_token:
            raise TeamNotInstalled(team.team_id or team.enterprise_id or "?")
        return bot

    def _expiring(self, bot: Bot) -> bool:
        expires = bot.bot_token_expires_at
        return bool(bot.bot_refresh_token) and (
            expires is not None and expires <= time.time() + self._rotate_minutes * 60
        )


class TeamRoutedClient(SanitisingWebClient):
    """The app's one Web API client in OAuth mode: each call goes out with the bot token
    of the team being acted for (`acting_for`). A call that names its own token, or is
    made for no team (the OAuth exchange itself), goes out as it is."""

    def __init__(
        self,
        tokens: TeamTokens,
        *,
        base_url: str,
        timeout: int = 30,
        retry_handlers: list[Any] | None = None,
    ) -> None:
        super().__init__(
            token=None, base_url=base_url, timeout=timeout, retry_handlers=retry_handlers
        )
        self.tokens = tokens

    def variant(self, *, timeout: float, retries: bool) -> TeamRoutedClient:
        """The same routing with another timeout and retry policy."""
        return TeamRoutedClient(
            self.tokens,
            base_url=self.base_url,
            timeout=max(1, round(timeout)),
            retry_handlers=self.retry_handlers if retries else [],
        )

    async def api_call(  # type: ignore[override]
        self, api_method: str, **kwargs: Any
    ) -> AsyncSlackResponse:
        team = current_team()
        if team is None or _carries_credentials(kwargs):
            return await super().api_call(api_method, **kwargs)
        try:
            token = await self.tokens.bot_token(team)
        except TeamNotInstalled:
            # What Slack itself answers for an uninstalled app: a permanent refusal.
            raise SlackApiError(
                f"GRACE is not installed in team {team.team_id or team.enterprise_id}",
                _refusal(self, api_method, "account_inactive"),
            ) from None
        client = SanitisingWebClient(
            token=token,
            base_url=self.base_url,
            timeout=self.timeout,
            retry_handlers=self.retry_handlers,
        )
        return await client.api_call(api_method, **kwargs)


def _carries_credentials(kwargs: dict[str, Any]) -> bool:
    """A call with its own token, or the app's client id and secret (oauth.v2.access)."""
    if kwargs.get("auth") is not None:
        return True
    return any(isinstance(part, dict) and "token" in part for part in kwargs.values())


def _refusal(client: AsyncWebClient, method: str, error: str) -> AsyncSlackResponse:
    return AsyncSlackResponse(
        client=client,
        http_verb="POST",
        api_url=f"{client.base_url}{method}",
        req_args={},
        data={"ok": False, "error": error},
        headers={},
        status_code=200,
    )
