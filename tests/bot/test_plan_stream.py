"""The plan as Slack's native plan: a streamed reply in the question's thread.

Driven as Slack drives the bot (signed events) against the fake Web API, which checks
every chunk with slack_sdk's models: `chat.startStream` opens the plan, `appendStream`
moves its tasks pending → in progress → complete and adds the answer, `stopStream` ends
it with the sources, feedback and run id. Where the workspace refuses to stream, the
plan is the edited message made of `plan` / `task_card` blocks, and the workspace is
remembered. A stream Slack interrupts still ends with exactly one complete answer.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from agent.llm.offline import OfflineModel
from agent.schemas import RunStatus, utcnow
from blocks.common import short_id
from bot.simulator.webapi import FakeSlack, RecordedCall
from bot.simulator.workspace import StoredMessage
from bot.slack.delivery.plan_stream import REFUSED
from bot.slack.dev import PacedModel

from .conftest import (
    ASKER,
    CHANNEL,
    MONGOLIA_Q,
    TEAM,
    VACATION_Q,
    BotHarness,
    HarnessFactory,
    has_feedback_buttons,
    message_text,
    proceed_through_confirms,
)

TS = "1700070000.000100"
TS2 = "1700070001.000100"
TS3 = "1700070002.000100"
ORDER = {"pending": 0, "in_progress": 1, "complete": 2, "error": 2}


def _chunks(calls: list[RecordedCall]) -> list[dict[str, Any]]:
    return [c for call in calls if call.response.get("ok") for c in call.params.get("chunks", [])]


def _stream_calls(fake: FakeSlack) -> list[RecordedCall]:
    wanted = ("chat.startStream", "chat.appendStream", "chat.stopStream")
    return [c for c in fake.calls if c.method in wanted]


def _shows_answer_text(message: StoredMessage, answer: str) -> bool:
    """A block of the message starts with the answer's text (its sources may quote the
    same words: they start with their heading)."""
    start = answer.split("\n")[0][:40]
    for block in message.blocks:
        text = block.get("text")
        text = text.get("text") if isinstance(text, dict) else text
        if isinstance(text, str) and text.startswith(start):
            return True
    return False


def _answers(harness: BotHarness, ts: str) -> list[StoredMessage]:
    return [m for m in harness.thread(ts) if has_feedback_buttons(m)]


async def _between_tries(harness: BotHarness, run_id: str) -> None:
    """Wait until the run's delivery failed a try and nobody is working on it."""
    for _ in range(200):
        delivery = await harness.bot.services.deliveries.get(run_id)
        if delivery is not None and delivery.last_error and delivery.owner is None:
            return
        await asyncio.sleep(0.05)


async def test_the_plan_streams_tasks_through_their_states_then_the_answer(
    make_harness: HarnessFactory, fake: FakeSlack
) -> None:
    harness = await make_harness(plan_display="auto", llm=PacedModel(OfflineModel(), 0.2))
    state = await harness.ask(VACATION_Q, ts=TS)
    assert state.status is RunStatus.ANSWERED and state.plan is not None

    calls = _stream_calls(fake)
    assert calls[0].method == "chat.startStream"
    assert calls[-1].method == "chat.stopStream"
    assert all(c.response.get("ok") for c in calls), [c.response for c in calls]
    start = calls[0].params
    assert start["thread_ts"] == TS and start["channel"] == CHANNEL
    assert start["recipient_user_id"] == ASKER and start["recipient_team_id"] == TEAM
    assert start["task_display_mode"] == "plan"
    assert start["chunks"][0]["type"] == "plan_update"

    # every task moves forward only, and ends complete; at least one was seen working
    seen: dict[str, list[str]] = {}
    for chunk in _chunks(calls):
        if chunk["type"] == "task_update":
            seen.setdefault(chunk["id"], []).append(chunk["status"])
    assert sorted(seen) == [str(s.step_id) for s in state.plan.steps]
    for statuses in seen.values():
        ranks = [ORDER[s] for s in statuses]
        assert ranks == sorted(ranks), statuses
        assert statuses[-1] == "complete"
    # the stream opens as soon as the plan is made: every task starts pending; the
    # reasoning step (two paced model calls) is seen waiting, working, then done
    assert all(statuses[0] == "pending" for statuses in seen.values()), seen
    assert seen[str(state.plan.steps[-1].step_id)] == ["pending", "in_progress", "complete"]
    titles = {c["title"] for c in _chunks(calls) if c["type"] == "task_update"}
    assert {s.description for s in state.plan.steps} <= titles
    search = next(c for c in _chunks(calls) if c["type"] == "task_update" and c.get("output"))
    assert search["details"].startswith("Looked in the knowledge base for")
    assert search["output"].startswith("found")

    # the answer arrives as markdown_text, then the stop adds the final blocks
    markdown = [c["text"] for c in _chunks(calls) if c["type"] == "markdown_text"]
    assert len(markdown) == 1 and state.final_answer.split()[0] in markdown[0]
    stop = calls[-1].params
    kinds = [b["type"] for b in stop["blocks"]]
    assert "context_actions" in kinds and "plan" not in kinds
    assert f"run `{short_id(state.run_id)}`" in str(stop["blocks"])
    assert stop["metadata"]["event_payload"] == {"run_id": state.run_id, "kind": "answer"}

    # one reply in the thread: the plan, the answer and the feedback buttons together
    assert fake.calls_to("chat.postMessage") == []
    (message,) = harness.thread(TS)
    assert not message.streaming and has_feedback_buttons(message)
    plan = message.blocks[0]
    assert plan["type"] == "plan" and plan["title"] == "Done"
    assert [t["status"] for t in plan["tasks"]] == ["complete"] * len(state.plan.steps)
    assert message.blocks[1]["type"] == "markdown"
    assert (await harness.answer_message(state)).ts == message.ts


