"""Issue 20 point 3: the App Home inbox. The real Bolt app over HTTP with signed
requests against the fake Slack: `app_home_opened` (tab `home`) publishes the person's
inbox — the pauses waiting for them, only runs they may see, their recent questions, and
for workspace admins the channels' settings — and the outbox publishes it again when a
run pauses, resumes or ends."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from agent.schemas import InterventionKind, RunStatus
from blocks import ids
from blocks.common import LEVEL_WORDS
from bot.simulator.requests import app_mention_envelope
from storage.channel_settings import ChannelUpdate

from .conftest import (
    APPROVER,
    ASKER,
    CHANNEL,
    COMPARE_Q,
    MONGOLIA_Q,
    OTHER,
    VACATION_Q,
    BotHarness,
    HarnessFactory,
    button_values,
    proceed_through_confirms,
)

TS = "1700200000.000100"
TS_2 = "1700200100.000100"
STRANGER = "U0STRANGER9"
OUTSIDER = "U0OUTSIDER8"
"""An approver who is not a member of the private channel."""
PRIVATE = "G0PRIVATE01"
EXPERT = "U0EXPERT001"
ADMIN = "U0ADMIN0001"


def texts(node: Any) -> list[str]:
    """Every text a reader sees in some blocks."""
    found: list[str] = []
    if isinstance(node, dict):
        if isinstance(node.get("text"), str):
            found.append(node["text"])
        for value in node.values():
            if isinstance(value, dict | list):
                found.extend(texts(value))
    elif isinstance(node, list):
        for item in node:
            found.extend(texts(item))
    return found


def home_parts(harness: BotHarness, user: str) -> tuple[str, str]:
    """(the "Waiting for you" part, the "Your recent questions" part) of `user`'s Home
    tab as last published."""
    home = harness.fake.home.view(user)
    assert home is not None, f"no Home tab was published for {user}"
    assert home.view["type"] == "home"
    text = "\n".join(texts(home.view["blocks"]))
    waiting, found, recent = text.partition("Your recent questions")
    assert found, text
    return waiting, recent


def publishes(harness: BotHarness, user: str) -> int:
    return sum(1 for c in harness.fake.calls_to("views.publish") if c.params["user_id"] == user)


async def open_home(harness: BotHarness, user: str, tab: str = "home") -> None:
    """`user` opens the app's `tab`; returns once the work after the ack is done."""
    await harness.open_app(user, tab=tab, event_ts="1700200999.000001")


async def test_a_paused_run_waits_in_its_approvers_inbox_not_in_an_unrelated_users(
    make_harness: HarnessFactory,
) -> None:
    harness = await make_harness(approvers=[APPROVER])
    harness.fake.workspace.set_members(CHANNEL, [ASKER, OTHER])
    state = await harness.ask(COMPARE_Q, ts=TS)
    assert state.status is RunStatus.PAUSED and state.pending is not None
    assert state.pending.kind is InterventionKind.PLAN_APPROVAL
    plan = await harness.plan_message(state)

    await open_home(harness, APPROVER)
    waiting, _ = home_parts(harness, APPROVER)
    assert "Waiting for you (1)" in waiting
    assert COMPARE_Q[:60] in waiting
    assert "Approve the plan" in waiting
    assert "you are an approver" in waiting
    assert harness.fake.workspace.permalink(CHANNEL, plan.ts) in waiting, "links to the plan"
    assert "waiting just now" in waiting

    await open_home(harness, ASKER)
    waiting, recent = home_parts(harness, ASKER)
    assert COMPARE_Q[:60] in waiting and "you asked" in waiting
    assert COMPARE_Q[:60] in recent and "waiting for input" in recent

    for unrelated in (OTHER, STRANGER):  # a member of the channel, and someone outside it
        await open_home(harness, unrelated)
        waiting, recent = home_parts(harness, unrelated)
        assert "Waiting for you (0)" in waiting
        assert COMPARE_Q[:30] not in waiting + recent
        assert "Nothing is waiting for you" in waiting


async def test_the_askers_recent_questions_with_status_and_confidence(
    harness: BotHarness,
) -> None:
    state = await harness.ask(VACATION_Q, ts=TS)
    assert state.status is RunStatus.ANSWERED and state.level is not None

    await open_home(harness, ASKER)
    waiting, recent = home_parts(harness, ASKER)
    assert "Waiting for you (0)" in waiting
    assert VACATION_Q in recent
    assert "answered" in recent
    assert LEVEL_WORDS[state.level] in recent, "confidence in the cards' plain words"
    answer = await harness.answer_message(state)
    assert harness.fake.workspace.permalink(CHANNEL, answer.ts) in recent, "links to the answer"

    await open_home(harness, OTHER)
    _, recent = home_parts(harness, OTHER)
    assert VACATION_Q not in recent, "only the person's own questions"
    assert "You have not asked me anything yet" in recent


