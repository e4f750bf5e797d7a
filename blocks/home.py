"""The App Home tab: what waits for the person looking, and their recent questions.

Pure: the caller chooses the runs (only those the person may see), the links to their
threads and the time; this only words them, in the cards' plain words."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from slack_sdk.models.blocks import Block, DividerBlock
from slack_sdk.models.views import View

from agent.inbox import AnswerRole
from agent.schemas import InterventionKind, InterventionRequest, RunState
from blocks.common import (
    LEVEL_WORDS,
    RUN_STATUS_LABEL,
    context,
    header,
    one_line,
    safe,
    section,
    sections,
    short_id,
    slack_date,
)
from blocks.limits import MAX_BLOCKS_PER_VIEW

HOME_CALLBACK = "grace_home"
MAX_WAITING = 20
"""Pauses listed one by one (two blocks each); more are counted, not listed."""
MAX_RECENT = 10
QUESTION_CHARS = 150

ROLE_WORDS: dict[AnswerRole, str] = {
    AnswerRole.ASKER: "you asked",
    AnswerRole.APPROVER: "you are an approver",
    AnswerRole.EXPERT: "you are an expert for this channel",
}


@dataclass(frozen=True)
class WaitingRun:
    """A paused run this person may answer, why, and where its question is."""

    state: RunState
    role: AnswerRole
    link: str | None = None

    @property
    def since(self) -> datetime:
        """When the pause was asked (the run's start, for a run without one)."""
        return self.state.pending.created_at if self.state.pending else self.state.created_at


@dataclass(frozen=True)
class RecentRun:
    """One of the person's own questions and a link to its thread."""

    state: RunState
    link: str | None = None


def needed(request: InterventionRequest) -> str:
    """What the pause needs from a person, in a few words."""
    if request.kind is InterventionKind.PLAN_APPROVAL:
        return "📋 Approve the plan"
    if request.kind is InterventionKind.CONFIRM:
        return "🤔 Confirm a step"
    if request.kind is InterventionKind.ESCALATE:
        return "🔍 Add details or a source"
    if request.options:
        return "❓ Pick what was meant"
    return "❓ Answer a question"


def age(since: datetime, now: datetime) -> str:
    """`just now`, `12 min`, `3 h`, `2 d`: how long something has waited."""
    seconds = max(0.0, (now - since).total_seconds())
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{int(seconds // 60)} min"
    if seconds < 86400:
        return f"{int(seconds // 3600)} h"
    return f"{int(seconds // 86400)} d"


def _quote(state: RunState) -> str:
    return f"“{safe(one_line(state.query), QUESTION_CHARS)}”"


def _open(link: str | None, label: str = "open the thread") -> str:
    """A mrkdwn link (Slack's own permalinks hold neither `|` nor `>`)."""
    if not link or "|" in link or ">" in link:
        return ""
    return f"<{link}|{label}>"


def waiting_blocks(item: WaitingRun, now: datetime) -> list[Block]:
    """One pause: what it needs and the question, then why it is this person's, its
    age, where it was asked and how to get there."""
    state, request = item.state, item.state.pending
    assert request is not None, "a waiting run has an open pause"
    lines = [f"*{needed(request)}* · {_quote(state)}"]
    if request.question.strip():
        lines.append(f">{safe(one_line(request.question), 500)}")
    facts = [
        ROLE_WORDS[item.role],
        f"waiting {age(request.created_at, now)} (since {slack_date(request.created_at)})",
        f"in <#{''.join(c for c in state.thread.channel_id if c.isalnum())}>",
        f"run `{short_id(state.run_id)}`",
    ]
    if link := _open(item.link):
        facts.append(link)
    return [section("\n".join(lines)), context(" · ".join(facts))]


def recent_line(item: RecentRun) -> str:
    """`• “question” — ✅ answered · 👍 Fairly sure · <date> · open the thread`."""
    state = item.state
    parts = [RUN_STATUS_LABEL[state.status]]
    if state.level is not None and state.overall_confidence is not None:
        parts.append(LEVEL_WORDS[state.level])
    parts.append(slack_date(state.created_at))
    if link := _open(item.link):
        parts.append(link)
    return f"• {_quote(state)} — " + " · ".join(parts)


def home_view(waiting: Sequence[WaitingRun], recent: Sequence[RecentRun], *, now: datetime) -> View:
    """The Home tab: **Waiting for you** (oldest pause first), then **Your recent
    questions** (newest first), within Slack's 100 blocks."""
    blocks: list[Block] = [header("GRACE — your inbox")]
    blocks.append(section(f"*⏸️ Waiting for you ({len(waiting)})*"))
    if not waiting:
        blocks.append(context("Nothing is waiting for you: a question I need you for shows here."))
    for item in waiting[:MAX_WAITING]:
        blocks.extend(waiting_blocks(item, now))
    if len(waiting) > MAX_WAITING:
        blocks.append(context(f"…and {len(waiting) - MAX_WAITING} more: `/grace status all`"))
    blocks.append(DividerBlock())
    blocks.append(section("*🗂️ Your recent questions*"))
    if recent:
        blocks.extend(sections(recent_line(r) for r in recent[:MAX_RECENT]))
    else:
        blocks.append(
            context("You have not asked me anything yet: mention me in a channel or send me a DM.")
        )
    blocks.append(context(f"Updated {slack_date(now)} · `/grace help` for commands"))
    assert len(blocks) <= MAX_BLOCKS_PER_VIEW
    return View(type="home", callback_id=HOME_CALLBACK, blocks=blocks)