async def test_a_workspace_that_refuses_streaming_gets_the_plan_card_message(
    make_harness: HarnessFactory, fake: FakeSlack
) -> None:
    fake.workspace.refuse_streaming = "feature_not_enabled"
    harness = await make_harness(plan_display="auto")
    state = await harness.ask(VACATION_Q, ts=TS)
    assert state.status is RunStatus.ANSWERED and state.plan is not None
    assert len(fake.calls_to("chat.startStream")) == 1
    assert fake.calls_to("chat.appendStream") == fake.calls_to("chat.stopStream") == []

    plan = await harness.plan_message(state)
    blocks = [b for b in plan.blocks if b["type"] == "plan"]
    assert len(blocks) == 1
    tasks = blocks[0]["tasks"]
    assert [t["type"] for t in tasks] == ["task_card"] * len(state.plan.steps)
    assert [t["status"] for t in tasks] == ["complete"] * len(state.plan.steps)
    assert tasks[0]["title"] == state.plan.steps[0].description
    assert plan.edits >= 1, "the plan message is edited as the steps progress"
    assert len(_answers(harness, TS)) == 1

    # the workspace is remembered: the next question does not try to stream
    await harness.mention(VACATION_Q, ts=TS2)
    assert (await harness.run_in(TS2)).status is RunStatus.ANSWERED
    assert len(fake.calls_to("chat.startStream")) == 1
    assert len(_answers(harness, TS2)) == 1


async def test_a_refusal_to_stream_outlives_a_restart_until_it_expires(
    make_harness: HarnessFactory, fake: FakeSlack
) -> None:
    """A restarted GRACE does not try the refusing workspace again; once the refusal is
    old enough (an admin may have turned streaming on since), it tries once more."""
    fake.workspace.refuse_streaming = "feature_not_enabled"
    harness = await make_harness(plan_display="auto")
    await harness.mention(VACATION_Q, ts=TS)
    assert (await harness.run_in(TS)).status is RunStatus.ANSWERED
    assert len(fake.calls_to("chat.startStream")) == 1

    await harness.restart()
    state = await harness.ask(VACATION_Q, ts=TS2)
    assert state.status is RunStatus.ANSWERED
    assert len(fake.calls_to("chat.startStream")) == 1, "remembered across the restart"
    assert any(b["type"] == "plan" for b in (await harness.plan_message(state)).blocks)
    assert len(_answers(harness, TS2)) == 1

    # the refusal runs out (as if a day had passed) and the workspace now streams
    until = utcnow() - timedelta(seconds=1)
    await harness.store.note_workspace(TEAM, REFUSED, "feature_not_enabled", until=until)
    fake.workspace.refuse_streaming = None
    await harness.restart()
    streamed = await harness.ask(VACATION_Q, ts=TS3)
    assert streamed.status is RunStatus.ANSWERED
    assert len(fake.calls_to("chat.startStream")) == 2
    (message,) = harness.thread(TS3)
    assert message.stream is not None and has_feedback_buttons(message)


async def test_a_server_error_mid_stream_is_retried_and_the_answer_arrives_once(
    make_harness: HarnessFactory, fake: FakeSlack
) -> None:
    harness = await make_harness(plan_display="auto", llm=PacedModel(OfflineModel(), 0.1))
    fake.fail_next("chat.appendStream", 500)
    state = await harness.ask(VACATION_Q, ts=TS)
    assert state.status is RunStatus.ANSWERED

    appends = fake.calls_to("chat.appendStream")
    assert appends[0].status == 500 and any(c.response.get("ok") for c in appends[1:])
    assert len(fake.calls_to("chat.startStream")) == 1
    assert fake.calls_to("chat.postMessage") == []
    (message,) = harness.thread(TS)
    assert not message.streaming and has_feedback_buttons(message)
    assert [b["type"] for b in message.blocks].count("markdown") == 1
    assert message.stream is not None
    assert message.stream["markdown"].count(state.final_answer.split("\n")[0][:40]) == 1


