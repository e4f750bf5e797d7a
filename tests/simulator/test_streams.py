"""The fake Slack's streamed replies: chunks checked as Slack checks them, tasks updated in
place, the stream shown as `plan` / `task_card` / `markdown` blocks, and a workspace that
refuses to stream."""

from __future__ import annotations

from pathlib import Path

import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.models.messages.chunk import MarkdownTextChunk, PlanUpdateChunk, TaskUpdateChunk
from slack_sdk.web.async_client import AsyncWebClient

from bot.simulator.webapi import FakeSlack
from bot.simulator.workspace import DEFAULT_CHANNEL_ID, SlackWorkspace

CHANNEL = DEFAULT_CHANNEL_ID


async def _error(call: object) -> str:
    with pytest.raises(SlackApiError) as caught:
        await call  # type: ignore[misc]
    return str(caught.value.response["error"])


async def test_a_stream_grows_then_stops_with_its_final_blocks(tmp_path: Path) -> None:
    async with FakeSlack() as fake:
        client = AsyncWebClient(token="xoxb-test", base_url=fake.base_url)
        parent = await client.chat_postMessage(channel=CHANNEL, text="question")
        started = await client.chat_startStream(
            channel=CHANNEL,
            thread_ts=parent["ts"],
            recipient_user_id="U0ASKER001",
            recipient_team_id="T0FAKE0001",
            task_display_mode="plan",
            chunks=[
                PlanUpdateChunk(title="Working"),
                TaskUpdateChunk(id="1", title="Look", status="pending"),
            ],
        )
        ts = started["ts"]
        assert fake.message(CHANNEL, ts).streaming
        await client.chat_appendStream(
            channel=CHANNEL,
            ts=ts,
            chunks=[TaskUpdateChunk(id="1", title="Look", status="complete", output="found it")],
        )
        await client.chat_appendStream(
            channel=CHANNEL, ts=ts, chunks=[MarkdownTextChunk(text="**Yes.**")]
        )
        await client.chat_stopStream(channel=CHANNEL, ts=ts, blocks=[{"type": "divider"}])

        message = fake.message(CHANNEL, ts)
        assert not message.streaming and message.text == "**Yes.**" and message.edits == 0
        plan, text, divider = message.blocks
        assert plan["title"] == "Working" and len(plan["tasks"]) == 1
        assert plan["tasks"][0]["status"] == "complete"
        assert plan["tasks"][0]["output"]["type"] == "rich_text"
        assert text == {"type": "markdown", "text": "**Yes.**"} and divider["type"] == "divider"
        again = client.chat_appendStream(channel=CHANNEL, ts=ts, markdown_text="more")
        assert await _error(again) == "message_not_in_streaming_state"

        fake.workspace.save(tmp_path / "ws.json")
        loaded = SlackWorkspace()
        loaded.load(tmp_path / "ws.json")
        assert loaded.message(CHANNEL, ts).stream == message.stream


async def test_chunks_and_recipients_are_checked_and_streaming_can_be_refused() -> None:
    async with FakeSlack() as fake:
        client = AsyncWebClient(token="xoxb-test", base_url=fake.base_url)
        thread = (await client.chat_postMessage(channel=CHANNEL, text="q"))["ts"]
        no_recipient = client.chat_startStream(channel=CHANNEL, thread_ts=thread)
        assert await _error(no_recipient) == "invalid_arguments"
        bad_status = client.chat_startStream(
            channel=CHANNEL,
            thread_ts=thread,
            recipient_user_id="U1",
            recipient_team_id="T1",
            chunks=[{"type": "task_update", "id": "1", "title": "t", "status": "done"}],
        )
        assert await _error(bad_status) == "invalid_chunks"

        fake.workspace.refuse_streaming = "feature_not_enabled"
        refused = client.chat_startStream(
            channel=CHANNEL, thread_ts=thread, recipient_user_id="U1", recipient_team_id="T1"
        )
        assert await _error(refused) == "feature_not_enabled"
        assert fake.thread(CHANNEL, thread)[1:] == []
