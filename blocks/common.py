"""Small shared pieces of the Block Kit builders: emoji, badges, safe text blocks."""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime

from slack_sdk.models.blocks import (
    Block,
    ButtonElement,
    ConfirmObject,
    ContextBlock,
    HeaderBlock,
    MarkdownTextObject,
    PlainTextObject,
    SectionBlock,
)

from agent.schemas import (
    InterventionLevel,
    RunStatus,
    StepStatus,
)
from blocks.limits import (
    MAX_BUTTON_TEXT,
    MAX_CONTEXT_ELEMENTS,
    MAX_CONTEXT_TEXT,
    MAX_HEADER_TEXT,
    MAX_SECTION_TEXT,
    escape_mrkdwn,
    truncate,
)

STEP_EMOJI: dict[StepStatus, str] = {
    StepStatus.PENDING: "⏳",
    StepStatus.RUNNING: "🔄",
    StepStatus.SUCCESS: "✅",
    StepStatus.PARTIAL: "⚠️",
    StepStatus.FAILED: "❌",
    StepStatus.SKIPPED: "⏭️",
}

LEVEL_EMOJI: dict[InterventionLevel, str] = {
    InterventionLevel.SILENT: "🟢",
    InterventionLevel.NOTIFY: "🟡",
    InterventionLevel.CONFIRM: "🟠",
    InterventionLevel.ESCALATE: "🔴",
}

LEVEL_WORDS: dict[InterventionLevel, str] = {
    InterventionLevel.SILENT: "✅ Confident",
    InterventionLevel.NOTIFY: "👍 Fairly sure",
    InterventionLevel.CONFIRM: "🤔 Not fully sure",
    InterventionLevel.ESCALATE: "🔍 Unsure",
}
"""A confidence level as the answer cards say it: the Details view uses the same words,
not the threshold names (`silent`, `notify`) people never see on a card."""

FACTOR_WORDS: dict[str, str] = {
    "tool_success": "searches that worked",
    "search_quality": "how well the search matched",
    "source_agreement": "how far the sources agree",
    "llm_self_eval": "how well the answer follows from the sources",
    "query_coverage": "how much of the question the answer covers",
    "steps_aggregate": "the steps' scores combined",
    "human_answer": "answered by a person",
}
"""The scorer's own factors (SPEC §2.5) in plain words. Every other number in a score's
breakdown is a finer signal of the calibrated model, counted but not listed."""

RUN_STATUS_LABEL: dict[RunStatus, str] = {
    RunStatus.PLANNING: "🧭 planning",
    RunStatus.RUNNING: "🔄 running",
    RunStatus.PAUSED: "⏸️ waiting for input",
    RunStatus.ANSWERED: "✅ answered",
    RunStatus.CANCELLED: "🛑 cancelled",
    RunStatus.FAILED: "❌ failed",
}

# Used only when a score has no level attached: the default thresholds of SPEC §2.5.
_DEFAULT_LEVEL_CUTS: tuple[tuple[float, InterventionLevel], ...] = (
    (0.9, InterventionLevel.SILENT),
    (0.7, InterventionLevel.NOTIFY),
    (0.4, InterventionLevel.CONFIRM),
)


def safe(text: str, limit: int) -> str:
    """User/LLM text escaped for mrkdwn and cut to `limit` characters."""
    return truncate(escape_mrkdwn(text), limit)


def one_line(text: str) -> str:
    """Collapse whitespace so that a description fits on a single bullet line."""
    return " ".join(text.split())


def level_for(score: float) -> InterventionLevel:
    """The level a score falls in under the default thresholds (display fallback only)."""
    for cut, level in _DEFAULT_LEVEL_CUTS:
        if score >= cut:
            return level
    return InterventionLevel.ESCALATE


def badge(score: float | None, level: InterventionLevel | None) -> str:
    """`👍 Fairly sure 0.82`: how sure GRACE is, in the words the answer cards use."""
    if score is None:
        return "⚪ not scored"
    shown = level or level_for(score)
    return f"{LEVEL_WORDS[shown]} {score:.2f}"


def factor_text(items: Iterable[tuple[str, float]]) -> str:
    """`how well the search matched 0.31 · searches that worked 1.00`: the named factors
    in plain words (a factor without words keeps its name, with spaces)."""
    return " · ".join(f"{escape_mrkdwn(factor_words(name))} {value:.2f}" for name, value in items)


def factor_words(name: str) -> str:
    """A factor's plain words, else its name with spaces instead of underscores."""
    return FACTOR_WORDS.get(name, name.replace("_", " "))


