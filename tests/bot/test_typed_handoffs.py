"""The typed hand-offs keep what is stored: inbox rows written before the items were typed
read back as items (and items are stored in the same shape), a run stored before it had
an origin gets one from its thread, and the plan stream's progress tokens round-trip."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from agent.schemas import RunOrigin, RunState, ThreadKey
from bot.slack.delivery.stream_progress import StreamProgress, StreamStage
from bot.slack.items import (
    AssistantQuestion,
    Click,
    Command,
    InboxKind,
    MessagesOpened,
    ModifySubmission,
    Question,
    Reply,
    SessionStopped,
    ThreadStarted,
    read_item,
    stored,
)
from storage.inbox import InboxEntry

THREAD = {"team": "T1", "channel": "C1", "thread_ts": "1700000000.000100"}
LEGACY_ROWS: list[tuple[str, dict[str, Any]]] = [
    ("question", {**THREAD, "user": "U1", "text": "<@UBOT> how many vacation days?"}),
    ("reply", {**THREAD, "user": "U1", "text": "the Tokyo office"}),
    ("assistant_question", {**THREAD, "user": "U1", "text": "how many vacation days?"}),
    ("assistant_thread_started", {**THREAD, "user": "U1"}),
    ("click", {"type": "block_actions", "actions": [{"action_id": "x"}], "user": {"id": "U1"}}),
    ("modify", {"metadata": "run|iv|C1|1.0", "user": "U1", "text": "search the wiki too"}),
    ("command", {"sub": "retry", "run_id": "abc123", "user": "U1", "channel": "C1"}),
]
"""Payloads as the listeners wrote them before `bot.slack.items` existed."""
NEWER_ROWS: list[tuple[str, dict[str, Any]]] = [
    ("agent_session_stopped", {**THREAD, "user": "U1", "streaming_message_ts": ["1.2"]}),
    ("messages_tab_opened", {"team": "T1", "channel": "D1", "user": "U1"}),
]
"""Kinds added since (the Agent messaging experience), in the shape they are stored."""


def _entry(kind: str, payload: dict[str, Any]) -> InboxEntry:
    return InboxEntry(
        id=1,
        event_id="Ev1",
        kind=kind,
        payload=payload,
        attempts=0,
        created_at=datetime.now(UTC),
    )


@pytest.mark.parametrize(
    ("kind", "payload"), LEGACY_ROWS + NEWER_ROWS, ids=[k for k, _ in LEGACY_ROWS + NEWER_ROWS]
)
def test_rows_stored_before_typed_items_read_back_and_store_the_same(
    kind: str, payload: dict[str, Any]
) -> None:
    item = read_item(_entry(kind, payload))
    assert item.kind == InboxKind(kind)
    row = stored(item, event_id="Ev1")
    assert row.kind == kind
    assert row.payload == payload


def test_each_kind_reads_back_as_its_own_item() -> None:
    expected = [
        Question,
        Reply,
        AssistantQuestion,
        ThreadStarted,
        Click,
        ModifySubmission,
        Command,
        SessionStopped,
        MessagesOpened,
    ]
    rows = LEGACY_ROWS + NEWER_ROWS
    assert [type(read_item(_entry(k, p))) for k, p in rows] == expected
    assert {k for k, _ in rows} == {kind.value for kind in InboxKind}


def test_a_message_item_names_its_thread() -> None:
    item = read_item(_entry(*LEGACY_ROWS[0]))
    assert isinstance(item, Question)
    assert item.key == ThreadKey(team_id="T1", channel_id="C1", thread_ts="1700000000.000100")


def test_a_row_that_is_not_its_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="text"):
        read_item(_entry("question", {**THREAD, "user": "U1"}))


def test_runs_stored_without_an_origin_get_it_from_their_thread() -> None:
    slack = RunState(query="q", thread=ThreadKey(team_id="T1", channel_id="C1", thread_ts="1.0"))
    command_line = RunState(query="q")
    assert slack.origin is RunOrigin.SLACK_THREAD
    assert command_line.origin is RunOrigin.COMMAND_LINE
    older = slack.model_dump(mode="json")
    del older["origin"]  # a row written before runs had an origin
    assert RunState.model_validate(older).origin is RunOrigin.SLACK_THREAD


def test_an_explicit_origin_is_kept_through_storage() -> None:
    pane = RunState(
        query="q",
        thread=ThreadKey(team_id="T1", channel_id="D1", thread_ts="1.0"),
        origin=RunOrigin.ASSISTANT_PANE,
    )
    assert RunState.model_validate_json(pane.model_dump_json()).origin is RunOrigin.ASSISTANT_PANE


@pytest.mark.parametrize(
    ("token", "stage", "digest"),
    [
        ("starting", StreamStage.STARTING, ""),
        ("o:0123abcd", StreamStage.OPEN, "0123abcd"),
        ("a:feed", StreamStage.ANSWERING, "feed"),
        ("A:feed", StreamStage.ANSWERED, "feed"),
        ("done", StreamStage.DONE, ""),
        ("plan-done", StreamStage.PLAN_DONE, ""),
        ("paused", StreamStage.PAUSED, ""),
        ("text-done", StreamStage.TEXT_DONE, ""),
        ("message", StreamStage.MESSAGE, ""),
    ],
)
def test_stream_progress_reads_and_writes_the_stored_tokens(
    token: str, stage: StreamStage, digest: str
) -> None:
    progress = StreamProgress.parse(token)
    assert progress == StreamProgress(stage, digest)
    assert progress.token() == token
