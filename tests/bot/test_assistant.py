"""Acceptance 2: the assistant pane. Signed Slack requests to the real Bolt app, against
the fake Web API: a new thread gets a greeting and suggested prompts drawn from the
knowledge base; a question in it titles the thread, shows a status while the run works,
answers in the thread and clears the status; pauses are answered by a click and by a
reply in the thread."""

from __future__ import annotations

from pathlib import Path

from agent.knowledge.ingest import ingest_paths
from agent.knowledge.qdrant_kb import open_knowledge_base
from agent.ports import RunEvent, RunEventType
from agent.schemas import (
    ActionType,
    ExecutionPlan,
    InterventionKind,
    PlanStep,
    RunState,
    RunStatus,
)
from blocks import ids
from bot.simulator.assistant import AssistantThread
from bot.simulator.requests import message_envelope
from bot.slack.assistant_prompts import document_questions, welcome
from bot.slack.delivery.assistant_status import ASSISTANT_REF, status_for
from bot.slack.listeners.assistant import READING

from .conftest import (
    ASKER,
    LATEST_Q,
    MONGOLIA_Q,
    VACATION_Q,
    BotHarness,
    button_values,
    has_feedback_buttons,
    message_text,
)

SET_STATUS = "assistant.threads.setStatus"
SET_TITLE = "assistant.threads.setTitle"
SET_PROMPTS = "assistant.threads.setSuggestedPrompts"


async def thread_started(
    h: BotHarness, thread: AssistantThread, context_channel: str | None = None
) -> None:
    """Slack tells the app about the pane's thread (`assistant_thread_started`)."""
    reply = await h.event(h.fake.assistant.started_envelope(thread, context_channel))
    assert reply.status == 200


async def open_pane(h: BotHarness, user: str = ASKER) -> AssistantThread:
    """The person opens GRACE's pane: Slack makes the thread and tells the app."""
    thread = h.fake.assistant.open_thread(user)
    await thread_started(h, thread, context_channel="C0GENERAL1")
    return thread


async def say(h: BotHarness, thread: AssistantThread, text: str, user: str = ASKER) -> None:
    """The person types in the pane: a `message.im` event in the assistant thread."""
    posted = h.fake.workspace.post_user_message(
        thread.channel, user, text, thread_ts=thread.thread_ts
    )
    envelope = message_envelope(
        text=text,
        user=user,
        channel=thread.channel,
        ts=posted.ts,
        thread_ts=thread.thread_ts,
        channel_type="im",
    )
    assert (await h.event(envelope)).status == 200


def statuses(h: BotHarness) -> list[str]:
    return [str(c.params["status"]) for c in h.fake.calls_to(SET_STATUS)]


async def run_of(h: BotHarness, thread: AssistantThread) -> RunState:
    return await h.run_in(thread.thread_ts, channel=thread.channel)


async def test_a_new_thread_gets_a_greeting_and_prompts_from_the_knowledge_base(
    harness: BotHarness,
) -> None:
    thread = await open_pane(harness)

    calls = harness.fake.calls_to(SET_PROMPTS)
    assert len(calls) == 1 and calls[0].response["ok"], calls
    assert calls[0].params["channel_id"] == thread.channel
    assert calls[0].params["thread_ts"] == thread.thread_ts
    kb = harness.bot.services.knowledge_base
    documents = await kb.documents(kb.default_collection)
    questions = {q for d in documents.values() for q in document_questions(d)}
    shown = harness.fake.assistant.thread(thread.channel, thread.thread_ts).prompts
    assert 1 <= len(shown) <= 3
    for prompt in shown:
        assert prompt["message"] in questions, f"{prompt['message']!r} is no document's question"
        assert prompt["message"].startswith(prompt["title"].rstrip("…"))
    greeting = [m for m in harness.thread(thread.thread_ts, thread.channel) if m.is_reply]
    assert len(greeting) == 1 and greeting[0].bot_id
    assert f"<@{ASKER}>" in greeting[0].text and "the knowledge base" in greeting[0].text
    assert kb.default_collection not in greeting[0].text, "the collection's name is internal"
    assert f"({len(documents)} documents)" in greeting[0].text or "documents)" in greeting[0].text
    assert not await harness.store.runs.list_runs(limit=5), "a greeting is not a run"

    # Slack delivers it again under another event id (or the inbox replays it): one greeting
    await harness.bot.intake.resume()
    await thread_started(harness, thread)
    replies = [m for m in harness.thread(thread.thread_ts, thread.channel) if m.is_reply]
    assert len(replies) == 1, [m.text for m in replies]


