"""`/grace` subcommands: every answer is ephemeral; cancel and retry act on the run."""

from __future__ import annotations

import json
from typing import Any

from agent.schemas import RunStatus
from blocks import ids
from bot.simulator.requests import app_mention_envelope

from .conftest import (
    APPROVER,
    ASKER,
    CHANNEL,
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


async def test_status_lists_my_runs_and_status_all_the_channels(harness: BotHarness) -> None:
    harness.fake.workspace.set_members(CHANNEL, [ASKER, OTHER])  # `all` is for its members
    await harness.mention(COMPARE_Q, ts=TS)
    await harness.mention(VACATION_Q, ts="1700007000.000200", user=OTHER)
    mine = await harness.run_in(TS)
    theirs = await harness.run_in("1700007000.000200")
    await harness.event(
        app_mention_envelope(text=COMPARE_Q, channel=OTHER_CHANNEL, ts="1700007000.000300")
    )
    elsewhere = await harness.run_in("1700007000.000300", channel=OTHER_CHANNEL)

    body = ephemeral_body(await harness.command("status"))

    assert body["text"] == "Your 2 recent runs"
    assert f"`{mine.run_id[:6]}`" in shown(body)
    assert f"`{elsewhere.run_id[:6]}`" in shown(body)  # mine, asked in another channel
    assert theirs.run_id[:6] not in shown(body)

    everyone = ephemeral_body(await harness.command("status all"))

    assert everyone["text"] == "2 recent runs in this channel"
    assert mine.run_id[:6] in shown(everyone) and theirs.run_id[:6] in shown(everyone)
    assert elsewhere.run_id[:6] not in shown(everyone)
    assert f"<@{OTHER}>" in shown(everyone)


async def test_commands_accept_the_short_run_id_of_the_footer(harness: BotHarness) -> None:
    state = await harness.ask(VACATION_Q, ts=TS)
    answer = await harness.answer_message(state)
    short = state.run_id[:6]
    assert f"run `{short}`" in message_text(answer)

    body = ephemeral_body(await harness.command(f"status {short}"))
    assert body["text"] == f"Run {state.run_id}"

    retried = ephemeral_body(await harness.command(f"retry {short}"))
    assert retried["text"] == f"Retrying run {state.run_id}…"
    assert "No run 'zz'" in ephemeral_body(await harness.command("status zz"))["text"]


async def test_status_of_one_run_shows_its_detail(harness: BotHarness) -> None:
    state = await harness.ask(VACATION_Q, ts=TS)

    body = ephemeral_body(await harness.command(f"status {state.run_id}"))

    assert body["text"] == f"Run {state.run_id}"
    assert "answered" in shown(body)
    assert "Confidence" in shown(body)

    missing = ephemeral_body(await harness.command("status nosuchrun"))
    assert "No run 'nosuchrun'" in missing["text"]


async def test_cancel_is_for_the_asker_or_an_approver(make_harness: HarnessFactory) -> None:
    harness = await make_harness(approvers=[APPROVER])
    harness.fake.workspace.set_members(CHANNEL, [ASKER, OTHER])  # OTHER may read the run
    state = await harness.ask(COMPARE_Q, ts=TS)
    plan = await harness.plan_message(state)

    refused = ephemeral_body(await harness.command(f"cancel {state.run_id}", user=OTHER))
    assert "Only the person who asked" in refused["text"]
    assert (await harness.run_in(TS)).version == state.version

    accepted = ephemeral_body(await harness.command(f"cancel {state.run_id}", user=APPROVER))
    assert accepted["text"] == f"Cancelling run {state.run_id}…"
    cancelled = await harness.run_in(TS)
    assert cancelled.status is RunStatus.CANCELLED
    assert f"Run `{state.run_id[:6]}` is now cancelled." in harness.ephemerals(APPROVER)
    assert any(
        "Stopped" in m.text and f"/grace retry {state.run_id[:6]}" in m.text
        for m in harness.thread(TS)
    )
    final_plan = harness.fake.message(plan.channel, plan.ts)
    assert not {ids.PLAN_RUN, ids.PLAN_EDIT, ids.PLAN_CANCEL} & set(button_values(final_plan))
    assert f"cancelled by <@{APPROVER}>" in message_text(final_plan)  # a mention, not an id

    again = ephemeral_body(await harness.command(f"cancel {state.run_id}", user=ASKER))
    assert "already ended" in again["text"]


async def test_retry_starts_a_new_run_in_the_same_thread(harness: BotHarness) -> None:
    first = await harness.ask(COMPARE_Q, ts=TS)

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
    assert any(f"Asked again as run `{retried.run_id[:6]}`" in t for t in harness.ephemerals(ASKER))


async def test_stats_and_thresholds(make_harness: HarnessFactory) -> None:
    harness = await make_harness(approvers=[ASKER])  # workspace-wide stats are for approvers
    await harness.mention(VACATION_Q, ts=TS)

    stats = ephemeral_body(await harness.command("stats"))
    assert stats["text"] == "GRACE stats for today"
    assert "*questions asked*: 1" in shown(stats)
    assert "*questions answered*: 1" in shown(stats)
    assert "*asked a person*: 0%" in shown(stats)
    assert "*cost (USD)*" in shown(stats)
    assert "hitl" not in shown(stats) and "cost usd" not in shown(stats)
    assert "no 👍 / 👎 votes yet" in shown(stats)

    answer = await harness.answer_message(await harness.run_in(TS))
    await harness.vote(answer, up=True)
    await harness.vote(answer, up=False, user=OTHER)
    voted = ephemeral_body(await harness.command("stats"))
    assert "👍 1 · 👎 1 · 50% helpful" in shown(voted)

    thresholds = ephemeral_body(await harness.command("thresholds"))
    t = harness.bot.services.orchestrator.thresholds
    for name, value in (("silent", t.silent), ("notify", t.notify), ("confirm", t.confirm)):
        assert f"*{name}* — score ≥ {value:.2f}" in shown(thresholds)
