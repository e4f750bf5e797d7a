"""`HomeTabs`: renders a person's Home tab from the stored runs and publishes it.

It is published when it changes, never polled:

- when the person opens the tab (`app_home_opened`, tab `home`: `opened`, after the ack);
- from the outbox (`deliver`, called by `SlackPublisher` in every delivery pass of a run):
  when a run pauses, resumes, ends or its pause expires, the Home tabs of the people
  concerned are published again — the asker's for any change of status or confidence,
  and everyone the run waits or waited for when its open pause changes. What was last
  published for a run is stored as its `home` message ref (a digest, no message), so a
  pass retried after a failure publishes again and an unchanged run publishes nothing.

Workspace admins (`is_admin`: `/grace config`'s own check, `users.info`) also see every
channel of their workspace with settings of its own (`ChannelService`; in OAuth mode the
acting team's, never another's), as in effect. Slack is asked only
when some channel has settings; when it cannot tell, the person is no admin. The part is
as current as the last publish: opening the tab publishes it again.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol
from urllib.parse import urlencode

from slack_sdk.models.views import View
from slack_sdk.web.async_client import AsyncWebClient

from agent.inbox import answer_role, called_groups, waited_on
from agent.schemas import (
    InterventionKind,
    InterventionStatus,
    RunOrigin,
    RunState,
    RunStatus,
    ThreadKey,
    utcnow,
)
from blocks.home import MAX_RECENT, ChannelSummary, RecentRun, WaitingRun, home_view
from bot.service.channels import ChannelService
from bot.slack.access import SlackGroups
from bot.slack.acting import acting_team_id, of_acting_team
from bot.slack.delivery.thread_sync import ThreadSync
from bot.slack.delivery.web_api import (
    ANSWER,
    PLAN,
    RetryLater,
    classify_failure,
    slack_error,
)
from bot.slack.home.reach import HomeAccess
from storage.channel_settings import ChannelSettings

log = logging.getLogger(__name__)

HOME_REF = "home"
"""The message-ref kind that stores what the Home tabs last showed of a run (a digest)."""
WAITING_SEARCH = 200
"""How many paused runs are looked through for one person's inbox (newest first)."""
MAX_GROUP_PUBLISH = 100
"""How many members of the expert groups a pause calls get their Home tab published when
it changes (Slack's `views.publish` is Tier 4: 100+ calls a minute per workspace)."""
RECENT_SEARCH = 40
"""How many of the person's newest runs are looked through for their recent questions."""
PERMALINKS_KEPT = 5000
REDIRECT = "https://slack.com/app_redirect"
"""Where a link goes when Slack gives no permalink: the channel (documented parameters
`channel` and `team`)."""


class RunLister(Protocol):
    """The runs waiting, or one person's, newest first (`storage.runs.SqlRuns`)."""

    async def list_runs(
        self, *, status: RunStatus | None = None, asker: str | None = None, limit: int
    ) -> list[RunState]: ...


class RunReader(Protocol):
    """The part of the run store the Home tabs read (`storage.run_store.SqlRunStore`):
    its runs, and where their messages are."""

    @property
    def runs(self) -> RunLister: ...

    async def get_message_ref(self, *, run_id: str, kind: str) -> tuple[str, str] | None: ...


@dataclass(frozen=True)
class HomeMark:
    """What the Home tabs show of one run, as a digest that fits a message ref (32
    chars): its open pause (the "Waiting for you" part) and its status and confidence
    (the "Your recent questions" part)."""

    waiting: str
    recent: str

    @staticmethod
    def _hash(text: str) -> str:
        return hashlib.sha256(text.encode()).hexdigest()[:15]

    @classmethod
    def of(cls, state: RunState) -> HomeMark:
        pending = state.pending
        is_open = (
            state.status is RunStatus.PAUSED
            and pending is not None
            and pending.status is InterventionStatus.PENDING
        )
        waiting = pending.intervention_id if is_open and pending is not None else "-"
        confidence = "" if state.overall_confidence is None else f"{state.overall_confidence:.2f}"
        status = RunStatus.RUNNING if state.status is RunStatus.PLANNING else state.status
        recent = f"{status.value}:{state.level or ''}:{confidence}"  # planning: working too
        return cls(cls._hash(waiting), cls._hash(recent))

    @classmethod
    def parse(cls, text: str | None) -> HomeMark:
        """A stored mark; none yet: a run nobody's Home tab shows (nothing waiting)."""
        waiting, _, recent = (text or "").partition(":")
        return cls(waiting or cls._hash("-"), recent)

    @property
    def text(self) -> str:
        return f"{self.waiting}:{self.recent}"


