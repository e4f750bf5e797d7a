"""The answer message(s): text, sources, confidence badge with its breakdown, feedback."""

from __future__ import annotations

import re

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ContextActionsBlock,
    DividerBlock,
    FeedbackButtonObject,
    FeedbackButtonsElement,
)

from agent.evidence.conflicts import states_conflict
from agent.knowledge.verified import rests_on_a_reply
from agent.schemas import InterventionLevel, RunState, Source
from blocks import ids
from blocks.common import (
    button,
    context,
    level_for,
    mention,
    one_line,
    pack_lines,
    safe,
    section,
    short_id,
    with_mentions,
)
from blocks.explain import (
    ANSWER_CONFIDENCE,
    disagreeing_documents,
    disagreement_alert,
    why_unsure,
)
from blocks.limits import (
    MAX_BLOCKS_PER_MESSAGE,
    MAX_MESSAGE_TEXT,
    MAX_SECTION_TEXT,
    escape_mrkdwn,
    split_text,
    truncate,
)
from blocks.sanitize import literal, quoted, rewrite_links

MAX_SOURCES_SHOWN = 10
SOURCE_SNIPPET_LIMIT = 160
ANSWER_SECTIONS_PER_MESSAGE = 12
"""≈36,000 characters of answer per message: under the 40,000 Slack keeps of a message."""

_BOLD = re.compile(r"\*\*(.+?)\*\*", re.DOTALL)
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*$", re.MULTILINE)
_PLAIN_URL = re.compile(r"^[^\s<>|]+$")


def to_mrkdwn(markdown: str) -> str:
    """LLM Markdown → Slack mrkdwn: escape, then `**b**`→`*b*`, headings, links (with
    their URL shown: a masked `<url|label>` could hide any address behind a friendly
    name from a document; `blocks.sanitize.rewrite_links`)."""
    text = escape_mrkdwn(markdown)
    text = _HEADING.sub(r"*\1*", text)
    text = _BOLD.sub(r"*\1*", text)
    return rewrite_links(text)


def unique_sources(sources: list[Source]) -> list[Source]:
    """One entry per source name, in first-cited order, keeping its best passage."""
    best: dict[str, Source] = {}
    for src in sources:
        kept = best.get(src.source)
        if kept is None or src.similarity > kept.similarity:
            best[src.source] = src
    order = list(dict.fromkeys(src.source for src in sources))
    return [best[name] for name in order]


def source_name(src: Source) -> str:
    """A source's name as mrkdwn: where it is (`handbook.pdf, p. 12`, a section, a page's
    title), and a person who answered in the thread (`@U0ALICE (reply in thread)`) as a
    mention, which Slack shows as their name ("@alice"), not their id."""
    if src.from_person:
        return with_mentions(one_line(src.source) or "unnamed", 200)
    return literal(safe(one_line(src.citation) or "unnamed", 200))


def cite_people(text: str, sources: list[Source]) -> str:
    """Answer mrkdwn whose citations of a person (`[Source: @U0ALICE (reply in thread)]`)
    name them as a mention; nothing else in the text is touched."""
    for src in sources:
        if src.from_person and src.source:
            text = text.replace(escape_mrkdwn(src.source), with_mentions(src.source, 200))
    return text


def source_lines(sources: list[Source], answer: str = "") -> list[str]:
    """`• *handbook.pdf, p. 12* — “snippet…”` (a web page: its title and link), capped,
    the rest summarised (scores: Details). The snippet is the sentence of that document
    the answer uses, else the start of its best passage's text, without the heading trail
    the passage is stored under."""
    unique = unique_sources(sources)
    lines = []
    for src in unique[:MAX_SOURCES_SHOWN]:
        line = f"• *{source_name(src)}*"
        link = src.url or (src.verified.permalink if src.verified is not None else None)
        if link and link.startswith(("https://", "http://")) and _PLAIN_URL.match(link):
            line += f" (<{link}>)"  # shown, not masked: the reader sees where it goes
        same = [s for s in sources if s.source == src.source]
        snippet = used_sentence(same, answer) or one_line(passage_body(src.text))
        if snippet:
            line += f" — “{truncate(quoted(snippet), SOURCE_SNIPPET_LIMIT)}”"
        lines.append(line)
    if len(unique) > MAX_SOURCES_SHOWN:
        lines.append(f"_…and {len(unique) - MAX_SOURCES_SHOWN} more sources_")
    return lines


