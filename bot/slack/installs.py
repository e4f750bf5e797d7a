"""OAuth mode (issue 21): GRACE installable to many workspaces with Bolt's own OAuth
flow, installations and OAuth states in our database (storage/installations.py), each
request and each run acting with its own team's token (bot/slack/tenancy.py).

`grace serve` is in OAuth mode when SLACK_CLIENT_ID and SLACK_CLIENT_SECRET are set and
SLACK_BOT_TOKEN is not; GRACE_ENCRYPTION_KEY must then hold a Fernet key (tokens are
stored encrypted with it), or the bot refuses to start.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any
from urllib.parse import urljoin

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.async_app import AsyncApp
from slack_bolt.oauth.async_oauth_settings import AsyncOAuthSettings
from slack_sdk.oauth.token_rotation.async_rotator import AsyncTokenRotator
from slack_sdk.web.async_client import AsyncWebClient

from agent.errors import InvalidInputError
from bot.service.settings import Settings
from bot.slack.acting import TeamRef, acting_for
from bot.slack.app import make_slack_client
from bot.slack.intake import FollowUp, Handler, Received
from bot.slack.items import Click, InboundItem, InboxKind, InThread
from bot.slack.tenancy import TeamRoutedClient, TeamTokens
from storage.db import WriteHealth
from storage.installations import SqlInstallationStore, SqlOAuthStateStore
from storage.sealing import Sealer, SealError

log = logging.getLogger(__name__)

INSTALL_PATH = "/slack/install"
REDIRECT_PATH = "/slack/oauth_redirect"
MANIFEST_BOT_SCOPES = (
    "app_mentions:read",
    "assistant:write",
    "channels:history",
    "channels:read",
    "groups:history",
    "groups:read",
    "im:history",
    "im:read",
    "chat:write",
    "commands",
    "users:read",
    "usergroups:read",
)
"""manifest.yml's bot scopes (tests/test_manifest.py keeps the two equal): what an
install asks for unless SLACK_SCOPES says otherwise."""
ROTATE_MINUTES = 120
"""Refresh a rotating token this long before it expires (Bolt's default)."""
STATE_SECONDS = 600
"""How long an install page's `state` is good for."""


def authorize_url(api_url: str | None) -> str | None:
    """Slack's authorize page beside the Web API it is told to use: `…/oauth/v2/authorize`
    next to `…/api/` (the simulator of `grace dev --workspaces 2`); None: Slack's own."""
    return urljoin(api_url, "../oauth/v2/authorize") if api_url else None


def sealer_of(settings: Settings) -> Sealer:
    """The key the tokens are sealed with; an `InvalidInputError` (exit 2) without one."""
    key = settings.encryption_key
    if key is None or not key.get_secret_value().strip():
        raise InvalidInputError(
            "OAuth mode (SLACK_CLIENT_ID and SLACK_CLIENT_SECRET) needs GRACE_ENCRYPTION_KEY, "
            "a Fernet key to encrypt the workspaces' tokens: see docs/distributing.md."
        )
    try:
        return Sealer(key.get_secret_value())
    except SealError as exc:
        raise InvalidInputError(str(exc)) from None


@dataclass
class OAuthParts:
    """What OAuth mode adds to the bot: the stores, Bolt's settings, the routed client."""

    installations: SqlInstallationStore
    states: SqlOAuthStateStore
    settings: AsyncOAuthSettings
    client: TeamRoutedClient


def build_oauth(
    settings: Settings, engine: Any, *, sealer: Sealer, health: WriteHealth | None = None
) -> OAuthParts:
    assert settings.slack_client_id is not None and settings.slack_client_secret is not None
    client_id = settings.slack_client_id
    secret = settings.slack_client_secret.get_secret_value()
    installations = SqlInstallationStore(engine, sealer, health=health)
    states = SqlOAuthStateStore(engine, expiration_seconds=STATE_SECONDS, health=health)
    base = make_slack_client("", base_url=settings.slack_api_url)  # URL and retry policy
    rotator = AsyncTokenRotator(
        client_id=client_id, client_secret=secret, client=AsyncWebClient(base_url=base.base_url)
    )
    oauth_settings = AsyncOAuthSettings(
        client_id=client_id,
        client_secret=secret,
        scopes=list(settings.slack_scopes or MANIFEST_BOT_SCOPES),
        redirect_uri=settings.slack_redirect_uri,
        install_path=INSTALL_PATH,
        redirect_uri_path=REDIRECT_PATH,
        authorization_url=authorize_url(settings.slack_api_url),
        installation_store=installations,
        installation_store_bot_only=True,
        state_store=states,
        state_expiration_seconds=STATE_SECONDS,
        token_rotation_expiration_minutes=ROTATE_MINUTES,
    )
    # Bolt's authorize rotates with a client of its own, aimed at slack.com: aim it at
    # the same Slack as everything else (SLACK_API_URL).
    oauth_settings.authorize.token_rotator = rotator  # type: ignore[attr-defined]
    client = TeamRoutedClient(
        TeamTokens(installations, rotator=rotator, rotate_minutes=ROTATE_MINUTES),
        base_url=base.base_url,
        timeout=base.timeout,
        retry_handlers=base.retry_handlers,
    )
    return OAuthParts(
        installations=installations, states=states, settings=oauth_settings, client=client
    )


# ---------------------------------------------------------------------- HTTP


def add_routes(web_app: web.Application, app: AsyncApp) -> None:
    """`GET /slack/install` (the Add to Slack page, a fresh single-use `state`) and
    `GET /slack/oauth_redirect` (Slack sends the installer back here with a code)."""
    flow = app.oauth_flow
    if flow is None:
        return

    async def install(request: web.Request) -> web.Response:
        return await to_aiohttp_response(
            await flow.handle_installation(await to_bolt_request(request))
        )

    async def redirect(request: web.Request) -> web.Response:
        response = await flow.handle_callback(await to_bolt_request(request))
        log.info("an install finished with HTTP %s", response.status)
        return await to_aiohttp_response(response)

    web_app.router.add_get(INSTALL_PATH, install)
    web_app.router.add_get(REDIRECT_PATH, redirect)


# ---------------------------------------------------------------------- whose work


def team_of_item(item: InboundItem) -> TeamRef | None:
    """The team a stored request came from (None for a row written before issue 21)."""
    if isinstance(item, InThread):
        return TeamRef(team_id=item.team, enterprise_id=item.enterprise)
    if isinstance(item, Click):
        team = item.body.get("team") or {}
        enterprise = item.body.get("enterprise") or {}
        return TeamRef(
            team_id=team.get("id"),
            enterprise_id=enterprise.get("id"),
            org_wide=bool(item.body.get("is_enterprise_install")),
        )
    if item.team is None:
        return None
    return TeamRef(team_id=item.team, enterprise_id=item.enterprise)


async def _acting(
    process: Callable[[Received[Any]], Awaitable[FollowUp | None]], received: Received[Any]
) -> FollowUp | None:
    with acting_for(team_of_item(received.item)):
        return await process(received)


def acting_handlers(handlers: Mapping[InboxKind, Handler[Any]]) -> dict[InboxKind, Handler[Any]]:
    """The same handlers, each acting for the team its stored request came from."""
    return {
        kind: Handler(partial(_acting, handler.process), intake_lane=handler.intake_lane)
        for kind, handler in handlers.items()
    }
