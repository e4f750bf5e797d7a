"""The run access rule (`agent.access.may_read`) with channel membership checked in
Slack: `conversations.members`, cached briefly per channel.

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


@dataclass
class SlackMembers:
    """`conversations.members`, cached per channel for `ttl` seconds."""

    client: AsyncWebClient
    ttl: float = MEMBERS_TTL
    clock: Callable[[], float] = time.monotonic
    _cache: dict[str, tuple[float, frozenset[str]]] = field(default_factory=dict)
    _locks: dict[str, asyncio.Lock] = field(default_factory=dict)

    async def is_member(self, channel: str, user: str) -> bool:
        if not channel or not user:
            return False
        return user in await self._members(channel)

    async def _members(self, channel: str) -> frozenset[str]:
        lock = self._locks.setdefault(channel, asyncio.Lock())
        async with lock:
            cached = self._cache.get(channel)
            if cached is not None and cached[0] > self.clock():
                return cached[1]
            members = await self._fetch(channel)
            self._cache[channel] = (self.clock() + self.ttl, members)
            return members

    async def _fetch(self, channel: str) -> frozenset[str]:
        found: set[str] = set()
        cursor: str | None = None
        try:
            for _ in range(MAX_PAGES):
                response = await self.client.conversations_members(
                    channel=channel, limit=1000, cursor=cursor
                )
                found.update(str(m) for m in response.get("members") or [])
                cursor = (response.get("response_metadata") or {}).get("next_cursor") or None
                if not cursor:
                    break
        except Exception as exc:  # fail closed: an unknown membership grants nothing
            log.warning("could not read a channel's members: %s", exc)
            return frozenset()
        return frozenset(found)


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
