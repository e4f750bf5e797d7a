"""Channel settings in Slack (issue 20, points 4–6), through the real Bolt app over HTTP
with signed requests against the fake Slack: a channel's collections, experts (mentioned
on escalation, reminded once), answer and reply modes, follow-ups without a mention, and
who may change the settings with `/grace config`."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest

from agent.schemas import InterventionKind, RunState, RunStatus, utcnow
from blocks import channel_config as cfg
from bot.service.channels import ChannelService
from bot.simulator.requests import app_mention_envelope, message_envelope, view_submission_payload
from bot.slack.reminders import remind_once
from storage.channel_settings import ChannelUpdate
from tests.bot.conftest import (
    ASKER,
    CHANNEL,
    FACILITIES,
    MONGOLIA_Q,
    OTHER,
    VACATION_Q,
    BotHarness,
    HarnessFactory,
    message_text,
)

FACILITY_CHANNEL = "C0FACILITY1"
EXPERT = "U0EXPERT001"
GROUP = "S0DEVOPS001"
ADMIN = "U0ADMIN0001"
BIKE_Q = "What is the door code of the bike room?"


def channels(harness: BotHarness) -> ChannelService:
    service = harness.bot.deps.channels
    assert service is not None
    return service


async def configure(harness: BotHarness, channel: str, **values: Any) -> None:
    await channels(harness).update(channel, ChannelUpdate(**values), changed_by=ADMIN)


async def mention_in(
    harness: BotHarness, channel: str, text: str, ts: str, user: str = ASKER
) -> None:
    await harness.event(app_mention_envelope(text=text, ts=ts, channel=channel, user=user))


async def refused_reply(harness: BotHarness, ts: str, reply_ts: str, user: str) -> None:
    """A reply in a paused thread by someone who may not answer: refused, and it waits."""
    await harness.thread_reply("Ulaanbaatar.", thread_ts=ts, ts=reply_ts, user=user)
    assert (await harness.run_in(ts)).status is RunStatus.PAUSED
    assert any("Only the person who asked" in t for t in harness.ephemerals(user))


async def answered_by(harness: BotHarness, ts: str, reply_ts: str, user: str) -> RunState:
    """`user` answers the paused thread's question, and the run goes on with it."""
    await harness.thread_reply(
        "It is Ulaanbaatar, according to our travel guide.",
        thread_ts=ts,
        ts=reply_ts,
        user=user,
    )
    state = await harness.run_in(ts)
    assert state.status is RunStatus.ANSWERED, state.error
    assert "Ulaanbaatar" in state.final_answer
    return state


# --------------------------------------------------------------------------- collections


@pytest.mark.usefixtures("with_facilities")
async def test_a_channel_searches_its_own_collection(make_harness: HarnessFactory) -> None:
    harness = await make_harness()
    await configure(harness, FACILITY_CHANNEL, collections=[FACILITIES])

    await mention_in(harness, FACILITY_CHANNEL, BIKE_Q, ts="1700004000.000100")
    here = await harness.run_in("1700004000.000100", FACILITY_CHANNEL)
    assert here.collection == FACILITIES
    assert here.policy.collections == [FACILITIES]
    assert here.status is RunStatus.ANSWERED, here.error
    assert here.sources and {s.collection for s in here.sources} == {FACILITIES}
    assert "4721" in here.final_answer

    await mention_in(harness, CHANNEL, BIKE_Q, ts="1700004000.000200")
    there = await harness.run_in("1700004000.000200")
    assert there.collection == harness.settings.knowledge.collection
    assert there.policy.collections == []
    assert FACILITIES not in {s.collection for s in there.sources}
    assert "4721" not in there.final_answer


# --------------------------------------------------------------------------- experts


