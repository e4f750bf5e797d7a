"""`/grace` subcommands: every answer is ephemeral; cancel and retry act on the run."""

from __future__ import annotations

import json
from typing import Any

from agent.schemas import RunStatus
from blocks import ids
from tests.fakes.fake_slack import app_mention_envelope

from .conftest import (
    APPROVER,
    ASKER,
    COMPARE_Q,
    OTHER,
    VACATION_Q,
    BotHarness,
    HarnessFactory,
    Reply,
    button_values,
    check_block_kit,
    message_text,
)

TS = "1700007000.000100"
OTHER_CHANNEL = "C0RANDOM002"


def ephemeral_body(reply: Reply) -> dict[str, Any]:
    assert reply.status == 200, reply.text
    body: dict[str, Any] = reply.json()
    assert body["response_type"] == "ephemeral"
    if "blocks" in body:
        check_block_kit(body["blocks"], f"/grace answer {body['text']!r}")
    return body


def shown(body: dict[str, Any]) -> str:
    return body["text"] + json.dumps(body.get("blocks", []), ensure_ascii=False)


async def test_help(harness: BotHarness) -> None:
    for text in ("help", ""):
        body = ephemeral_body(await harness.command(text))
        assert body["text"] == "GRACE help"
        for sub in ("status", "cancel", "retry", "stats", "thresholds"):
            assert f"/grace {sub}" in shown(body)


async def test_status_lists_the_active_runs_of_this_channel(harness: BotHarness) -> None:
    await harness.mention(COMPARE_Q, ts=TS)
    await harness.mention(VACATION_Q, ts="1700007000.000200")
    paused = await harness.run_in(TS)
    answered = await harness.run_in("1700007000.000200")
    await harness.event(
        app_mention_envelope(text=COMPARE_Q, channel=OTHER_CHANNEL, ts="1700007000.000300")
    )
    elsewhere = await harness.run_in("1700007000.000300", channel=OTHER_CHANNEL)
    assert elsewhere.status is RunStatus.PAUSED

    body = ephemeral_body(await harness.command("status"))

    assert body["text"] == "1 active runs in this channel"
    assert paused.run_id in shown(body)
    assert answered.run_id not in shown(body)
    assert elsewhere.run_id not in shown(body)


async def test_status_of_one_run_shows_its_detail(harness: BotHarness) -> None:
    await harness.mention(VACATION_Q, ts=TS)
    state = await harness.run_in(TS)

    body = ephemeral_body(await harness.command(f"status {state.run_id}"))

    assert body["text"] == f"Run {state.run_id}"
    assert "answered" in shown(body)
    assert "Confidence" in shown(body)

    missing = ephemeral_body(await harness.command("status nosuchrun"))
    assert "No run 'nosuchrun'" in missing["text"]


async def test_cancel_is_for_the_asker_or_an_approver(make_harness: HarnessFactory) -> None:
    harness = await make_harness(approvers=[APPROVER])
    await harness.mention(COMPARE_Q, ts=TS)
    state = await harness.run_in(TS)
    plan = await harness.plan_message(state)

    refused = ephemeral_body(await harness.command(f"cancel {state.run_id}", user=OTHER))
    assert "Only the person who asked" in refused["text"]
    assert (await harness.run_in(TS)).version == state.version

    accepted = ephemeral_body(await harness.command(f"cancel {state.run_id}", user=APPROVER))
    assert accepted["text"] == f"Cancelling run {state.run_id}…"
    cancelled = await harness.run_in(TS)
    assert cancelled.status is RunStatus.CANCELLED
    assert f"Run {state.run_id} is now cancelled." in harness.ephemerals(APPROVER)
    assert any("Stopped" in m.text for m in harness.thread(TS))
    final_plan = harness.fake.message(plan.channel, plan.ts)
    assert not {ids.PLAN_RUN, ids.PLAN_EDIT, ids.PLAN_CANCEL} & set(button_values(final_plan))
    assert "cancelled" in message_text(final_plan)

    again = ephemeral_body(await harness.command(f"cancel {state.run_id}", user=ASKER))
    assert "already ended" in again["text"]


async def test_retry_starts_a_new_run_in_the_same_thread(harness: BotHarness) -> None:
    await harness.mention(COMPARE_Q, ts=TS)
    first = await harness.run_in(TS)

    early = ephemeral_body(await harness.command(f"retry {first.run_id}"))
    assert "still paused" in early["text"]
    assert len(await harness.runs_in(TS)) == 1

    await harness.command(f"cancel {first.run_id}")
    body = ephemeral_body(await harness.command(f"retry {first.run_id}"))

    assert body["text"] == f"Retrying run {first.run_id}…"
    runs = await harness.runs_in(TS)
    assert len(runs) == 2
    retried = await harness.run_in(TS)
    assert retried.run_id != first.run_id
    assert retried.query == first.query
    assert any(f"Retried as run {retried.run_id}" in t for t in harness.ephemerals(ASKER))


async def test_stats_and_thresholds(harness: BotHarness) -> None:
    await harness.mention(VACATION_Q, ts=TS)

    stats = ephemeral_body(await harness.command("stats"))
    assert stats["text"] == "GRACE stats for today"
    assert "*runs*: 1" in shown(stats)
    assert "*answered*: 1" in shown(stats)

    thresholds = ephemeral_body(await harness.command("thresholds"))
    t = harness.bot.services.orchestrator.thresholds
    for name, value in (("silent", t.silent), ("notify", t.notify), ("confirm", t.confirm)):
        assert f"*{name}* — score ≥ {value:.2f}" in shown(thresholds)
