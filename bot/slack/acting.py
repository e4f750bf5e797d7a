"""Whose work a piece of code does (issue 21): the workspace a request came from, or a
run belongs to. The code that calls Slack is the same for every team and much of it runs
long after the request that started it (a retry, the sweeper, recovery after a restart),
so each entry point says whose work follows — `acting_for(team)` — and what it reaches
reads it back: the routed Web API client picks that team's token
(bot/slack/tenancy.py), and a run of another team does not exist for that work
(`of_acting_team`). Outside OAuth mode nothing sets it, and every check passes.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.async_context import AsyncBoltContext
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse

from agent.ports import RunEvent, RunObserver
from agent.schemas import RunState, ThreadKey


@dataclass(frozen=True)
class TeamRef:
    """A workspace, and its Enterprise Grid org when it is in one."""

    team_id: str | None
    enterprise_id: str | None = None
    org_wide: bool = False

    @classmethod
    def of_thread(cls, thread: ThreadKey) -> TeamRef:
        return cls(team_id=thread.team_id, enterprise_id=thread.enterprise_id)


_ACTING_FOR: ContextVar[TeamRef | None] = ContextVar("grace_acting_for", default=None)


@contextmanager
def acting_for(team: TeamRef | None) -> Iterator[None]:
    """Slack calls made inside (and by tasks started inside) use `team`'s installation."""
    token = _ACTING_FOR.set(team)
    try:
        yield
    finally:
        _ACTING_FOR.reset(token)


def current_team() -> TeamRef | None:
    return _ACTING_FOR.get()


def acting_team_id() -> str | None:
    """The id of the workspace being acted for (None: none is — single-workspace mode)."""
    team = current_team()
    return team.team_id if team is not None else None


def of_acting_team(state: RunState) -> bool:
    """Whether a run belongs to the team being acted for (always, when none is): a run
    of another team does not exist for this request, whatever ids it sends."""
    team = current_team()
    if team is None:
        return True
    if team.team_id and not team.org_wide:
        return state.thread.team_id == team.team_id
    return team.enterprise_id is not None and state.thread.enterprise_id == team.enterprise_id


class ActingObserver:
    """A run observer that calls Slack (the assistant status line) acting for the run's
    team, whatever task the transition happens in (a request, the sweeper, recovery)."""

    def __init__(self, inner: RunObserver) -> None:
        self._inner = inner

    async def on_event(self, event: RunEvent, state: RunState) -> None:
        with acting_for(TeamRef.of_thread(state.thread)):
            await self._inner.on_event(event, state)


def team_of_context(context: AsyncBoltContext) -> TeamRef | None:
    """The workspace a Slack request came from (Bolt reads it from the body)."""
    if not context.team_id and not context.enterprise_id:
        return None
    return TeamRef(
        team_id=context.team_id,
        enterprise_id=context.enterprise_id,
        org_wide=bool(context.is_enterprise_install),
    )


class ActingApp(AsyncApp):
    """The Bolt app of OAuth mode: everything a request's listeners do acts for the
    request's team (Bolt's global middleware cannot do it: it runs, and returns, before
    the listeners do). Over HTTP as over Socket Mode, both dispatch here."""

    async def async_dispatch(self, req: AsyncBoltRequest) -> BoltResponse:
        with acting_for(team_of_context(req.context)):
            return await super().async_dispatch(req)