async def test_an_escalation_calls_the_channel_experts_and_reminds_them_once(
    harness: BotHarness,
) -> None:
    await configure(harness, CHANNEL, experts=[EXPERT, GROUP])
    ts = "1700004100.000100"
    state = await harness.ask(MONGOLIA_Q, ts=ts)
    assert state.pending is not None and state.pending.kind is InterventionKind.ESCALATE
    assert EXPERT in state.pending.allowed_responders

    question = await harness.intervention_message(state, state.pending.intervention_id)
    shown = message_text(question)
    assert f"<@{EXPERT}>" in question.text and f"<!subteam^{GROUP}>" in question.text
    assert f"<@{EXPERT}>" in shown and f"<!subteam^{GROUP}>" in shown
    assert "<!channel>" not in shown and "<!here>" not in shown

    # /grace status: who the paused run waits for
    status = await harness.command("status")
    assert status.status == 200
    assert "waiting for" in status.text and f"<@{EXPERT}>" in status.text

    # the reminder: not before its time, then once, in the thread, whoever sweeps
    deps = harness.bot.deps
    assert await remind_once(deps, now=utcnow() + timedelta(minutes=30)) == []
    later = utcnow() + timedelta(minutes=61)
    harness.fake.fail_next("chat.postMessage", 500)  # not sent: tried again next pass
    assert await remind_once(deps, now=later) == []
    assert await remind_once(deps, now=later) == [state.run_id]
    assert await remind_once(deps, now=later + timedelta(minutes=60)) == []
    reminders = [m for m in harness.thread(ts) if m.text.startswith("⏰")]
    assert len(reminders) == 1
    assert f"<@{EXPERT}>" in reminders[0].text and f"<!subteam^{GROUP}>" in reminders[0].text

    # the expert answers in the thread, and the run goes on with it
    await answered_by(harness, ts, "1700004100.000200", EXPERT)


async def test_a_member_of_an_expert_group_may_answer_the_escalation(
    harness: BotHarness,
) -> None:
    member = "U0GROUPMEM1"
    harness.fake.workspace.set_usergroup(GROUP, [member])
    await configure(harness, CHANNEL, experts=[GROUP])
    ts = "1700004150.000100"
    state = await harness.ask(MONGOLIA_Q, ts=ts)
    assert state.pending is not None and state.pending.kind is InterventionKind.ESCALATE
    assert state.pending.allowed_groups == [GROUP]
    assert member not in state.pending.allowed_responders

    await harness.settle()  # the pause's Home tabs are published (they ask Slack too)
    # Slack cannot say who is in the group: refused (fail closed), and not remembered
    harness.fake.fail_next("usergroups.users.list", error="internal_error")
    await refused_reply(harness, ts, "1700004150.000200", member)
    # someone outside the group is refused too
    await refused_reply(harness, ts, "1700004150.000300", OTHER)

    state = await answered_by(harness, ts, "1700004150.000400", member)
    asked = harness.fake.calls_to("usergroups.users.list")
    assert asked and {c.params.get("team_id") for c in asked} == {state.thread.team_id}
    [answered] = [i for i in state.interventions if i.kind is InterventionKind.ESCALATE]
    assert answered.answered_by == member
    assert answered.answer is not None and answered.answer.member_of == [GROUP]


async def test_a_channel_without_experts_mentions_nobody(harness: BotHarness) -> None:
    ts = "1700004200.000100"
    _, question = await harness.paused_question(MONGOLIA_Q, ts=ts)
    assert "<!subteam^" not in message_text(question) and "🔔" not in message_text(question)
    assert await remind_once(harness.bot.deps, now=utcnow() + timedelta(days=1)) == []


# --------------------------------------------------------------------------- answer modes


async def test_a_channel_that_answers_every_question(harness: BotHarness) -> None:
    await configure(harness, CHANNEL, answer_mode="all")
    await harness.event(message_envelope(text=VACATION_Q, ts="1700004300.000100"))
    state = await harness.run_in("1700004300.000100")
    assert state.status is RunStatus.ANSWERED

    await harness.event(
        message_envelope(text="Lunch is in the kitchen today.", ts="1700004300.000200")
    )
    bot_post = message_envelope(text=VACATION_Q, ts="1700004300.000300")
    bot_post["event"]["bot_id"] = "B0OTHERBOT1"
    await harness.event(bot_post)
    other = message_envelope(text=VACATION_Q, ts="1700004300.000400", channel="C0QUIET0001")
    await harness.event(other)
    assert await harness.runs_in("1700004300.000200") == []
    assert await harness.runs_in("1700004300.000300") == []
    assert await harness.runs_in("1700004300.000400", "C0QUIET0001") == []


