"""Issue 9 point 7, the Slack half: who may see a run, option indexes from Slack,
unreadable text, and the inbox's retention."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import insert, select

from agent.schemas import InterventionKind, InterventionStatus, RunStatus, utcnow
from blocks import ids
from bot.service.sweeper import prune_once
from bot.slack.conversation import UNREADABLE
from storage.inbox import DONE, PENDING
from storage.tables import InboxRow

from .conftest import (
    APPROVER,
    ASKER,
    CHANNEL,
    LATEST_Q,
    OTHER,
    VACATION_Q,
    BotHarness,
    HarnessFactory,
    button_values,
)

TS = "1700090000.000100"
ELSEWHERE = "C0ELSEWHERE9"
STRANGER = "U0STRANGER9"


async def test_status_of_a_run_is_for_its_asker_approvers_and_channel(
    make_harness: HarnessFactory,
) -> None:
    harness = await make_harness(approvers=[APPROVER])
    harness.fake.workspace.set_members(CHANNEL, [ASKER, OTHER])  # checked with Slack
    state = await harness.ask(VACATION_Q, ts=TS)

    async def sees(user: str, channel: str) -> bool:
        reply = await harness.command(f"status {state.run_id}", user=user, channel=channel)
        assert reply.status == 200
        text = reply.json()["text"]
        assert (text == f"Run {state.run_id}") != ("No run" in text), text
        return text == f"Run {state.run_id}"

    assert await sees(ASKER, ELSEWHERE), "the asker, from anywhere"
    assert await sees(APPROVER, ELSEWHERE), "an approver, from anywhere"
    assert await sees(OTHER, CHANNEL), "a member of the run's channel"
    assert await sees(OTHER, ELSEWHERE), "a member of the run's channel, from anywhere"
    assert not await sees(STRANGER, CHANNEL), "not a member: the request's channel is no proof"
    assert not await sees(STRANGER, ELSEWHERE), "anyone else, from another channel"
    for sub in ("cancel", "retry"):
        reply = await harness.command(f"{sub} {state.run_id}", user=STRANGER, channel=ELSEWHERE)
        assert "No run" in reply.json()["text"]
        assert VACATION_Q not in reply.text


async def test_an_option_index_out_of_range_changes_nothing(harness: BotHarness) -> None:
    paused, question = await harness.paused_question(
        LATEST_Q, ts=TS, kind=InterventionKind.ASK_USER
    )
    assert paused.pending is not None
    value = button_values(question)[ids.option_action_id(0)]

    reply = await harness.click(ids.option_action_id(999), value, message=question)

    assert reply.status == 200
    after = await harness.run_in(TS)
    assert (after.status, after.version) == (RunStatus.PAUSED, paused.version)
    stored = await harness.store.get_intervention(paused.pending.intervention_id)
    assert stored is not None and stored.status is InterventionStatus.PENDING
    assert any("not one of this question's options" in t for t in harness.ephemerals(ASKER))


async def test_a_question_with_a_lone_surrogate_gets_a_could_not_read_reply(
    harness: BotHarness,
) -> None:
    reply = await harness.mention("How many vacation days \ud800 do I get?", ts=TS)

    assert reply.status == 200
    assert await harness.runs_in(TS) == []
    assert [m.text for m in harness.thread(TS)][-1] == UNREADABLE


async def test_old_slack_event_ids_are_pruned_by_the_sweeper(harness: BotHarness) -> None:
    services = harness.bot.services
    days = services.settings.slack.event_retention_days
    old, recent = utcnow() - timedelta(days=days + 1), utcnow() - timedelta(days=days - 1)
    row = {"kind": "event", "payload_json": "{}", "attempts": 1}
    async with services.engine.begin() as connection:
        await connection.execute(
            insert(InboxRow),
            [
                {**row, "event_id": "Ev_old", "status": DONE, "created_at": old},
                {**row, "event_id": "Ev_new", "status": DONE, "created_at": recent},
                {**row, "event_id": "Ev_old_pending", "status": PENDING, "created_at": old},
            ],
        )

    assert await prune_once(services) == 1

    async with services.engine.connect() as connection:
        kept = set(await connection.scalars(select(InboxRow.event_id)))
    assert kept == {"Ev_new", "Ev_old_pending"}