def test_status_words_say_what_the_run_is_doing() -> None:
    plan = ExecutionPlan(
        original_query="q",
        complexity=0.5,
        estimated_steps=3,
        steps=[
            PlanStep(step_id=1, action=ActionType.RAG_SEARCH, description="d", query="parking"),
            PlanStep(step_id=2, action=ActionType.WEB_SEARCH, description="d"),
            PlanStep(step_id=3, action=ActionType.REASONING, description="d"),
        ],
    )
    state = RunState(query="q", collection="team_handbook", plan=plan)

    def started(*step_ids: int) -> str | None:
        event = RunEvent(type=RunEventType.STEP_STARTED, run_id="r", data={"step_ids": step_ids})
        return status_for(event, state)

    assert started(1) == "is searching the team handbook for “parking”…"
    assert started(2) == "is searching the web…"
    assert started(3) == "is putting the answer together…"
    assert started(2, 1).startswith("is searching the team handbook")
    for ends in (RunEventType.INTERVENTION_REQUESTED, RunEventType.ANSWER_READY):
        assert status_for(RunEvent(type=ends, run_id="r"), state) == ""


async def test_prompts_follow_whatever_the_knowledge_base_holds(tmp_path: Path) -> None:
    """Not tuned to the sample: another knowledge base, other prompts — the questions its
    documents answer, one document after the other, a question another one narrows down
    left out; none where no document asks one."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "parking.md").write_text(
        "# Parking rules\n\n## Where do bikes go?\n\nIn the cellar.\n\n"
        "## Who may park in the yard?\n\nVisitors only.\n"
    )
    (docs / "canteen-faq.csv").write_text(
        "question,answer\nWhen is soup?,Mondays.\nWhen is soup served?,On Mondays.\n"
        "Is there a vegan dish?,Daily.\n"
    )
    (docs / "menu.md").write_text("# Canteen menu\n\nSoup on Mondays.\n")
    kb = open_knowledge_base(path=tmp_path / "qdrant", url=None)
    try:
        empty = await welcome(kb, ASKER)
        assert empty.prompts == [] and "empty" in empty.greeting
        await ingest_paths(kb, [docs / "menu.md"])
        no_questions = await welcome(kb, ASKER)
        await ingest_paths(kb, [docs])
        hello = await welcome(kb, ASKER)
    finally:
        await kb.close()
    assert no_questions.prompts == [] and "(1 document)" in no_questions.greeting
    assert "suggestion" not in no_questions.greeting
    assert [p["message"] for p in hello.prompts] == [
        "When is soup served?",
        "Where do bikes go?",
        "Is there a vegan dish?",
    ]
    assert "(3 documents)" in hello.greeting and "the knowledge base" in hello.greeting


async def test_every_suggested_prompt_is_answered_without_a_person(harness: BotHarness) -> None:
    """What the pane offers, the knowledge base answers: each prompt, asked, ends in an
    answer with no pause for a person."""
    thread = await open_pane(harness)
    offered = harness.fake.assistant.thread(thread.channel, thread.thread_ts).prompts
    assert offered
    for prompt in offered:
        pane = await open_pane(harness)
        await say(harness, pane, prompt["message"])
        state = await run_of(harness, pane)
        assert state.status is RunStatus.ANSWERED, (prompt, state.status, state.error)
        assert not state.interventions, (prompt, state.interventions)


async def test_a_question_is_titled_shown_working_answered_in_the_thread_and_cleared(
    harness: BotHarness,
) -> None:
    thread = await open_pane(harness)
    harness.fake.reset_calls()

    await say(harness, thread, VACATION_Q)

    state = await run_of(harness, thread)
    assert state.status is RunStatus.ANSWERED, state.error
    assert state.thread.channel_id == thread.channel
    titles = harness.fake.calls_to(SET_TITLE)
    assert [c.params["title"] for c in titles] == [VACATION_Q]
    shown = statuses(harness)
    assert shown[0] == READING
    assert any(s.startswith("is searching the ") for s in shown), shown
    assert shown[-1] == "", "the status is cleared once the answer is there"
    assert all(c.response["ok"] for c in harness.fake.calls_to(SET_STATUS))
    pane = harness.fake.assistant.thread(thread.channel, thread.thread_ts)
    assert pane.title == VACATION_Q and pane.status == ""
    answer = await harness.answer_message(state)
    assert answer.channel == thread.channel and answer.thread_ts == thread.thread_ts
    assert has_feedback_buttons(answer)
    ref = await harness.store.get_message_ref(run_id=state.run_id, kind=ASSISTANT_REF)
    assert ref == (thread.channel, thread.thread_ts)

    # a follow-up in the same thread: a second run, the thread keeps its first title
    await say(harness, thread, "And how many for part-time employees?")
    runs = await harness.runs_in(thread.thread_ts, channel=thread.channel)
    assert len(runs) == 2
    assert len(harness.fake.calls_to(SET_TITLE)) == 1
    assert statuses(harness)[-1] == ""


async def test_an_escalation_in_the_pane_is_answered_by_a_click(harness: BotHarness) -> None:
    thread = await open_pane(harness)
    await say(harness, thread, MONGOLIA_Q)

    state = await run_of(harness, thread)
    assert state.status is RunStatus.PAUSED and state.pending is not None
    assert state.pending.kind is InterventionKind.ESCALATE
    assert statuses(harness)[-1] == "", "paused for a person: no 'working' status"
    message = await harness.intervention_message(state, state.pending.intervention_id)
    assert message.channel == thread.channel and message.thread_ts == thread.thread_ts
    before = len(statuses(harness))

    buttons = button_values(message)
    reply = await harness.click(
        ids.ESCALATE_PROCEED, buttons[ids.ESCALATE_PROCEED], message=message
    )

    assert reply.status == 200
    state = await run_of(harness, thread)
    assert len(await harness.runs_in(thread.thread_ts, channel=thread.channel)) == 1
    later = statuses(harness)[before:]
    assert later and later[0] != "", "working again after the click"
    assert later[-1] == ""
    assert not button_values(harness.fake.message(thread.channel, message.ts)), "decided"
    for _ in range(5):  # further confirmations, if the run asks for more
        if state.pending is None:
            break
        pending = await harness.intervention_message(state, state.pending.intervention_id)
        values = button_values(pending)
        action = next(a for a in (ids.CONFIRM_PROCEED, ids.ESCALATE_PROCEED) if a in values)
        await harness.click(action, values[action], message=pending)
        state = await run_of(harness, thread)
    assert state.status is RunStatus.ANSWERED, state.error
    assert (await harness.answer_message(state)).thread_ts == thread.thread_ts
    assert harness.fake.assistant.thread(thread.channel, thread.thread_ts).status == ""


async def test_a_clarifying_question_in_the_pane_is_answered_by_a_reply(
    harness: BotHarness,
) -> None:
    thread = await open_pane(harness)
    await say(harness, thread, LATEST_Q)
    state = await run_of(harness, thread)
    assert state.pending is not None and state.pending.kind is InterventionKind.ASK_USER
    question = await harness.intervention_message(state, state.pending.intervention_id)
    assert question.thread_ts == thread.thread_ts
    assert "Which product" in message_text(question)

    await say(harness, thread, "Beacon Server")

    runs = await harness.runs_in(thread.thread_ts, channel=thread.channel)
    assert len(runs) == 1, "the reply answers the pause, it is not a new question"
    state = runs[0]
    assert state.user_inputs == ["Beacon Server"]
    assert state.status is RunStatus.ANSWERED, state.error
    assert len(harness.fake.calls_to(SET_TITLE)) == 1, "a reply does not retitle the thread"
    assert statuses(harness)[-1] == ""


async def test_a_new_process_keeps_the_status_of_a_pane_run(harness: BotHarness) -> None:
    """The run's place in an assistant thread is stored: after a restart, answering its
    pause shows the status again and clears it at the end."""
    thread = await open_pane(harness)
    await say(harness, thread, LATEST_Q)
    assert (await run_of(harness, thread)).status is RunStatus.PAUSED

    await harness.restart()
    harness.fake.reset_calls()
    await say(harness, thread, "Beacon Server")

    assert (await run_of(harness, thread)).status is RunStatus.ANSWERED
    shown = statuses(harness)
    assert shown and shown[0] != "" and shown[-1] == "", shown
    assert not harness.fake.calls_to(SET_TITLE)


async def test_a_pane_run_retried_by_command_keeps_its_status_line(harness: BotHarness) -> None:
    """`/grace retry` of a pane run: the new run is a pane run too — its thread's status
    line follows it and is cleared at the end, and it answers in the same thread."""
    thread = await open_pane(harness)
    await say(harness, thread, VACATION_Q)
    first = await run_of(harness, thread)
    assert first.status is RunStatus.ANSWERED, first.error
    harness.fake.reset_calls()

    reply = await harness.command(f"retry {first.run_id}", channel=thread.channel)
    assert reply.status == 200

    runs = await harness.runs_in(thread.thread_ts, channel=thread.channel)
    assert len(runs) == 2
    retried = await run_of(harness, thread)
    assert retried.run_id != first.run_id and retried.status is RunStatus.ANSWERED
    ref = await harness.store.get_message_ref(run_id=retried.run_id, kind=ASSISTANT_REF)
    assert ref == (thread.channel, thread.thread_ts)
    shown = statuses(harness)
    assert any(s.startswith("is searching the ") for s in shown), shown
    assert shown[-1] == "", "the status is cleared once the answer is there"
    assert harness.fake.assistant.thread(thread.channel, thread.thread_ts).status == ""
    answer = await harness.answer_message(retried)
    assert answer.channel == thread.channel and answer.thread_ts == thread.thread_ts
    assert has_feedback_buttons(answer)
    assert not harness.fake.calls_to(SET_TITLE), "the thread keeps its title"