async def test_ephemeral_answers_go_to_the_asker_alone(harness: BotHarness) -> None:
    await configure(harness, CHANNEL, reply_mode="ephemeral")
    ts = "1700004400.000100"
    state = await harness.ask(VACATION_Q, ts=ts)
    assert state.status is RunStatus.ANSWERED
    posted = [
        c for c in harness.fake.calls_to("chat.postMessage") if c.params.get("thread_ts") == ts
    ]
    assert all(
        (c.params.get("metadata") or {}).get("event_payload", {}).get("kind") != "answer"
        for c in posted
    )
    mine = [e for e in harness.fake.workspace.ephemerals(user=ASKER) if e.thread_ts == ts]
    assert len(mine) == 1 and "15" in message_text_of(mine[0])
    assert harness.fake.workspace.ephemerals(user=OTHER) == []


def message_text_of(ephemeral: Any) -> str:
    return ephemeral.text + str(ephemeral.blocks)


# --------------------------------------------------------------------------- follow-ups


async def test_the_askers_next_message_is_a_follow_up_where_allowed(harness: BotHarness) -> None:
    ts = "1700004500.000100"
    await harness.mention(VACATION_Q, ts=ts)
    assert (await harness.run_in(ts)).status is RunStatus.ANSWERED
    follow = "And how many after five years?"

    # channels: off by default
    await harness.thread_reply(follow, thread_ts=ts, ts="1700004500.000200")
    assert len(await harness.runs_in(ts)) == 1

    await configure(harness, CHANNEL, follow_ups=True)
    await harness.thread_reply(follow, thread_ts=ts, ts="1700004500.000300", user=OTHER)
    assert len(await harness.runs_in(ts)) == 1, "only the asker's message follows up"
    await harness.thread_reply(follow, thread_ts=ts, ts="1700004500.000400")
    runs = await harness.runs_in(ts)
    assert len(runs) == 2
    latest = await harness.run_in(ts)
    assert latest.query == follow and VACATION_Q in latest.context
    assert "Earlier answer:" in latest.context
    assert latest.status in (RunStatus.ANSWERED, RunStatus.PAUSED)  # worked on, not left


async def test_follow_ups_are_on_in_direct_messages(harness: BotHarness) -> None:
    dm, ts = "D0ASKER0001", "1700004600.000100"
    await harness.event(message_envelope(text=VACATION_Q, ts=ts, channel=dm, channel_type="im"))
    assert (await harness.run_in(ts, dm)).status is RunStatus.ANSWERED
    await harness.event(
        message_envelope(
            text="And for part-time staff?",
            ts="1700004600.000200",
            thread_ts=ts,
            channel=dm,
            channel_type="im",
        )
    )
    runs = await harness.runs_in(ts, dm)
    assert len(runs) == 2
    assert (await harness.run_in(ts, dm)).query == "And for part-time staff?"


# --------------------------------------------------------------------------- /grace config


def config_submission(user: str, channel: str, **fields: dict[str, Any]) -> dict[str, Any]:
    """A `view_submission` of the config modal, its inputs in Slack's shapes."""
    payload = view_submission_payload(
        callback_id=cfg.CONFIG_MODAL_CALLBACK, values={}, private_metadata=channel, user=user
    )
    payload["view"]["state"] = {
        "values": {block: {cfg.action_id(block): state} for block, state in fields.items()}
    }
    return payload


