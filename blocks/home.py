"""The App Home tab: what waits for the person looking, their recent questions, and —
for workspace admins — the channels' settings.

Pure: the caller chooses the runs (only those the person may see), the links to their
threads, whether the settings are shown (only to admins) and the time; this only words
them, in the cards' plain words."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from slack_sdk.models.blocks import Block, DividerBlock
from slack_sdk.models.views import View

from agent.config import Thresholds
from agent.inbox import AnswerRole
from agent.schemas import InterventionKind, InterventionLevel, InterventionRequest, RunState
from blocks.common import (
    LEVEL_WORDS,
    RUN_STATUS_LABEL,
    context,
    header,
    mention,
    mentions,
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
MAX_CHANNELS = 12
"""Channels whose settings are listed (two blocks each); more are counted, not listed."""
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


@dataclass(frozen=True)
class ChannelSummary:
    """One channel's settings as in effect (the global ones where it sets none), for an
    admin's Home tab."""

    channel_id: str
    collections: Sequence[str] = ()
    """Searched by its questions; empty: every collection."""
    experts: Sequence[str] = ()
    approvers: Sequence[str] = ()
    """Who besides the asker may answer its pauses (its own and the global approvers)."""
    thresholds: Thresholds | None = None
    """Its own thresholds; None: the shared ones."""
    answer_mode: str = "mentions"
    reply_mode: str = "thread"
    follow_ups: bool = False
    own: frozenset[str] = field(default_factory=frozenset)
    """The settings the channel sets itself (`storage.channel_settings.FIELDS` names,
    `thresholds` for any of the three); the others are the global settings."""
    changed_by: str | None = None
    changed_at: datetime | None = None


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


ANSWER_MODE_WORDS: dict[str, str] = {
    "mentions": "answers when mentioned",
    "all": "answers every question posted in the channel",
}
REPLY_MODE_WORDS: dict[str, str] = {
    "thread": "in the thread",
    "ephemeral": "only the asker sees the answer",
}


def _channel(channel_id: str) -> str:
    return f"<#{''.join(c for c in channel_id if c.isalnum())}>"


def threshold_words(thresholds: Thresholds | None) -> str:
    """When GRACE answers on its own, and when it asks a person, in the cards' words."""
    if thresholds is None:
        return "the shared thresholds (`grace thresholds`)"
    t = thresholds
    return (
        f"{LEVEL_WORDS[InterventionLevel.SILENT]} from {t.silent:.2f} · "
        f"{LEVEL_WORDS[InterventionLevel.NOTIFY]} from {t.notify:.2f} · "
        f"asks to confirm a step from {t.confirm:.2f} · asks for help below {t.confirm:.2f}"
    )


def channel_settings_blocks(item: ChannelSummary) -> list[Block]:
    """One channel: each setting in plain words (`default` where it uses the global
    one), then who changed it last and how to change it."""

    def mark(name: str) -> str:
        return "" if name in item.own else " _(default)_"

    searched = (
        ", ".join(f"`{safe(c, 80)}`" for c in item.collections)
        if item.collections
        else "every collection"
    )
    follow = "on" if item.follow_ups else "off"
    lines = [
        f"*{_channel(item.channel_id)}*",
        f"🔎 *Searches:* {searched}{mark('collections')}",
        f"🧑‍🔧 *Experts called when I need help:* "
        f"{mentions(list(item.experts)) or 'nobody'}{mark('experts')}",
        f"🙋 *May answer my questions besides the asker:* "
        f"{mentions(list(item.approvers)) or 'nobody'}{mark('approvers')}",
        f"📏 *Confidence:* {threshold_words(item.thresholds)}{mark('thresholds')}",
        f"💬 *Answers:* {ANSWER_MODE_WORDS.get(item.answer_mode, item.answer_mode)}"
        f"{mark('answer_mode')}, {REPLY_MODE_WORDS.get(item.reply_mode, item.reply_mode)}"
        f"{mark('reply_mode')}; follow-ups without a mention {follow}{mark('follow_ups')}",
    ]
    facts: list[str] = []
    if item.changed_by:
        when = f" on {slack_date(item.changed_at)}" if item.changed_at else ""
        changer = item.changed_by
        who = mention(changer) if changer[:1] in "UW" else f"`{safe(changer, 60)}`"
        facts.append(f"last changed by {who}{when}")
    facts.append(f"to change: `/grace config` in {_channel(item.channel_id)}")
    return [section("\n".join(lines)), context(" · ".join(facts))]


def settings_blocks(channels: Sequence[ChannelSummary]) -> list[Block]:
    """The admins' part: every channel with settings of its own."""
    blocks: list[Block] = [DividerBlock(), section(f"*⚙️ Channel settings ({len(channels)})*")]
    blocks.append(
        context(
            "Shown to workspace admins. Channels not listed use the global settings; "
            "`/grace config` in a channel gives it its own (`grace channel set` on the "
            "command line)."
        )
    )
    for item in channels[:MAX_CHANNELS]:
        blocks.extend(channel_settings_blocks(item))
    if len(channels) > MAX_CHANNELS:
        blocks.append(context(f"…and {len(channels) - MAX_CHANNELS} more: `grace channel list`"))
    return blocks


def home_view(
    waiting: Sequence[WaitingRun],
    recent: Sequence[RecentRun],
    *,
    now: datetime,
    channels: Sequence[ChannelSummary] | None = None,
) -> View:
    """The Home tab: **Waiting for you** (oldest pause first), then **Your recent
    questions** (newest first), then — when `channels` is given (an admin is looking) —
    **Channel settings**, within Slack's 100 blocks."""
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
    if channels is not None:
        blocks.extend(settings_blocks(channels))
    blocks.append(context(f"Updated {slack_date(now)} · `/grace help` for commands"))
    assert len(blocks) <= MAX_BLOCKS_PER_VIEW
    return View(type="home", callback_id=HOME_CALLBACK, blocks=blocks)
