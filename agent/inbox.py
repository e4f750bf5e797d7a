"""The App Home inbox's rules: who a paused run waits for, and which runs a person's
Home tab may list. Pure: the Slack layer finds out channel kinds and memberships.

One function decides why a person may answer a pause (`answer_role`): the asker, an
approver, or an expert. Per-channel experts come from the channel's settings; callers
pass them in as `experts`, the one place they count.
"""

from __future__ import annotations

from collections.abc import Collection
from enum import StrEnum

from agent.access import may_read
from agent.schemas import InterventionStatus, RunState, RunStatus


class AnswerRole(StrEnum):
    """Why a paused run waits for this person."""

    ASKER = "asker"
    APPROVER = "approver"
    EXPERT = "expert"


class ChannelReach(StrEnum):
    """Who can open a run's thread: anyone in the workspace (a public channel), its
    members (a private channel, a group DM, or a kind Slack would not tell), or only the
    person in a DM with GRACE."""

    PUBLIC = "public"
    MEMBERS = "members"
    DIRECT = "direct"


def answer_role(
    state: RunState,
    user: str,
    *,
    approvers: Collection[str],
    experts: Collection[str] = (),
    member_of: Collection[str] = (),
) -> AnswerRole | None:
    """Why `user` may answer the run's open pause, or None (no open pause, or not theirs).

    Follows `Orchestrator.may_answer`: a pause names who may answer it
    (`allowed_responders`: the asker and the approvers when it was asked); approvers
    configured now may too. `experts` are the run's channel's experts (channel settings),
    who are asked, and may answer, when GRACE escalates. `member_of`: the groups the
    caller found `user` in; one the pause allows makes them one of its experts."""
    pending = state.pending
    if not user or state.status is not RunStatus.PAUSED or pending is None:
        return None
    if pending.status is not InterventionStatus.PENDING:
        return None
    named = pending.allowed_responders
    if user == state.asker and (not named or user in named):
        return AnswerRole.ASKER
    if user in approvers:
        return AnswerRole.APPROVER
    if user in experts and (not named or user in named):
        return AnswerRole.EXPERT  # an expert answers the escalation that calls them
    if user in named:
        return AnswerRole.APPROVER  # named when it paused (an approver then)
    if set(member_of) & set(pending.allowed_groups):
        return AnswerRole.EXPERT  # a member of an expert group the escalation calls
    return None


def waited_on(
    state: RunState, *, approvers: Collection[str], experts: Collection[str] = ()
) -> set[str]:
    """Everyone a pause of this run waits or waited for (the asker, approvers, experts,
    and whoever any of its pauses named): whose inbox changes when it pauses or resumes."""
    people = {state.asker, *approvers, *experts}
    for request in [*state.interventions, *([state.pending] if state.pending else [])]:
        people.update(request.allowed_responders)
    return {p for p in people if p}


def called_groups(state: RunState) -> set[str]:
    """The user groups any pause of this run calls (`allowed_groups`): their members'
    inboxes change too, once the caller has asked who they are."""
    requests = [*state.interventions, *([state.pending] if state.pending else [])]
    return {group for request in requests for group in request.allowed_groups if group}


def may_list(
    state: RunState,
    user: str,
    *,
    approvers: Collection[str],
    in_channel: bool,
    reach: ChannelReach,
) -> bool:
    """A run appears in `user`'s Home tab when they may read it (`may_read`) and can
    open its thread: anyone for a public channel's run, members only for a private
    channel's, and only the asker for a DM with GRACE. So a private channel's run never
    appears for someone outside it, approvers included."""
    if not may_read(state, user, approvers=approvers, in_channel=in_channel):
        return False
    if reach is ChannelReach.PUBLIC:
        return True
    if reach is ChannelReach.DIRECT:
        return user == state.asker
    return in_channel
