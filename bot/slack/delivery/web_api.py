"""How GRACE talks to Slack's Web API, for every run message: the message kinds and the
metadata that marks a message as one of a run's, payloads and their digests, and what a
failed call means — a permanent refusal, or `RetryLater`."""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import AsyncIterator, Sequence
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.models.blocks import Block
from slack_sdk.web.async_client import AsyncWebClient

from agent.schemas import ThreadKey

log = logging.getLogger(__name__)

PLAN = "plan"
ANSWER = "answer"
OUTCOME = "outcome"
METADATA_EVENT = "grace_message"
"""Slack message metadata `event_type` of every run message GRACE posts."""

_RETRYABLE_ERRORS = frozenset(
    {"ratelimited", "internal_error", "fatal_error", "service_unavailable", "request_timeout"}
)
"""Slack's `ok: false` answers that another try may fix; any other one is final (e.g.
`channel_not_found`, `invalid_blocks`): logged, and that message skipped."""


def payload(blocks: Sequence[Block]) -> list[dict[str, Any]]:
    return [b.to_dict() for b in blocks]


def slack_error(exc: BaseException) -> str:
    """A short, safe description of a failed Web API call (the body may be plain text)."""
    if isinstance(exc, SlackApiError):
        data = getattr(exc.response, "data", None)
        status = getattr(exc.response, "status_code", None)
        if isinstance(data, dict) and data.get("error"):
            return f"{data['error']} (HTTP {status})"
        return f"HTTP {status}"
    return type(exc).__name__


class RetryLater(Exception):
    """A Web API call failed in a way another try may fix."""

    def __init__(self, reason: str, *, after: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.after = after


def classify_failure(exc: BaseException, what: str) -> RetryLater | None:
    """None for a permanent Slack refusal; otherwise how to retry."""
    if isinstance(exc, SlackApiError):
        status = getattr(exc.response, "status_code", 0)
        data = getattr(exc.response, "data", None)
        error = data.get("error") if isinstance(data, dict) else None
        if status == 429:
            headers = getattr(exc.response, "headers", {}) or {}
            try:
                after = float(headers.get("Retry-After") or headers.get("retry-after") or 1)
            except ValueError:
                after = 1.0
            return RetryLater(f"{what}: rate limited", after=max(after, 1.0))
        if status == 200 and error and error not in _RETRYABLE_ERRORS:
            return None
    return RetryLater(f"{what}: {slack_error(exc)}")


def digest_of(blocks: list[dict[str, Any]], text: str) -> str:
    data = json.dumps([blocks, text], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(data.encode()).hexdigest()[:32]


async def thread_replies(
    client: AsyncWebClient, thread: ThreadKey, *, refused_level: int = logging.INFO
) -> AsyncIterator[dict[str, Any]]:
    """The thread's messages with their metadata, page by page (at most 20 pages of 200).
    A failure another try may fix raises `RetryLater`; a permanent refusal (e.g.
    `thread_not_found`: nothing of ours is there) is logged at `refused_level` and ends
    the messages."""
    cursor: str | None = None
    for _ in range(20):
        try:
            response = await client.conversations_replies(
                channel=thread.channel_id,
                ts=thread.thread_ts,
                include_all_metadata=True,
                limit=200,
                cursor=cursor,
            )
        except Exception as exc:
            retry = classify_failure(exc, "conversations.replies")
            if retry is not None:
                raise retry from exc
            log.log(refused_level, "conversations.replies: %s", slack_error(exc))
            return
        for message in response.get("messages") or []:
            yield message
        cursor = (response.get("response_metadata") or {}).get("next_cursor") or None
        if not cursor:
            return