async def test_config_is_for_admins_and_the_people_it_names(harness: BotHarness) -> None:
    workspace = harness.fake.workspace
    workspace.add_user(ADMIN, name="admin", is_admin=True)
    workspace.add_user(OTHER, name="bob")

    # someone else: refused, no modal
    await harness.command("config", user=OTHER)
    assert harness.fake.calls_to("views.open") == []
    assert any("Only workspace admins" in text for text in harness.ephemerals(OTHER))

    # an admin: the modal, and a submission that is stored with who made it
    await harness.command("config", user=ADMIN)
    opened = harness.fake.calls_to("views.open")
    assert len(opened) == 1
    assert opened[0].params["view"]["callback_id"] == cfg.CONFIG_MODAL_CALLBACK
    reply = await harness.interactive(
        config_submission(
            ADMIN,
            CHANNEL,
            **{
                cfg.EXPERTS: {"type": "multi_users_select", "selected_users": [EXPERT]},
                cfg.EXPERT_GROUPS: {"type": "plain_text_input", "value": f"<!subteam^{GROUP}|ops>"},
                cfg.SILENT: {"type": "plain_text_input", "value": "0.95"},
                cfg.ANSWER_MODE: {
                    "type": "static_select",
                    "selected_option": {"value": "all"},
                },
            },
        )
    )
    assert reply.status == 200 and "errors" not in reply.text
    saved = await channels(harness).get(CHANNEL)
    assert saved.experts == [EXPERT, GROUP] and saved.silent == 0.95
    assert saved.answer_mode == "all" and saved.updated_by == ADMIN
    assert {c.changed_by for c in await channels(harness).history(CHANNEL)} == {ADMIN}
    await harness.settle()  # the admin's Home tab is published again, with the change
    home = harness.fake.home.view(ADMIN)
    assert home is not None and "from 0.95" in json.dumps(home.view["blocks"])

    # a forged submission from someone the settings do not name: refused, nothing changed
    forged = await harness.interactive(
        config_submission(
            OTHER, CHANNEL, **{cfg.SILENT: {"type": "plain_text_input", "value": "0.5"}}
        )
    )
    assert forged.json()["response_action"] == "errors"
    assert (await channels(harness).get(CHANNEL)).silent == 0.95

    # the expert it names may open and change it; a bad value shows in the form
    await harness.command("config", user=EXPERT)
    assert len(harness.fake.calls_to("views.open")) == 2
    bad = await harness.interactive(
        config_submission(
            EXPERT, CHANNEL, **{cfg.SILENT: {"type": "plain_text_input", "value": "2"}}
        )
    )
    assert bad.json()["errors"] == {cfg.SILENT: "A number from 0 to 1, or empty."}
    unknown = await harness.interactive(
        config_submission(
            EXPERT,
            CHANNEL,
            **{
                cfg.COLLECTIONS: {
                    "type": "multi_static_select",
                    "selected_options": [{"value": "no_such_docs"}],
                }
            },
        )
    )
    assert "Unknown collection" in unknown.json()["errors"][cfg.COLLECTIONS]
    assert (await channels(harness).get(CHANNEL)).experts == [EXPERT, GROUP]


async def test_a_channel_names_its_approvers_and_thresholds(harness: BotHarness) -> None:
    """The channel's approvers may answer its pauses (someone else may not); its
    thresholds reach the agent with the run."""
    chan_approver = "U0CHANAPP01"
    await configure(harness, CHANNEL, approvers=[chan_approver], silent=0.99, notify=0.98)
    ts = "1700004700.000100"
    state = await harness.ask(MONGOLIA_Q, ts=ts)
    assert state.policy.approvers == [chan_approver]
    assert state.policy.thresholds is not None
    assert (state.policy.thresholds.silent, state.policy.thresholds.notify) == (0.99, 0.98)
    assert state.pending is not None
    assert chan_approver in state.pending.allowed_responders

    await refused_reply(harness, ts, "1700004700.000200", OTHER)
    state = await answered_by(harness, ts, "1700004700.000300", chan_approver)
    assert state.level is not None and state.level.value != "silent", "0.99 is hard to reach"