@dataclass
class HomeTabs:
    """Each person's Home tab: rendered from the stored runs, published on change."""

    client: AsyncWebClient
    store: RunReader
    access: HomeAccess
    approvers: Collection[str]
    clock: Callable[[], datetime] = utcnow
    channels: ChannelService | None = None
    """Channel settings, for the admins' part (none: that part is not shown)."""
    is_admin: Callable[[str], Awaitable[bool]] | None = None
    """Whether a person is a workspace admin (False when Slack cannot tell)."""
    groups: SlackGroups | None = None
    """Expert user groups' members (none: a pause that calls a group lists it for nobody
    in it, as `BotDeps.answering_as` lets none of them answer)."""
    _links: dict[tuple[str, str], str] = field(default_factory=dict)
    _locks: dict[str, asyncio.Lock] = field(default_factory=dict)
    _next: dict[str, asyncio.Future[None]] = field(default_factory=dict)
    """Per person: the rendering not started yet, which later callers share."""
    _final_links: dict[str, str] = field(default_factory=dict)
    """A finished run's link (to its answer or outcome): it no longer changes."""

    # ------------------------------------------------------------------ triggers

    async def opened(self, user: str) -> None:
        """The person opened the Home tab (after the ack): show it as it is now."""
        try:
            await self.publish(user)
        except Exception as exc:  # best effort: the next change or open publishes again
            log.warning("could not publish a Home tab: %s", slack_error(exc))

    async def deliver(self, state: RunState, refs: ThreadSync) -> None:
        """The outbox's pass over `state`: publish the Home tabs that now show something
        else. A failure another try may fix raises `RetryLater` (the pass is retried)."""
        if state.origin is RunOrigin.COMMAND_LINE:
            return
        mark = HomeMark.of(state)
        stored = refs.ref(HOME_REF)
        before = HomeMark.parse(stored[2] if stored else None)
        if before == mark:
            return
        people: set[str] = set()
        if before.recent != mark.recent:
            people.add(state.asker)
        if before.waiting != mark.waiting:
            people |= waited_on(
                state, approvers=self._approvers(state), experts=state.policy.expert_users
            )
            people |= await self._group_members(state)
        for user in sorted(p for p in people if p):
            try:
                await self.publish(user)
            except Exception as exc:
                retry = classify_failure(exc, "views.publish")
                if retry is not None:
                    raise retry from exc
                log.warning("views.publish refused: %s", slack_error(exc))
        await refs.remember(HOME_REF, state.thread.channel_id, "", mark.text)

    async def _group_members(self, state: RunState) -> set[str]:
        """The members of the expert groups the run's pauses call, at most
        `MAX_GROUP_PUBLISH` (a larger group's others see the change when they open it)."""
        groups = called_groups(state)
        if not groups or self.groups is None:
            return set()
        members = await self.groups.members_of(groups, team_id=state.thread.team_id)
        if len(members) > MAX_GROUP_PUBLISH:
            log.info(
                "%d group members wait on run %s: publishing %d Home tabs",
                len(members),
                state.run_id,
                MAX_GROUP_PUBLISH,
            )
        return set(sorted(members)[:MAX_GROUP_PUBLISH])  # the same ones every time

    def _approvers(self, state: RunState) -> list[str]:
        """The global approvers and those of the run's channel (its policy)."""
        return [*self.approvers, *(state.policy.approvers or ())]

    # ------------------------------------------------------------------ one tab

    async def publish(self, user: str) -> None:
        """Render `user`'s Home tab from the stored runs and publish it.

        One rendering at a time per person (an older one never lands after a newer one
        here), and callers that arrive while one waits to start share it: it reads the
        runs after all of their changes were stored. So a burst of runs ending at once
        publishes a person's tab two or three times, not once per run."""
        waiting = self._next.get(user)
        if waiting is not None:
            await asyncio.shield(waiting)
            return
        flight: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._next[user] = flight
        lock = self._locks.setdefault(user, asyncio.Lock())
        try:
            async with lock:
                if self._next.get(user) is flight:
                    del self._next[user]  # started: a later change needs a later rendering
                view = await self.view_for(user)
                await self.client.views_publish(user_id=user, view=view.to_dict())
        except BaseException as exc:
            if self._next.get(user) is flight:
                del self._next[user]
            shared = exc if isinstance(exc, Exception) else RetryLater("publish interrupted")
            flight.set_exception(shared)
            flight.exception()  # retrieved: nobody else may be waiting for it
            raise
        flight.set_result(None)

    async def view_for(self, user: str) -> View:
        """The Home tab `user` should see now: only runs they may see."""
        paused = await self.store.runs.list_runs(status=RunStatus.PAUSED, limit=WAITING_SEARCH)
        waiting: list[WaitingRun] = []
        for state in paused:
            if state.origin is RunOrigin.COMMAND_LINE or state.pending is None:
                continue
            if not of_acting_team(state):  # OAuth mode: another workspace's run
                continue
            role = answer_role(
                state, user, approvers=self._approvers(state), experts=state.policy.expert_users
            )
            if role is None and self.groups is not None and state.pending.allowed_groups:
                found = await self.groups.groups_of(
                    user, state.pending.allowed_groups, team_id=state.thread.team_id
                )
                role = answer_role(state, user, approvers=self._approvers(state), member_of=found)
            if role is None or not await self.access.may_list(state, user):
                continue
            waiting.append(WaitingRun(state=state, role=role, link=await self._pause_link(state)))
        waiting.sort(key=lambda w: w.since)
        recent: list[RecentRun] = []
        for state in await self.store.runs.list_runs(asker=user, limit=RECENT_SEARCH):
            if len(recent) >= MAX_RECENT:
                break
            if state.origin is RunOrigin.COMMAND_LINE or not of_acting_team(state):
                continue
            if await self.access.may_list(state, user):
                recent.append(RecentRun(state=state, link=await self._thread_link(state)))
        return home_view(waiting, recent, now=self.clock(), channels=await self._settings(user))

    # ------------------------------------------------------------------ admins' part

    async def _settings(self, user: str) -> list[ChannelSummary] | None:
        """Every channel with settings of its own, for an admin; None for anyone else
        (and when no channel has settings: then Slack is not asked who is an admin)."""
        if self.channels is None or self.is_admin is None:
            return None
        try:
            owned = await self.channels.team_channels(acting_team_id())  # its own team's
        except Exception as exc:  # the rest of the tab still shows
            log.warning("could not read the channel settings for a Home tab: %s", exc)
            return None
        if not owned or not await self.is_admin(user):
            return None
        return [self._summary(own) for own in owned]

    def _summary(self, own: ChannelSettings) -> ChannelSummary:
        """`own` as in effect, with who besides the asker may answer its pauses."""
        assert self.channels is not None
        effective = self.channels.resolve(own)
        values = own.values()
        set_here = {name for name, value in values.items() if value is not None}
        if set_here & {"silent", "notify", "confirm"}:
            set_here.add("thresholds")
        return ChannelSummary(
            channel_id=own.channel_id,
            collections=effective.collections,
            experts=effective.experts,
            approvers=list(dict.fromkeys([*effective.approvers, *self.approvers])),
            thresholds=effective.thresholds,
            answer_mode=effective.answer_mode,
            reply_mode=effective.reply_mode,
            follow_ups=effective.follow_ups,
            own=frozenset(set_here),
            changed_by=own.updated_by,
            changed_at=own.updated_at,
        )

    # ------------------------------------------------------------------ links

    async def _pause_link(self, state: RunState) -> str:
        """The message that asks the open pause's question, else the thread."""
        pending = state.pending
        if pending is not None:
            kind = (
                PLAN
                if pending.kind is InterventionKind.PLAN_APPROVAL
                else f"intervention:{pending.intervention_id}"
            )
            ref = await self.store.get_message_ref(run_id=state.run_id, kind=kind)
            if ref is not None and ref[1]:
                return await self._link(state.thread, ref[1], channel=ref[0])
        return await self._link(state.thread, state.thread.thread_ts)

    async def _thread_link(self, state: RunState) -> str:
        """GRACE's answer in the run's thread (or its plan), else the thread's root:
        a reply's permalink opens the thread. Kept once the run has finished."""
        known = self._final_links.get(state.run_id)
        if known is not None:
            return known
        link = None
        for kind in (ANSWER, PLAN):
            ref = await self.store.get_message_ref(run_id=state.run_id, kind=kind)
            if ref is not None and ref[1]:
                link = await self._link(state.thread, ref[1], channel=ref[0])
                break
        link = link or await self._link(state.thread, state.thread.thread_ts)
        if state.status.is_final and not link.startswith(REDIRECT):
            if len(self._final_links) >= PERMALINKS_KEPT:
                self._final_links.pop(next(iter(self._final_links)))
            self._final_links[state.run_id] = link
        return link

    async def _link(self, thread: ThreadKey, ts: str, *, channel: str | None = None) -> str:
        """The message's permalink (`chat.getPermalink`, kept: it never changes); when
        Slack will not give one, a link that opens the channel (`app_redirect`)."""
        where = channel or thread.channel_id
        known = self._links.get((where, ts))
        if known is not None:
            return known
        try:
            response = await self.client.chat_getPermalink(channel=where, message_ts=ts)
            link = str(response["permalink"])
        except Exception as exc:
            log.info("chat.getPermalink: %s", slack_error(exc))
            query = urlencode({"channel": where, "team": thread.team_id})
            return f"{REDIRECT}?{query}"
        if len(self._links) >= PERMALINKS_KEPT:
            self._links.pop(next(iter(self._links)))
        self._links[(where, ts)] = link
        return link
