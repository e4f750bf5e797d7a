"""People's names as Slack shows them, for text that names a person in words.

A mention (`<@U0ALICE>`) renders as the name only in mrkdwn Slack formats itself; a
notification, a streamed answer or a label stored with a run would show the raw id.
`PersonNames` asks `users.info` once per person and remembers the answer."""

from __future__ import annotations

import logging

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

log = logging.getLogger(__name__)


class PersonNames:
    """Display names by user id, cached for the life of the process (names seldom change,
    and a stale one only labels a citation)."""

    def __init__(self, client: AsyncWebClient) -> None:
        self._client = client
        self._names: dict[str, str] = {}

    async def display_name(self, user_id: str) -> str | None:
        """The person's display name (else real name, else handle); None when Slack
        cannot say — the caller falls back to the id."""
        if user_id in self._names:
            return self._names[user_id]
        try:
            response = await self._client.users_info(user=user_id)
        except (SlackApiError, OSError, TimeoutError) as exc:
            log.warning("users.info for %s failed: %s", user_id, exc)
            return None
        user = response.get("user") or {}
        profile = user.get("profile") or {}
        for candidate in (profile.get("display_name"), profile.get("real_name"), user.get("name")):
            if isinstance(candidate, str) and candidate.strip():
                name = " ".join(candidate.split())
                self._names[user_id] = name
                return name
        return None
