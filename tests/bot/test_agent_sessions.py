"""Issue 20, points 1 and 2: a run's thread is an agent session, and Slack's Stop button
cancels the run. Signed Slack requests to the real Bolt app over HTTP, against the fake
Slack (`bot/simulator/sessions.py` keeps every status a thread's session was set to)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from agent.llm.offline import OfflineModel
from agent.schemas import InterventionKind, RunStatus
from bot.simulator.sessions import AgentSession
from bot.slack.delivery.sessions import SET_STATUS
from bot.slack.listeners.agent_view import STOP_REFUSED, stopped_by
from tests.agent.doubles import GatedModel

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
    message_text,
    proceed_through_confirms,
    session_stopped,
)

BOUND = 10.0
"""Seconds to wait for a signal that comes at once unless the code under test is wrong."""


async def until(check: Callable[[], object], what: str) -> None:
    """Wait (at most BOUND seconds) until `check()` is true."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + BOUND
    while not check():
        if loop.time() > deadline:
            raise AssertionError(f"never happened: {what}")
        await asyncio.sleep(0.01)


def history(h: BotHarness, ts: str) -> list[str]:
    return h.fake.sessions.history(CHANNEL, ts)


async def stop(h: BotHarness, ts: str, user: str = ASKER, *, settle: bool = True) -> None:
    """`user` clicks the Stop button of thread `ts`'s session."""
    reply = await h.event(session_stopped(ts, user), settle=settle)
    assert reply.status == 200


def thread_says(h: BotHarness, ts: str, text: str) -> bool:
    return any(text in message_text(m) for m in h.thread(ts))


# --------------------------------------------------------------------------- lifecycle


async def test_an_answered_run_is_processing_then_closed(harness: BotHarness) -> None:
    ts = "1700020000.000100"
    await harness.mention(VACATION_Q, ts=ts)

    state = await harness.run_in(ts)
    assert state.status is RunStatus.ANSWERED
    assert history(harness, ts) == ["processing", "closed"]
    session = harness.fake.sessions.session(CHANNEL, ts)
    assert session is not None and session.title == VACATION_Q
    assert session.initiator == ASKER
    first = harness.fake.calls_to(SET_STATUS)[0]
    assert first.headers.get("Content-Type", "").startswith("application/json")
    assert first.params["title"] == VACATION_Q
    # once delivered, nothing is set again (the status is stored with the run's messages)
    await harness.bot.deps.publisher.deliver(state.run_id)
    assert len(harness.fake.calls_to(SET_STATUS)) == 2
    assert not await harness.bot.deps.publisher.undelivered(CHANNEL)


async def test_a_paused_then_answered_run_is_suspended_while_it_waits(
    harness: BotHarness,
) -> None:
    ts = "1700020000.000200"
    state = await harness.ask(MONGOLIA_Q, ts=ts)
    assert state.status is RunStatus.PAUSED
    assert state.pending is not None and state.pending.kind is InterventionKind.ESCALATE
    assert history(harness, ts) == ["processing", "suspended"]

    await harness.thread_reply(
        "It is Ulaanbaatar, according to our travel guide.", thread_ts=ts, ts="1700020000.000300"
    )
    state = await proceed_through_confirms(harness, ts)

    assert state.status is RunStatus.ANSWERED, state.error
    seen = history(harness, ts)
    pauses = len(state.interventions)
    assert pauses >= 1
    assert seen == ["processing", "suspended"] * pauses + ["processing", "closed"], seen


# --------------------------------------------------------------------------- Stop


async def test_stop_while_working_cancels_at_once_and_says_who(
    make_harness: HarnessFactory,
) -> None:
    model = GatedModel(OfflineModel())
    harness = await make_harness(llm=model)
    ts = "1700020000.000400"
    try:
        await harness.mention(VACATION_Q, ts=ts, settle=False)
        await asyncio.wait_for(model.reached.wait(), BOUND)
        await until(lambda: history(harness, ts) == ["processing"], "the session is processing")

        await stop(harness, ts, settle=False)

        # the worker is still blocked in the model: the Stop did not wait for it
        assert not model.gate.is_set()
        await until(lambda: history(harness, ts) == ["processing", "closed"], "closed")
        state = await harness.run_in(ts)
        assert state.status is RunStatus.CANCELLED
        assert thread_says(harness, ts, f"Stopped: {stopped_by(ASKER)}")
        model.gate.set()
        await harness.settle()
        state = await harness.run_in(ts)
        assert state.status is RunStatus.CANCELLED and not state.final_answer
        assert history(harness, ts) == ["processing", "closed"]
    finally:
        model.gate.set()


async def test_stop_while_paused_cancels_the_run(harness: BotHarness) -> None:
    ts = "1700020000.000500"
    state = await harness.ask(COMPARE_Q, ts=ts)
    assert state.status is RunStatus.PAUSED and state.pending is not None
    assert history(harness, ts)[-1] == "suspended"

    await stop(harness, ts)

    state = await harness.run_in(ts)
    assert state.status is RunStatus.CANCELLED
    assert state.pending is None
    assert history(harness, ts)[-1] == "closed"
    assert thread_says(harness, ts, f"Stopped: {stopped_by(ASKER)}")


