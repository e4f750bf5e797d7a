"""The Slack app factory: takes its dependencies, returns a Bolt `AsyncApp`."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.authorization import AuthorizeResult
from slack_bolt.logger.messages import (
    warning_client_prioritized_and_token_skipped,
    warning_token_skipped,
)
from slack_bolt.oauth.async_oauth_settings import AsyncOAuthSettings
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
)
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.web.async_slack_response import AsyncSlackResponse

from blocks.sanitize import scrub
from bot.slack.acting import ActingApp
from bot.slack.deps import BotDeps
from bot.slack.identity import fixed_authorize
from bot.slack.intake import Intake, NotStored
from bot.slack.listeners import register_listeners

log = logging.getLogger(__name__)


class _ClientTokenNotice(logging.Filter):
    """Bolt warns that SLACK_BOT_TOKEN "will be unused" whenever it is given a client
    (or an `authorize`); ours is built from that very token (with the base URL and retry
    handlers we need), so the warning would only make operators look for a problem that
    is not there."""

    _NOISE = (warning_client_prioritized_and_token_skipped(), warning_token_skipped())

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() not in self._NOISE


_BOLT_LOG = logging.getLogger("slack_bolt")
_BOLT_LOG.addFilter(_ClientTokenNotice())


def make_slack_client(
    token: str, *, base_url: str | None = None, timeout: float = 30.0, retries: bool = True
) -> AsyncWebClient:
    """A Web API client that waits out 429s (Retry-After) and retries dropped connections.

    `retries=False` for the outbox deliverer, which retries whole passes itself (for as
    long as the delivery deadline, across restarts) and must not post again blindly."""
    url = base_url or AsyncWebClient.BASE_URL
    if not url.endswith("/"):
        url += "/"
    handlers = (
        [
            AsyncRateLimitErrorRetryHandler(max_retry_count=5),
            AsyncConnectionErrorRetryHandler(max_retry_count=2),
        ]
        if retries
        else []
    )
    return SanitisingWebClient(
        token=token, base_url=url, timeout=max(1, round(timeout)), retry_handlers=handlers
    )


class SanitisingWebClient(AsyncWebClient):
    """Every Web API call's payload — `text`, blocks, stream chunks, views — passes the
    one output sanitiser (`blocks.sanitize.scrub`: no bidi or zero-width characters),
    whichever builder made it."""

    async def api_call(  # type: ignore[override]
        self,
        api_method: str,
        *,
        http_verb: str = "POST",
        files: dict[str, Any] | None = None,
        data: Any = None,
        params: dict[str, Any] | None = None,
        json: dict[str, Any] | None = None,
        headers: dict[str, Any] | None = None,
        auth: dict[str, Any] | None = None,
    ) -> AsyncSlackResponse:
        return await super().api_call(
            api_method,
            http_verb=http_verb,
            files=files,
            data=scrub(data) if isinstance(data, dict) else data,
            params=scrub(params),
            json=scrub(json),
            headers=headers,
            auth=auth,
        )


async def _ignore_event(event: dict[str, Any]) -> None:
    """Events we do not handle are still acked with 200: Slack counts a 404 as a failed
    delivery (and retries, and may disable the subscription)."""


def listener_failed(error: Exception) -> None:
    """Log a listener's failure; its request is not acknowledged (500): Slack delivers it
    again, and the inbox drops the retry if the first write landed after all."""
    if isinstance(error, NotStored):
        log.warning("a Slack request could not be stored in time; not acknowledged")
        return
    log.error("a Slack listener failed", exc_info=error)


def build_app(
    deps: BotDeps,
    intake: Intake,
    *,
    client: AsyncWebClient,
    signing_secret: str | None = None,
    identity: AuthorizeResult | None = None,
    oauth_settings: AsyncOAuthSettings | None = None,
) -> AsyncApp:
    """`signing_secret` is required for HTTP mode; Socket Mode needs none. With
    `identity` (see `bot/identity.py`) no request makes Bolt call `auth.test`; with
    `oauth_settings` (OAuth mode, bot/slack/installs.py) each request is authorized
    from its workspace's installation."""
    return bolt_app(
        lambda app: register_listeners(app, deps, intake),
        client=client,
        signing_secret=signing_secret,
        identity=identity,
        oauth_settings=oauth_settings,
    )


def bolt_app(
    register: Callable[[AsyncApp], None],
    *,
    client: AsyncWebClient,
    signing_secret: str | None = None,
    identity: AuthorizeResult | None = None,
    oauth_settings: AsyncOAuthSettings | None = None,
    signature_checked: bool = False,
) -> AsyncApp:
    """The Bolt app with the listeners `register` adds (all of them: `build_app`; the
    ones that only store a request: `grace serve`'s front, bot/slack/front.py).

    `signature_checked`: every request reaches this app through
    `runners.checked_request`, whose guard (bot/slack/http_guard.py) has verified Slack's
    signature on the raw bytes, so Bolt does not verify it a second time (the front's ack
    path; a forged request is refused by the guard with a 401 before Bolt sees it)."""
    # OAuth mode: each request's listeners act for its team (bot/slack/acting.py)
    app_class = AsyncApp if oauth_settings is None else ActingApp
    app = app_class(
        client=client,
        authorize=fixed_authorize(identity) if identity is not None else None,
        oauth_settings=oauth_settings,
        signing_secret=signing_secret,
        request_verification_enabled=signing_secret is not None and not signature_checked,
        # Listeners only check, de-duplicate and spawn a tracked task, so running them
        # before the response keeps the ack fast and makes "work after ack" observable.
        process_before_response=True,
        raise_error_for_unhandled_request=False,
        logger=_BOLT_LOG,
    )
    register(app)

    @app.error
    async def on_listener_error(error: Exception) -> None:
        listener_failed(error)

    app.event(re.compile(".*"))(_ignore_event)  # last: only what nothing else matched
    return app
