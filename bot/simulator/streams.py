"""Streamed messages (`chat.startStream` / `appendStream` / `stopStream`) in the fake Slack.

A stream is a bot reply whose content arrives in chunks: `markdown_text` (appended),
`plan_update` (the plan's title), `task_update` (a task by id: added, or changed in place)
and `blocks`. The workspace keeps what a stream has received in `StreamState` and shows
it as ordinary blocks — a `plan` block of `task_card`s (or, in `timeline` mode, the task
cards themselves), then a `markdown` block — so the page, `conversations.replies` and
the tests read a streamed message like any other. Chunks are checked with slack_sdk's
models, as Slack checks them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from slack_sdk.errors import SlackObjectFormationError
from slack_sdk.models.messages.chunk import Chunk

TASK_STATUSES = frozenset({"pending", "in_progress", "complete", "error"})
MAX_MARKDOWN = 12_000
DISPLAY_MODES = frozenset({"plan", "timeline"})


class ChunkError(ValueError):
    """A chunk Slack would refuse (`invalid_chunks`)."""


@dataclass
class StreamState:
    """What one streamed message has received so far."""

    mode: str = "timeline"
    title: str = ""
    tasks: dict[str, dict[str, Any]] = field(default_factory=dict)
    markdown: str = ""
    extra_blocks: list[dict[str, Any]] = field(default_factory=list)
    recipient: str = ""
    chunks_received: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "title": self.title,
            "tasks": list(self.tasks.values()),
            "markdown": self.markdown,
            "extra_blocks": self.extra_blocks,
            "recipient": self.recipient,
            "chunks_received": self.chunks_received,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StreamState:
        return cls(
            mode=str(data.get("mode", "timeline")),
            title=str(data.get("title", "")),
            tasks={str(t["id"]): t for t in data.get("tasks", []) if isinstance(t, dict)},
            markdown=str(data.get("markdown", "")),
            extra_blocks=list(data.get("extra_blocks", [])),
            recipient=str(data.get("recipient", "")),
            chunks_received=int(data.get("chunks_received", 0)),
        )


def check_chunks(chunks: Any) -> list[dict[str, Any]]:
    """The chunks as dicts, or `ChunkError` for anything Slack would refuse."""
    if chunks is None:
        return []
    if not isinstance(chunks, list):
        raise ChunkError("chunks must be a JSON array")
    checked: list[dict[str, Any]] = []
    for index, raw in enumerate(chunks):
        if not isinstance(raw, dict):
            raise ChunkError(f"chunk {index} is not an object")
        try:
            parsed = Chunk.parse(dict(raw))
            if parsed is None:
                raise ChunkError(f"chunk {index}: unknown type {raw.get('type')!r}")
            data = parsed.to_dict()
        except (SlackObjectFormationError, TypeError, KeyError) as exc:
            raise ChunkError(f"chunk {index}: {exc}") from exc
        kind = data["type"]
        if kind == "task_update":
            if not data.get("id") or not data.get("title"):
                raise ChunkError(f"chunk {index}: a task_update needs id and title")
            if data.get("status") not in TASK_STATUSES:
                raise ChunkError(f"chunk {index}: status {data.get('status')!r}")
            for source in data.get("sources") or []:
                if source.get("type") != "url" or not source.get("url") or not source.get("text"):
                    raise ChunkError(f"chunk {index}: a source needs type url, url and text")
        elif kind == "plan_update" and not data.get("title"):
            raise ChunkError(f"chunk {index}: a plan_update needs a title")
        elif kind == "markdown_text" and len(str(data.get("text", ""))) > MAX_MARKDOWN:
            raise ChunkError(f"chunk {index}: markdown_text over {MAX_MARKDOWN} characters")
        checked.append(data)
    return checked


def apply_chunks(stream: StreamState, chunks: list[dict[str, Any]], markdown: str = "") -> None:
    """Add checked chunks (and a `markdown_text` argument) to the stream."""
    if markdown:
        if len(markdown) > MAX_MARKDOWN:
            raise ChunkError(f"markdown_text over {MAX_MARKDOWN} characters")
        stream.markdown += markdown
    for chunk in chunks:
        kind = chunk["type"]
        if kind == "markdown_text":
            stream.markdown += str(chunk.get("text", ""))
        elif kind == "plan_update":
            stream.title = str(chunk["title"])
        elif kind == "task_update":
            stream.tasks[str(chunk["id"])] = {**stream.tasks.get(str(chunk["id"]), {}), **chunk}
        elif kind == "blocks":
            stream.extra_blocks.extend(chunk.get("blocks") or [])
        stream.chunks_received += 1


def _rich(text: Any) -> dict[str, Any] | None:
    if not text:
        return None
    return {
        "type": "rich_text",
        "elements": [{"type": "rich_text_section", "elements": [{"type": "text", "text": text}]}],
    }


def _task_card(task: dict[str, Any]) -> dict[str, Any]:
    card: dict[str, Any] = {
        "type": "task_card",
        "task_id": str(task["id"]),
        "title": str(task["title"]),
        "status": str(task["status"]),
    }
    for key in ("details", "output"):
        rich = _rich(task.get(key))
        if rich:
            card[key] = rich
    if task.get("sources"):
        card["sources"] = task["sources"]
    return card


def stream_blocks(stream: StreamState) -> list[dict[str, Any]]:
    """The stream's content as blocks: the plan (or task cards), then the text."""
    blocks: list[dict[str, Any]] = []
    cards = [_task_card(t) for t in stream.tasks.values()]
    if stream.mode == "plan" and (cards or stream.title):
        blocks.append({"type": "plan", "title": stream.title or "Plan", "tasks": cards})
    else:
        blocks.extend(cards)
    blocks.extend(stream.extra_blocks)
    if stream.markdown:
        blocks.append({"type": "markdown", "text": stream.markdown})
    return blocks
