"""The run access rule (`agent.access.may_read`) with channel membership checked in
Slack: `conversations.members`, cached briefly per channel; and user-group membership
(`usergroups.users.list`) for experts named as a group.

Membership is never taken from the request (a slash command's `channel_id` says where
the command was typed, not what the user may read). When Slack cannot tell (an error,
a channel the bot is not in), the answer is no.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Protocol

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from agent.access import may_read
from agent.schemas import RunState
from bot.slack.acting import of_acting_team

log = logging.getLogger(__name__)

MEMBERS_TTL = 30.0
"""Seconds a channel's member list is reused: someone removed reads for at most this."""
MAX_PAGES = 20
"""At most this many pages of 1,000 members are read (a 20,000-person channel)."""


class Membership(Protocol):
    async def is_member(self, channel: str, user: str) -> bool: ...


PASSING_ERRORS = frozenset(
    {"internal_error", "fatal_error", "ratelimited", "request_timeout", "service_unavailable"}
)
"""Slack error codes that say nothing about membership: the call may work next time."""


def _passing(exc: Exception) -> bool:
    """A fault that may be gone on the next call, as opposed to Slack's definite no."""
    if not isinstance(exc, SlackApiError):
        return True  # the network, a timeout
    return exc.response.status_code >= 500 or exc.response.get("error") in PASSING_ERRORS


@dataclass
class _CachedSets:
    """Sets of people read from Slack by key, each cached for `ttl` seconds; one read at a
    time per key. An unreadable set is empty (fail closed). Slack's definite refusals
    (`not_in_channel`, `missing_scope`…) are kept like an answer, so a page of runs does
    not ask again for each; a passing fault (a 5xx, `ratelimited`, the network) is not:
    the next check asks again rather than refusing for `ttl` after one failed call."""

    client: AsyncWebClient
    ttl: float = MEMBERS_TTL
    clock: Callable[[], float] = time.monotonic
    _cache: dict[str, tuple[float, frozenset[str]]] = field(default_factory=dict)
    _locks: dict[str, asyncio.Lock] = field(default_factory=dict)

    async def _members(self, key: str) -> frozenset[str]:
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:
            cached = self._cache.get(key)
            if cached is not None and cached[0] > self.clock():
                return cached[1]
            try:
                members = await self._fetch(key)
            except Exception as exc:  # fail closed: an unknown membership grants nothing
                log.warning("could not read the members of %s: %s", key, exc)
                if _passing(exc):
                    return frozenset()
                members = frozenset()
            self._cache[key] = (self.clock() + self.ttl, members)
            return members

    async def _fetch(self, key: str) -> frozenset[str]:
        raise NotImplementedError


@dataclass
class SlackMembers(_CachedSets):
    """`conversations.members`, cached per channel for `ttl` seconds."""

    async def is_member(self, channel: str, user: str) -> bool:
        if not channel or not user:
            return False
        return user in await self._members(channel)

    async def _fetch(self, key: str) -> frozenset[str]:
        found: set[str] = set()
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            response = await self.client.conversations_members(
                channel=key, limit=1000, cursor=cursor
            )
            found.update(str(m) for m in response.get("members") or [])
            cursor = (response.get("response_metadata") or {}).get("next_cursor") or None
            if not cursor:
                break
        return frozenset(found)


@dataclass
class SlackGroups(_CachedSets):
    """`usergroups.users.list`, cached per user group: whether a person may answer as a
    member of an escalation's expert group (someone taken out answers for at most `ttl`)."""

    async def groups_of(
        self, user: str, groups: Collection[str], *, team_id: str | None
    ) -> list[str]:
        """The groups among `groups` that `user` is in, in workspace `team_id` (which
        Slack requires with an org-wide install's token)."""
        if not user:
            return []
        return [group for group in groups if user in await self._group(group, team_id)]

    async def members_of(self, groups: Collection[str], *, team_id: str | None) -> set[str]:
        """Everyone in any of `groups` in workspace `team_id` (none when Slack cannot say)."""
        found: set[str] = set()
        for group in sorted(groups):
            found |= await self._group(group, team_id)
        return found

    async def _group(self, group: str, team_id: str | None) -> frozenset[str]:
        return await self._members(f"{team_id or ''}/{group}")

    async def _fetch(self, key: str) -> frozenset[str]:
        team, _, group = key.rpartition("/")
        response = await self.client.usergroups_users_list(
            usergroup=group, **({"team_id": team} if team else {})
        )
        return frozenset(str(u) for u in response.get("users") or [])


@dataclass
class RunAccess:
    """Whether a user may read a run: asker, approvers, or the channel's members."""

    approvers: Collection[str]
    members: Membership

    async def may_read(self, state: RunState, user: str) -> bool:
        if not of_acting_team(state):  # another workspace's run does not exist here
            return False
        if may_read(state, user, approvers=self.approvers, in_channel=False):
            return True
        in_channel = await self.members.is_member(state.thread.channel_id, user)
        return may_read(state, user, approvers=self.approvers, in_channel=in_channel)
