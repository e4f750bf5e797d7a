"""Which runs a person's Home tab may list (`agent.inbox.may_list`), with the facts
checked in Slack: what kind of conversation a run's thread is in (`conversations.info`,
cached) and whether the person is a member (`bot.slack.access.SlackMembers`).

When Slack cannot tell, the answer is the stricter one: members only."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field

from slack_sdk.web.async_client import AsyncWebClient

from agent.access import may_read
from agent.inbox import ChannelReach, may_list
from agent.schemas import RunState
from bot.slack.access import Membership

log = logging.getLogger(__name__)

KIND_TTL = 300.0
"""Seconds a channel's kind is reused (a public channel made private shows for this)."""


@dataclass
class ChannelKinds:
    """`conversations.info` → who can open a channel's threads, cached per channel."""

    client: AsyncWebClient
    ttl: float = KIND_TTL
    clock: Callable[[], float] = time.monotonic
    _cache: dict[str, tuple[float, ChannelReach]] = field(default_factory=dict)

    async def reach(self, channel: str) -> ChannelReach:
        cached = self._cache.get(channel)
        if cached is not None and cached[0] > self.clock():
            return cached[1]
        try:
            response = await self.client.conversations_info(channel=channel)
        except Exception as exc:  # fail closed, and ask again next time
            log.warning("could not read a channel's kind: %s", exc)
            return ChannelReach.MEMBERS
        info = response.get("channel") or {}
        if info.get("is_im"):
            reach = ChannelReach.DIRECT
        elif info.get("is_private") or info.get("is_mpim") or info.get("is_group"):
            reach = ChannelReach.MEMBERS
        else:
            reach = ChannelReach.PUBLIC
        self._cache[channel] = (self.clock() + self.ttl, reach)
        return reach


@dataclass
class HomeAccess:
    """Whether a run may appear in a person's Home tab."""

    approvers: Collection[str]
    members: Membership
    kinds: ChannelKinds

    async def may_list(self, state: RunState, user: str) -> bool:
        channel = state.thread.channel_id
        reach = await self.kinds.reach(channel)
        if reach is ChannelReach.DIRECT:
            in_channel = False
        elif reach is ChannelReach.PUBLIC and may_read(
            state, user, approvers=self.approvers, in_channel=False
        ):
            in_channel = False  # the asker or an approver: listed without asking Slack
        else:
            in_channel = await self.members.is_member(channel, user)
        return may_list(state, user, approvers=self.approvers, in_channel=in_channel, reach=reach)