async def test_an_approver_may_stop_someone_elses_run(make_harness: HarnessFactory) -> None:
    harness = await make_harness(approvers=[APPROVER])
    ts = "1700020000.000600"
    await harness.mention(COMPARE_Q, ts=ts)

    await stop(harness, ts, user=APPROVER)

    assert (await harness.run_in(ts)).status is RunStatus.CANCELLED
    assert thread_says(harness, ts, f"Stopped: {stopped_by(APPROVER)}")


async def test_someone_elses_stop_is_refused_and_the_run_goes_on(harness: BotHarness) -> None:
    ts = "1700020000.000700"
    before = await harness.ask(COMPARE_Q, ts=ts)
    assert before.status is RunStatus.PAUSED

    await stop(harness, ts, user=OTHER)

    after = await harness.run_in(ts)
    assert after.status is RunStatus.PAUSED and after.version == before.version
    assert STOP_REFUSED in harness.ephemerals(OTHER)
    assert history(harness, ts)[-1] == "suspended"
    assert not thread_says(harness, ts, "Stopped:")


async def test_a_repeated_stop_event_is_handled_once(harness: BotHarness) -> None:
    ts = "1700020000.000800"
    await harness.mention(COMPARE_Q, ts=ts)
    envelope = session_stopped(ts)
    assert (await harness.event(envelope)).status == 200
    assert (await harness.event(envelope, retry_num=1)).status == 200

    assert (await harness.run_in(ts)).status is RunStatus.CANCELLED
    stopped = [m for m in harness.thread(ts) if "Stopped:" in m.text]
    assert len(stopped) == 1
    assert history(harness, ts).count("closed") == 1


# --------------------------------------------------------------------------- no sessions


@pytest.mark.parametrize("error", ["unknown_method", "not_allowed"])
async def test_without_agent_sessions_the_calls_are_skipped_and_remembered(
    harness: BotHarness, error: str
) -> None:
    harness.fake.sessions.refuse = error
    first, second = "1700020000.000900", "1700020000.001000"

    await harness.mention(VACATION_Q, ts=first)
    await harness.mention(VACATION_Q, ts=second)

    for ts in (first, second):
        state = await harness.run_in(ts)
        assert state.status is RunStatus.ANSWERED
        assert await harness.answer_message(state)
    calls = harness.fake.calls_to(SET_STATUS)
    assert len(calls) == 1 and calls[0].response == {"ok": False, "error": error}
    assert not await harness.bot.deps.publisher.undelivered(CHANNEL), "nothing left to retry"


async def test_a_rate_limited_status_is_retried_through_the_outbox(harness: BotHarness) -> None:
    ts = "1700020000.001100"
    harness.fake.fail_next(SET_STATUS, 429, retry_after=1)

    await harness.mention(VACATION_Q, ts=ts)

    assert (await harness.run_in(ts)).status is RunStatus.ANSWERED
    calls = harness.fake.calls_to(SET_STATUS)
    assert calls[0].params["status"] == "processing" and calls[0].status == 429
    assert calls[-1].params["status"] == "closed" and calls[-1].response["ok"]
    # the retry sets what the run wants by then: "processing" again only if still working
    assert history(harness, ts) in (["processing", "closed"], ["closed"])
    assert not await harness.bot.deps.publisher.undelivered(CHANNEL)


async def test_a_session_slack_named_otherwise_is_renamed_once(harness: BotHarness) -> None:
    ts = "1700020000.001200"
    # Slack made the thread's session first (as it may in an agent DM), with its own title
    harness.fake.sessions.sessions[(CHANNEL, ts)] = AgentSession(
        channel=CHANNEL, thread_ts=ts, status="active", title="New chat"
    )

    await harness.mention(VACATION_Q, ts=ts)
    await harness.mention(VACATION_Q + " Really?", ts="1700020000.001300", thread_ts=ts)

    session = harness.fake.sessions.session(CHANNEL, ts)
    assert session is not None and session.title == VACATION_Q
    assert len(harness.fake.calls_to("agents.sessions.rename")) == 1


# --------------------------------------------------------------------------- Messages tab


async def test_opening_the_messages_tab_greets_once_and_suggests_prompts(
    harness: BotHarness,
) -> None:
    dm = harness.fake.assistant.dm_of(ASKER)

    await harness.open_app(ASKER, channel=dm, tab="messages")
    await harness.open_app(ASKER, channel=dm, tab="messages")
    await harness.open_app(ASKER, channel=dm, tab="home")

    greetings = [m for m in harness.fake.messages(dm) if m.bot_id]
    assert len(greetings) == 1 and f"<@{ASKER}>" in greetings[0].text
    calls = harness.fake.calls_to("assistant.threads.setSuggestedPrompts")
    assert len(calls) == 1 and "thread_ts" not in calls[0].params
    shown = harness.fake.assistant.dm_prompts[dm]
    assert 1 <= len(shown["prompts"]) <= 3