async def test_an_answer_slack_carried_out_but_answered_500_shows_once(
    make_harness: HarnessFactory, fake: FakeSlack
) -> None:
    """The answer ends the stream in the same call as its footer: when Slack carries the
    stop out but answers 500, the outcome is unknown — the same stop is sent again, Slack
    refuses it (the stream is no longer open), and that settles it. The answer shows
    once, with its buttons, and no message repeats it. (An answer appended on its own,
    then carried out with a 500, showed twice: in the stream, then as a message.)"""
    workspace = fake.workspace

    def append(params: dict[str, Any], call: RecordedCall) -> dict[str, Any]:
        message = workspace.append_stream(
            str(params["channel"]), str(params["ts"]), chunks=params.get("chunks")
        )
        if any(c.get("type") == "markdown_text" for c in params.get("chunks") or []):
            call.status = 500
        return {"channel": message.channel, "ts": message.ts}

    def stop(params: dict[str, Any], call: RecordedCall) -> dict[str, Any]:
        message = workspace.stop_stream(
            str(params["channel"]),
            str(params["ts"]),
            chunks=params.get("chunks"),
            blocks=params.get("blocks") or None,
            metadata=params.get("metadata") if isinstance(params.get("metadata"), dict) else None,
        )
        if len(fake.calls_to("chat.stopStream")) == 1:
            call.status = 500  # done, but the answer that says so is lost
        return {"channel": message.channel, "ts": message.ts}

    fake.add_method("chat.appendStream", append)
    fake.add_method("chat.stopStream", stop)
    harness = await make_harness(plan_display="auto")
    state = await harness.ask(VACATION_Q, ts=TS)
    assert state.status is RunStatus.ANSWERED

    stops = fake.calls_to("chat.stopStream")
    assert [c.status for c in stops[:2]] == [500, 200] and len(stops) == 2
    assert stops[1].response.get("error") == "message_not_in_streaming_state"
    thread = harness.thread(TS)
    assert len(thread) == 1, [message_text(m) for m in thread]
    (stream,) = thread
    assert not stream.streaming and has_feedback_buttons(stream)
    assert stream.stream is not None
    assert stream.stream["markdown"].count(state.final_answer.split("\n")[0][:40]) == 1
    assert fake.calls_to("chat.postMessage") == []
    assert not fake.calls_to("conversations.replies"), "settled without reading the thread"
    assert (await harness.answer_message(state)).ts == stream.ts


async def test_a_refused_start_whose_stream_exists_is_taken_up_again(
    make_harness: HarnessFactory, fake: FakeSlack
) -> None:
    """`chat.startStream` carried out, its answer lost (here a 500; a process killed at
    that moment leaves the same stored state): the next pass finds the stream in the
    thread — not the bot's plain notice beside it — and carries on in it: nothing left
    "in progress", no second plan."""
    started = fake.handler("chat.startStream")

    def start(params: dict[str, Any], call: RecordedCall) -> dict[str, Any]:
        if not fake.calls_to("chat.startStream")[:-1]:
            fake.workspace.post_message(CHANNEL, text="A notice.", thread_ts=TS)
        reply = started(params, call)
        if len(fake.calls_to("chat.startStream")) == 1:
            call.status = 500
        return reply

    fake.add_method("chat.startStream", start)
    harness = await make_harness(plan_display="auto")
    await harness.mention(VACATION_Q, ts=TS, settle=False)
    await harness.bot.deps.tasks.idle()
    state = await harness.run_in(TS)
    assert state.status is RunStatus.ANSWERED
    for _ in range(400):  # the failed pass is retried after its backoff
        await harness.settle()
        if _answers(harness, TS):
            break
        await asyncio.sleep(0.05)

    thread = harness.thread(TS)
    assert all(not m.streaming for m in thread), "no stream left open"
    assert len(thread) == 2, [message_text(m) for m in thread]
    notice, stream = thread
    assert notice.text == "A notice." and not notice.edits
    assert has_feedback_buttons(stream) and stream.blocks[0]["type"] == "plan"
    assert len(fake.calls_to("chat.startStream")) == 1
    assert fake.calls_to("chat.postMessage") == []