def slack_date(when: datetime) -> str:
    """A Slack date token, rendered in each reader's own time zone."""
    epoch = int(when.timestamp())
    fallback = when.strftime("%Y-%m-%d %H:%M UTC")
    return f"<!date^{epoch}^{{date_short_pretty}} {{time}}|{fallback}>"


SHORT_ID_LENGTH = 6


def short_id(run_id: str) -> str:
    """The first characters of a run id: enough to name it in `/grace status|retry|cancel`."""
    return run_id[:SHORT_ID_LENGTH]


_USER_ID = re.compile(r"@?<@([UW][A-Z0-9]+)(?:\|[^>]*)?>|@?\b([UW](?=[A-Z0-9]*\d)[A-Z0-9]{5,})\b")
"""A Slack user id, bare or as a mention, with the "@" a writer may have put before it
(`@U0ALICE`): the mention Slack renders already reads "@alice"."""


def with_mentions(text: str, limit: int) -> str:
    """Text (escaped, cut to `limit`) whose Slack user ids (`U0CAROL`, `<@U0CAROL>`) read
    as mentions, so a person sees a name rather than an id."""
    pieces: list[str] = []
    last = 0
    for match in _USER_ID.finditer(text):
        pieces.append(escape_mrkdwn(text[last : match.start()]))
        pieces.append(mention(match.group(1) or match.group(2)))
        last = match.end()
    pieces.append(escape_mrkdwn(text[last:]))
    return truncate("".join(pieces), limit)


def mention(user_id: str) -> str:
    """`<@U123>` — Slack ids only contain letters and digits, so nothing is escaped."""
    clean = "".join(ch for ch in user_id if ch.isalnum())
    return f"<@{clean}>" if clean else "someone"


def expert_mention(ident: str) -> str:
    """A person (`<@U123>`) or a user group (`<!subteam^S123>`); never @channel/@here."""
    clean = "".join(ch for ch in ident if ch.isalnum())
    return f"<!subteam^{clean}>" if clean.startswith("S") else mention(clean)


def mentions(idents: list[str]) -> str:
    """`<@U1>, <!subteam^S2>` — each once, in order."""
    return ", ".join(expert_mention(i) for i in dict.fromkeys(idents) if i)


def header(text: str) -> HeaderBlock:
    """A header block; plain text, so nothing to escape, only cut to 150 chars."""
    flat = one_line(text) or "GRACE"
    return HeaderBlock(text=PlainTextObject(text=truncate(flat, MAX_HEADER_TEXT), emoji=True))


def section(text: str) -> SectionBlock:
    """A mrkdwn section; `text` must already be escaped and is cut to 3,000 chars."""
    return SectionBlock(text=MarkdownTextObject(text=truncate(text, MAX_SECTION_TEXT) or " "))


def context(*texts: str) -> ContextBlock:
    """A context line of up to ten mrkdwn texts (already escaped), each cut to fit."""
    kept = [t for t in texts if t][:MAX_CONTEXT_ELEMENTS] or [" "]
    return ContextBlock(
        elements=[MarkdownTextObject(text=truncate(t, MAX_CONTEXT_TEXT)) for t in kept]
    )


def pack_lines(lines: Iterable[str], limit: int = MAX_SECTION_TEXT) -> list[str]:
    """Join lines into as few texts of at most `limit` chars as possible.

    A single line longer than `limit` is truncated rather than split, so that each
    bullet stays whole in one block.
    """
    texts: list[str] = []
    current = ""
    for raw in lines:
        line = truncate(raw, limit)
        candidate = f"{current}\n{line}" if current else line
        if len(candidate) <= limit:
            current = candidate
        else:
            texts.append(current)
            current = line
    if current:
        texts.append(current)
    return texts


def sections(lines: Iterable[str], limit: int = MAX_SECTION_TEXT) -> list[Block]:
    """Lines packed into as few section blocks as possible."""
    return [section(text) for text in pack_lines(lines, limit)]


def button(
    text: str,
    action_id: str,
    value: str,
    *,
    style: str | None = None,
    confirm: ConfirmObject | None = None,
) -> ButtonElement:
    return ButtonElement(
        text=PlainTextObject(text=truncate(text, MAX_BUTTON_TEXT), emoji=True),
        action_id=action_id,
        value=value,
        style=style,
        confirm=confirm,
    )


def cancel_button(action_id: str, value: str) -> ButtonElement:
    """The red Cancel of a paused run's cards, asking "Cancel this run?" first."""
    return button(
        "🛑 Cancel",
        action_id,
        value,
        style="danger",
        confirm=ConfirmObject(
            title="Cancel this run?",
            text="GRACE will stop and not answer this question.",
            confirm="Cancel run",
            deny="Keep it",
        ),
    )
