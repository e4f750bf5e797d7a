"""The App Home inbox's rules (agent/inbox.py): who a pause waits for, and which runs a
person's Home tab may list."""

from __future__ import annotations

from agent.inbox import (
    AnswerRole,
    ChannelReach,
    answer_role,
    called_groups,
    may_list,
    waited_on,
)
from agent.schemas import InterventionStatus, RunState, RunStatus
from tests import samples

ASKER = "U0ASKER001"
APPROVER = "U0APPROVER"
EXPERT = "U0EXPERT01"
STRANGER = "U0STRANGER"


def paused() -> RunState:
    return samples.state(status=RunStatus.PAUSED, pending=samples.confirm_request("r"))


def test_the_people_a_pause_waits_for_and_why() -> None:
    state = paused()
    role = lambda user, **kw: answer_role(state, user, approvers=[APPROVER], **kw)  # noqa: E731
    assert role(ASKER) is AnswerRole.ASKER
    assert role(APPROVER) is AnswerRole.APPROVER
    # a channel's expert waits only on the pause that calls them (an escalation names them)
    assert role(EXPERT, experts=[EXPERT]) is None
    assert role(EXPERT) is None and role(STRANGER) is None and role("") is None
    assert state.pending is not None
    called = state.model_copy(
        update={
            "pending": state.pending.model_copy(
                update={"allowed_responders": [*state.pending.allowed_responders, EXPERT]}
            )
        }
    )
    assert answer_role(called, EXPERT, approvers=[], experts=[EXPERT]) is AnswerRole.EXPERT
    # an approver configured when it paused still may (as `Orchestrator.may_answer`)
    assert answer_role(state, APPROVER, approvers=[]) is AnswerRole.APPROVER
    assert waited_on(state, approvers=[APPROVER], experts=[EXPERT]) == {ASKER, APPROVER, EXPERT}


def test_a_member_of_a_group_the_pause_calls_waits_on_it() -> None:
    state = paused()
    assert state.pending is not None and called_groups(state) == set()
    assert answer_role(state, STRANGER, approvers=[], member_of=["S0OPS"]) is None
    state.pending = state.pending.model_copy(update={"allowed_groups": ["S0OPS"]})
    assert called_groups(state) == {"S0OPS"}
    assert answer_role(state, STRANGER, approvers=[], member_of=["S0OPS"]) is AnswerRole.EXPERT
    assert answer_role(state, STRANGER, approvers=[], member_of=["S0OTHER"]) is None
    assert answer_role(state, STRANGER, approvers=[]) is None, "membership is the caller's"


def test_nothing_waits_once_the_pause_is_closed_or_the_run_moved_on() -> None:
    state = paused()
    assert state.pending is not None
    state.pending = state.pending.model_copy(update={"status": InterventionStatus.ANSWERED})
    assert answer_role(state, ASKER, approvers=[APPROVER]) is None
    running = paused()
    running.status = RunStatus.RUNNING
    assert answer_role(running, ASKER, approvers=[APPROVER]) is None
    # but whoever it waited for is still told that it moved on
    assert waited_on(running, approvers=[]) == {ASKER, APPROVER}


def test_a_run_is_listed_only_where_the_person_can_open_its_thread() -> None:
    state = paused()

    def lists(user: str, *, in_channel: bool, reach: ChannelReach) -> bool:
        return may_list(state, user, approvers=[APPROVER], in_channel=in_channel, reach=reach)

    public, members, direct = ChannelReach.PUBLIC, ChannelReach.MEMBERS, ChannelReach.DIRECT
    assert lists(ASKER, in_channel=False, reach=public)
    assert lists(APPROVER, in_channel=False, reach=public)
    assert lists(STRANGER, in_channel=True, reach=public)
    assert not lists(STRANGER, in_channel=False, reach=public)
    assert lists(APPROVER, in_channel=True, reach=members)
    assert not lists(APPROVER, in_channel=False, reach=members), "a private channel: members"
    assert not lists(ASKER, in_channel=False, reach=members), "an asker who left it, too"
    assert lists(ASKER, in_channel=False, reach=direct)
    assert not lists(APPROVER, in_channel=False, reach=direct), "a DM: only its asker"