async def test_after_a_restart_the_stream_is_finished_from_the_stored_state(
    make_harness: HarnessFactory, fake: FakeSlack
) -> None:
    harness = await make_harness(plan_display="auto")
    fake.fail_for("chat.appendStream", 600, 503)
    await harness.mention(VACATION_Q, ts=TS, settle=False)
    await harness.bot.deps.tasks.idle()
    assert (await harness.run_in(TS)).status is RunStatus.ANSWERED
    (streaming,) = harness.thread(TS)
    assert streaming.streaming, "Slack refused every append so far"
    run_id = (await harness.run_in(TS)).run_id
    # stop between two tries (as a process stopped mid-pass would leave a lease its own
    # pid still seems to hold for a while)
    await _between_tries(harness, run_id)

    await harness.stop(grace=1)
    fake.clear_faults()
    await harness.start()
    await harness.bot.recover()
    for _ in range(400):  # the stored backoff runs out; the sweep (`resume`) picks it up
        await harness.bot.deps.publisher.resume()
        await harness.settle()
        if not harness.thread(TS)[0].streaming:
            break
        await asyncio.sleep(0.1)

    state = await harness.run_in(TS)
    (message,) = harness.thread(TS)
    assert message.ts == streaming.ts and not message.streaming
    assert has_feedback_buttons(message)
    assert message.blocks[0]["type"] == "plan"
    assert len(fake.calls_to("chat.startStream")) == 1
    assert (await harness.answer_message(state)).ts == message.ts


async def test_a_pause_stops_the_stream_and_the_plan_goes_on_below_it(
    make_harness: HarnessFactory, fake: FakeSlack
) -> None:
    """A run waiting for a person no longer streams ("● writing…" under a plan that
    waits): the stream is stopped when the pause is posted below it. Once the run goes
    on, its plan is the edited plan message below the pause (as in a workspace that does
    not stream) and the answer a message below that, where the person reads on."""
    harness = await make_harness(plan_display="auto")
    paused = await harness.ask(MONGOLIA_Q, ts=TS)
    assert paused.pending is not None
    stream, pause = harness.thread(TS)
    assert not stream.streaming, "stopped while it waits for a person"
    assert stream.blocks[0]["title"] == "Waiting for you (see below)"
    assert all(b["type"] != "markdown" for b in stream.blocks), "no answer in the stream"
    assert len(fake.calls_to("chat.stopStream")) == 1

    state = await proceed_through_confirms(harness, TS)
    assert state.status is RunStatus.ANSWERED
    thread = harness.thread(TS)
    assert [m.ts for m in thread[:2]] == [stream.ts, pause.ts]
    plan = await harness.plan_message(state)
    assert plan.ts > pause.ts and any(b["type"] == "plan" for b in plan.blocks)
    (answer,) = _answers(harness, TS)
    assert answer.ts > plan.ts and answer.ts != stream.ts
    assert len(fake.calls_to("chat.stopStream")) == 1
    assert len(fake.calls_to("chat.startStream")) == 1


async def test_a_stop_slack_refuses_for_good_shows_the_answer_once_even_after_a_restart(
    make_harness: HarnessFactory, fake: FakeSlack
) -> None:
    """The answer is in the stream when `chat.stopStream` is refused (here its footer):
    the person has read it. Only what the stream could not show — sources, feedback,
    run id — follows as a message; a restart mid-way posts nothing twice."""
    harness = await make_harness(plan_display="auto")
    fake.fail_next("chat.stopStream", error="invalid_blocks")
    fake.fail_for("chat.postMessage", 600, 503)
    await harness.mention(VACATION_Q, ts=TS, settle=False)
    await harness.bot.deps.tasks.idle()
    state = await harness.run_in(TS)
    assert state.status is RunStatus.ANSWERED
    await _between_tries(harness, state.run_id)  # the footer's post waits out the 503s

    await harness.stop(grace=1)
    fake.clear_faults()
    await harness.start()
    await harness.bot.recover()
    for _ in range(400):
        await harness.bot.deps.publisher.resume()
        await harness.settle()
        if _answers(harness, TS):
            break
        await asyncio.sleep(0.1)

    thread = harness.thread(TS)
    showing = [m for m in thread if _shows_answer_text(m, state.final_answer)]
    assert len(showing) == 1, [message_text(m) for m in thread]
    (stream,) = showing
    assert not stream.streaming and stream.blocks[0]["type"] == "plan"
    (footer,) = _answers(harness, TS)
    assert footer.ts != stream.ts and short_id(state.run_id) in message_text(footer)
    assert (await harness.answer_message(state)).ts == footer.ts
    assert len(thread) == 2, "no plan message: the stream shows the plan"
    assert len(fake.calls_to("chat.startStream")) == 1

    await harness.bot.deps.publisher.resume()  # another pass finds nothing to do
    await harness.settle()
    assert len(harness.thread(TS)) == 2