async def test_a_private_channels_run_is_hidden_from_non_members(
    make_harness: HarnessFactory,
) -> None:
    harness = await make_harness(approvers=[APPROVER, OUTSIDER])
    harness.fake.workspace.set_members(PRIVATE, [ASKER, APPROVER])
    envelope = app_mention_envelope(text=COMPARE_Q, ts=TS, channel=PRIVATE)
    assert (await harness.event(envelope)).status == 200
    state = await harness.run_in(TS, channel=PRIVATE)
    assert state.status is RunStatus.PAUSED

    await open_home(harness, APPROVER)  # an approver in the channel
    waiting, _ = home_parts(harness, APPROVER)
    assert COMPARE_Q[:60] in waiting

    for outside in (OUTSIDER, STRANGER):  # an approver outside it, and anyone else
        await open_home(harness, outside)
        waiting, recent = home_parts(harness, outside)
        assert COMPARE_Q[:30] not in waiting + recent, outside
        assert PRIVATE not in waiting + recent


async def test_the_inbox_is_published_again_when_the_run_pauses_and_is_answered(
    make_harness: HarnessFactory,
) -> None:
    harness = await make_harness(approvers=[APPROVER])
    state = await harness.ask(COMPARE_Q, ts=TS)
    assert state.status is RunStatus.PAUSED

    # Nobody opened the tab: the pause itself published it, for the asker and approver.
    waiting, _ = home_parts(harness, APPROVER)
    assert COMPARE_Q[:60] in waiting
    waiting, _ = home_parts(harness, ASKER)
    assert COMPARE_Q[:60] in waiting
    assert publishes(harness, OTHER) == 0, "nobody else's tab changes"
    before = publishes(harness, APPROVER)

    plan = await harness.plan_message(state)
    buttons = button_values(plan)
    await harness.click(ids.PLAN_RUN, buttons[ids.PLAN_RUN], message=plan, user=APPROVER)
    state = await proceed_through_confirms(harness, TS)
    assert state.status is RunStatus.ANSWERED

    assert publishes(harness, APPROVER) > before, "published again, without being opened"
    waiting, _ = home_parts(harness, APPROVER)
    assert "Waiting for you (0)" in waiting
    waiting, recent = home_parts(harness, ASKER)
    assert COMPARE_Q[:30] not in waiting
    assert COMPARE_Q[:60] in recent and "answered" in recent

    settled = publishes(harness, APPROVER)
    await harness.restart()  # the outbox is idle: nothing is published again
    await harness.settle()
    assert publishes(harness, APPROVER) == settled


async def test_other_tabs_are_left_to_their_own_listeners(harness: BotHarness) -> None:
    await open_home(harness, ASKER, tab="messages")
    await open_home(harness, ASKER, tab="about")
    assert publishes(harness, ASKER) == 0


async def test_a_cancelled_or_expired_pause_leaves_the_inbox(
    make_harness: HarnessFactory,
) -> None:
    harness = await make_harness(approvers=[APPROVER])
    await harness.mention(COMPARE_Q, ts=TS)
    await harness.mention(COMPARE_Q, ts=TS_2)
    first, second = await harness.run_in(TS), await harness.run_in(TS_2)
    assert first.status is RunStatus.PAUSED and second.status is RunStatus.PAUSED
    waiting, _ = home_parts(harness, APPROVER)
    assert "Waiting for you (2)" in waiting

    reply = await harness.command(f"cancel {first.run_id}")
    assert reply.status == 200
    assert (await harness.run_in(TS)).status is RunStatus.CANCELLED
    waiting, _ = home_parts(harness, APPROVER)
    assert "Waiting for you (1)" in waiting
    _, recent = home_parts(harness, ASKER)
    assert "cancelled" in recent

    # The sweeper, once the question's time is up: claims the expiry, the run moves on.
    pending = second.pending
    assert pending is not None and pending.expires_at is not None
    later = pending.expires_at + timedelta(seconds=1)
    assert await harness.store.claim_expiry(intervention_id=pending.intervention_id, now=later)
    await harness.bot.services.orchestrator.expire(second.run_id, pending.intervention_id)
    await harness.settle()
    assert (await harness.run_in(TS_2)).status is RunStatus.CANCELLED
    waiting, _ = home_parts(harness, APPROVER)
    assert "Waiting for you (0)" in waiting


async def test_publishes_for_one_person_at_once_share_a_rendering(harness: BotHarness) -> None:
    """Six changes at once (a burst of runs ending): one rendering in flight, and one
    more that all the others share — it reads the runs after every change was stored."""
    home = harness.bot.deps.home
    assert home is not None
    await asyncio.gather(*(home.publish(ASKER) for _ in range(6)))
    assert publishes(harness, ASKER) == 2