_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])|\n+")
_SENTENCE_END = (".", "!", "?", "。", "！", "？", ":", "：")
QUOTED_SENTENCE_MIN = 12
"""Shorter pieces ("Yes.") are too common to say which sentence the answer used."""


def passage_body(text: str) -> str:
    """A passage without the heading trail it is stored under ("Policy › Meals"): its
    first paragraph, when that is a line that ends no sentence and text follows it."""
    head, _, body = text.strip().partition("\n\n")
    head = head.strip()
    if body.strip() and "\n" not in head and not head.endswith(_SENTENCE_END):
        return body
    return text


def used_sentence(passages: list[Source], answer: str) -> str:
    """The first sentence of these passages that the answer quotes word for word."""
    said = one_line(answer)
    if not said:
        return ""
    for src in passages:
        for piece in _SENTENCE_BREAK.split(passage_body(src.text)):
            sentence = one_line(piece.lstrip("#-*• "))
            if len(sentence) >= QUOTED_SENTENCE_MIN and sentence in said:
                return sentence
    return ""


def _model_name(state: RunState) -> str:
    name = one_line(state.llm_model) or "unknown"
    return name if name.lower().endswith("model") else f"{name} model"


def feedback_block(run_id: str) -> ContextActionsBlock:
    """👍 / 👎 as Slack's `feedback_buttons`; the value says which one and for which run."""
    return ContextActionsBlock(
        block_id=ids.FEEDBACK_ACTIONS_BLOCK,
        elements=[
            FeedbackButtonsElement(
                action_id=ids.FEEDBACK,
                positive_button=FeedbackButtonObject(
                    text="👍 Helpful",
                    accessibility_label="Mark this answer as helpful",
                    value=ids.ButtonValue(run_id=run_id, helpful=True).encode(),
                ),
                negative_button=FeedbackButtonObject(
                    text="👎 Not helpful",
                    accessibility_label="Mark this answer as not helpful",
                    value=ids.ButtonValue(run_id=run_id, helpful=False).encode(),
                ),
            )
        ],
    )


def verify_block(run_id: str) -> ActionsBlock:
    """Save as verified answer: offered under an answer that rests on a person's reply;
    only approvers' clicks save (others are told so, privately)."""
    return ActionsBlock(
        block_id=ids.VERIFY_ACTIONS_BLOCK,
        elements=[
            button(
                "Save as verified answer",
                ids.SAVE_VERIFIED,
                ids.ButtonValue(run_id=run_id).encode(),
            )
        ],
    )


def overdue_verified(sources: list[Source]) -> list[Source]:
    """The verified answers among the sources that are past their review date."""
    return [s for s in unique_sources(sources) if s.verified is not None and not s.verified.fresh()]


def confidence_words(state: RunState) -> str:
    """How sure GRACE is, as what the reader should do about it."""
    if state.overall_confidence is None:
        return "I could not judge how reliable this answer is."
    level = state.level or level_for(state.overall_confidence)
    return ANSWER_CONFIDENCE[level]


def _tail(state: RunState) -> list[Block]:
    blocks: list[Block] = [DividerBlock()]
    lines = source_lines(state.sources, state.final_answer)
    if lines:
        blocks.extend(section(t) for t in pack_lines(["*Sources*", *lines]))
    else:
        blocks.append(context("No sources: this answer is not backed by the knowledge base."))

    how_sure = section(f"*How sure I am:* {confidence_words(state)}")
    how_sure.accessory = button(
        "Details", ids.DETAILS, ids.ButtonValue(run_id=state.run_id).encode()
    )
    blocks.append(how_sure)
    level = state.level or (
        level_for(state.overall_confidence) if state.overall_confidence is not None else None
    )
    # One warning that the documents disagree: the answer's own note, else an alert
    # naming both; the "why" sentence then gives its next reason (disagreement has been
    # looked for here, so it does not look again).
    warned = states_conflict(state.final_answer)
    pair = [] if warned else disagreeing_documents(state.overall_detail, state.sources)
    if level not in (None, InterventionLevel.SILENT, InterventionLevel.NOTIFY):
        why = why_unsure(state.overall_detail, state.sources, alerted=True)
        blocks.append(context(why))
    if pair:
        blocks.append(disagreement_alert(pair))
    overdue = overdue_verified(state.sources)
    if overdue:
        due = min(s.verified.review_by for s in overdue if s.verified is not None)
        blocks.append(
            context(
                f"⚠️ This rests on a verified answer past its review date ({due:%d %b %Y}): "
                "it no longer counts as a strong source. Check it is still right."
            )
        )

    about = [f"answered by the {safe(_model_name(state), 200)}"]
    if state.plan is not None:
        about.append(f"{len(state.plan.steps)} steps")
    if state.execution_time_ms:
        about.append(f"{state.execution_time_ms / 1000:.1f} s")
    about.append(f"run `{short_id(state.run_id)}`")
    blocks.append(context(" · ".join(about)))
    if rests_on_a_reply(state):
        blocks.append(verify_block(state.run_id))
    blocks.append(feedback_block(state.run_id))
    return blocks


