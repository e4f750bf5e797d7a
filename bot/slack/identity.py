"""Who the bot is in Slack, asked once at start-up.

Left to itself, Bolt calls `auth.test` lazily on the first request — every request of a
cold burst makes its own call, and while the Web API hangs each waits for it and fails.
Instead `resolve_identity` asks once, with a timeout and a one-line error naming the
URL, and `fixed_authorize` hands the answer to Bolt for every request.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
from slack_bolt.authorization import AuthorizeResult
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from agent.errors import GraceError, InvalidInputError, NetworkError

_TOKEN_ERRORS = {
    "invalid_auth",
    "not_authed",
    "account_inactive",
    "token_revoked",
    "token_expired",
    "not_allowed_token_type",
}


def _error_code(exc: SlackApiError) -> str:
    data = exc.response.data
    if isinstance(data, dict) and data.get("error"):
        return str(data["error"])
    return f"HTTP {exc.response.status_code}"


async def resolve_identity(
    client: AsyncWebClient, *, wait_seconds: float = 10.0
) -> AuthorizeResult:
    """The bot's team, user and bot ids from one `auth.test`, or a `GraceError` that says
    in one line what went wrong and where (a bad token is `InvalidInputError`)."""
    url = client.base_url
    try:
        response = await asyncio.wait_for(client.auth_test(), wait_seconds)
    except TimeoutError:
        raise NetworkError(
            f"Slack's Web API at {url} did not answer auth.test within {wait_seconds:g} s; "
            "check SLACK_API_URL and the network."
        ) from None
    except SlackApiError as exc:
        code = _error_code(exc)
        if code in _TOKEN_ERRORS:
            raise InvalidInputError(
                f"Slack at {url} refused SLACK_BOT_TOKEN ({code}): reinstall the app and "
                "export its Bot User OAuth Token (xoxb-…)."
            ) from None
        raise GraceError(f"auth.test at {url} failed ({code}).") from None
    except (aiohttp.ClientError, OSError) as exc:
        raise NetworkError(
            f"Could not reach Slack's Web API at {url} ({type(exc).__name__}); "
            "check SLACK_API_URL and the network."
        ) from None
    return AuthorizeResult.from_auth_test_response(
        auth_test_response=response, bot_token=client.token
    )


def fixed_authorize(identity: AuthorizeResult) -> Callable[..., Awaitable[AuthorizeResult]]:
    """A Bolt `authorize` function answering every request with `identity` (no API call)."""
    base: dict[str, Any] = dict(identity)

    async def authorize(user_id: str | None) -> AuthorizeResult:
        return AuthorizeResult(**{**base, "user_id": user_id, "user": None})

    return authorize