async def test_a_channels_expert_waits_on_its_escalation_and_admins_see_its_settings(
    harness: BotHarness,
) -> None:
    """The expert a channel's settings name sees that channel's escalated run (and not
    its other pauses, which are the asker's and approvers'); the admins' part of the
    tab shows the channel's settings to a workspace admin and to nobody else."""
    workspace = harness.fake.workspace
    workspace.add_user(ADMIN, name="admin", is_admin=True)
    workspace.add_user(EXPERT, name="erin")
    workspace.add_user(OTHER, name="bob")
    channels = harness.bot.deps.channels
    assert channels is not None
    await channels.update(
        CHANNEL,
        ChannelUpdate(experts=[EXPERT], silent=0.95, answer_mode="all"),
        changed_by=ADMIN,
    )

    await harness.mention(MONGOLIA_Q, ts=TS)  # escalates: calls the channel's experts
    escalated = await harness.run_in(TS)
    assert escalated.pending is not None
    assert escalated.pending.kind is InterventionKind.ESCALATE
    await harness.mention(COMPARE_Q, ts=TS_2)  # its plan, then a step to confirm
    plan = await harness.plan_message(await harness.run_in(TS_2))
    await harness.click(ids.PLAN_RUN, button_values(plan)[ids.PLAN_RUN], message=plan)
    confirming = await harness.run_in(TS_2)
    assert confirming.status is RunStatus.PAUSED and confirming.pending is not None
    assert confirming.pending.kind is InterventionKind.CONFIRM
    assert EXPERT in confirming.policy.expert_users, "an expert of the run's channel"

    await open_home(harness, EXPERT)
    waiting, recent = home_parts(harness, EXPERT)
    assert "Waiting for you (1)" in waiting
    assert MONGOLIA_Q in waiting and "Add details or a source" in waiting
    assert "you are an expert for this channel" in waiting
    assert COMPARE_Q[:30] not in waiting and "Confirm a step" not in waiting
    assert "Channel settings" not in waiting + recent, "an expert is no admin"

    await open_home(harness, ASKER)  # the asker waits on both
    waiting, _ = home_parts(harness, ASKER)
    assert "Waiting for you (2)" in waiting and "Confirm a step" in waiting

    await open_home(harness, ADMIN)
    waiting, settings = home_parts(harness, ADMIN)
    assert "Waiting for you (0)" in waiting, "an admin answers no pause for being one"
    assert "Channel settings (1)" in settings
    assert f"<#{CHANNEL}>" in settings
    assert f"<@{EXPERT}>" in settings
    assert "from 0.95" in settings, "the channel's own thresholds"
    assert "answers every question posted in the channel" in settings
    assert "in the thread _(default)_" in settings
    assert "every collection _(default)_" in settings
    assert f"last changed by <@{ADMIN}>" in settings
    assert "`/grace config`" in settings

    for user in (OTHER, STRANGER):  # a known non-admin, and someone users.info cannot tell
        await open_home(harness, user)
        waiting, recent = home_parts(harness, user)
        assert "Channel settings" not in waiting + recent, user


async def test_an_expert_groups_members_wait_on_the_escalation_that_calls_the_group(
    harness: BotHarness,
) -> None:
    """A channel whose experts are a user group: the escalation is published to its
    members' Home tabs (Slack is asked who they are) and listed there as theirs to
    answer; someone outside the group sees nothing, and the answer clears it."""
    group, member = "S0DEVOPS001", "U0GROUPMEM1"
    harness.fake.workspace.set_usergroup(group, [member])
    harness.fake.workspace.add_user(member, name="gina")  # in the channel, like everyone
    channels = harness.bot.deps.channels
    assert channels is not None
    await channels.update(CHANNEL, ChannelUpdate(experts=[group]), changed_by=ADMIN)

    await harness.mention(MONGOLIA_Q, ts=TS)  # escalates: calls the group
    state = await harness.run_in(TS)
    assert state.pending is not None and state.pending.kind is InterventionKind.ESCALATE
    assert state.pending.allowed_groups == [group]
    assert member not in state.pending.allowed_responders

    await harness.settle()
    waiting, _ = home_parts(harness, member)  # published by the pause, never opened
    assert "Waiting for you (1)" in waiting
    assert MONGOLIA_Q in waiting and "you are an expert for this channel" in waiting
    assert publishes(harness, STRANGER) == 0, "nobody outside the group"
    await open_home(harness, STRANGER)
    waiting, _ = home_parts(harness, STRANGER)
    assert "Waiting for you (0)" in waiting

    before = publishes(harness, member)
    await harness.thread_reply(
        "It is Ulaanbaatar, according to our travel guide.",
        thread_ts=TS,
        ts="1700200000.000900",
        user=member,
    )
    assert (await harness.run_in(TS)).status is RunStatus.ANSWERED
    await harness.settle()
    assert publishes(harness, member) > before
    waiting, _ = home_parts(harness, member)
    assert "Waiting for you (0)" in waiting