def answer_footer(state: RunState) -> list[Block]:
    """What follows the answer's text — sources, how sure, run id, feedback: the blocks a
    streamed answer ends with (`chat.stopStream`)."""
    return _tail(state)


FOOTER_ONLY_TEXT = "Sources and feedback for the answer above"


def answer_footer_message(state: RunState) -> list[Block]:
    """The footer as a message of its own, under a stream that shows the answer's text
    but could not be ended with its footer (the text is not repeated)."""
    return [context(f"{FOOTER_ONLY_TEXT}:"), *_tail(state)[1:]]


def _answer_texts(state: RunState) -> list[str]:
    if not state.final_answer.strip():
        reason = f": {safe(one_line(state.error), 1500)}" if state.error else "."
        return [f"_No answer was produced{reason}_"]
    people = [*state.sources, *state.human_sources]
    pieces = split_text(cite_people(to_mrkdwn(state.final_answer), people), MAX_SECTION_TEXT)
    return [p.strip() for p in pieces if p.strip()]


def answer_messages(state: RunState) -> list[list[Block]]:
    """The answer as one or more messages, each a valid Block Kit message.

    The text is split into sections of ≤ 3,000 chars and, past
    `ANSWER_SECTIONS_PER_MESSAGE` sections, into further messages ("part 2 of 3"). The
    sources, confidence and the 👍 / 👎 buttons go on the last message only.
    """
    texts = _answer_texts(state)
    tail = _tail(state)
    per_message = min(ANSWER_SECTIONS_PER_MESSAGE, MAX_BLOCKS_PER_MESSAGE - 1)
    groups = [texts[i : i + per_message] for i in range(0, len(texts), per_message)]
    last_room = MAX_BLOCKS_PER_MESSAGE - len(tail) - (1 if len(groups) > 1 else 0)
    if len(groups[-1]) > last_room:
        groups.append([])
    total = len(groups)
    messages: list[list[Block]] = []
    for number, group in enumerate(groups, start=1):
        blocks: list[Block] = []
        if total > 1:
            blocks.append(context(f"Answer, part {number} of {total}"))
        blocks.extend(section(text) for text in group)
        messages.append(blocks)
    messages[-1].extend(tail)
    return messages


def answer_fallback_text(state: RunState, part: int = 1) -> str:
    """The notification text of answer message `part` (1-based)."""
    if part > 1:
        return f"GRACE answer (continued, part {part})"
    answer = one_line(state.final_answer) or "No answer was produced."
    return truncate(
        f"GRACE: {escape_mrkdwn(answer)}",
        min(MAX_MESSAGE_TEXT, 3000),
    )


def feedback_ack(
    user_id: str, up: bool, *, counted: bool = True, thresholds: str | None = None
) -> list[Block]:
    """The ephemeral thanks after 👍 / 👎: says what the feedback is used for — or, for
    someone whose vote does not count, that it is kept but not counted — and, when the
    vote moved the thresholds, their new (stored) values."""
    verb = "👍 helpful" if up else "👎 not helpful"
    if not counted:
        return [
            context(
                f"Thanks {mention(user_id)} — recorded as {verb}. Only the person who asked "
                "and GRACE's approvers tune when GRACE asks before answering, so your vote "
                "is kept but not counted."
            )
        ]
    blocks: list[Block] = [
        context(
            f"Thanks {mention(user_id)} — recorded as {verb}. "
            "GRACE uses this feedback to tune when it asks before answering."
        )
    ]
    if thresholds:
        blocks.append(context(safe(thresholds, 500)))
    return blocks
