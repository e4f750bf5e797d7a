"""Ephemeral answers to `/grace …`: help, run lists and details, stats, thresholds, errors."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from slack_sdk.models.blocks import Block, DividerBlock

from agent.feedback_quorum import ThresholdChange
from agent.schemas import (
    ConfidenceScore,
    InterventionKind,
    InterventionLevel,
    InterventionStatus,
    RunState,
    RunStatus,
)
from blocks.common import (
    FACTOR_WORDS,
    LEVEL_EMOJI,
    RUN_STATUS_LABEL,
    badge,
    context,
    factor_text,
    header,
    mention,
    mentions,
    one_line,
    safe,
    section,
    sections,
    short_id,
    slack_date,
    with_mentions,
)
from blocks.limits import MAX_BLOCKS_PER_MESSAGE
from blocks.plan import step_lines, step_sections

MAX_RUNS_LISTED = 40
RUN_QUESTION_LIMIT = 90

HELP_COMMANDS: tuple[tuple[str, str], ...] = (
    ("/grace status", "your recent questions and where they stand"),
    ("/grace status all", "everyone's recent questions in this channel"),
    ("/grace status <run>", "one run in detail: plan, steps, confidence scores, replans, cost"),
    ("/grace cancel <run>", "stop a running or paused run (yours, or as an approver)"),
    ("/grace retry <run>", "ask a finished question again (one that failed, was cancelled…)"),
    (
        "/grace stats",
        "today's questions answered, how often I asked a person, cost (USD), "
        "and recent 👍 / 👎 feedback",
    ),
    ("/grace thresholds", "the confidence levels at which I answer, check or ask"),
    ("/grace config", "this channel's settings: collections, experts, approvers, modes"),
    ("/grace verified", "the answers approvers saved as verified, newest first"),
    ("/grace forget <id>", "remove a verified answer (approvers)"),
    ("/grace help", "this help"),
)
RUN_ID_HINT = (
    "`<run>` is the run id shown at the bottom of each answer and plan "
    "(the first 6 characters are enough)."
)


def _cap(blocks: list[Block]) -> list[Block]:
    """Keep an ephemeral message within 50 blocks, saying that something was left out."""
    if len(blocks) <= MAX_BLOCKS_PER_MESSAGE:
        return blocks
    kept = blocks[: MAX_BLOCKS_PER_MESSAGE - 1]
    return [*kept, context(f"_…{len(blocks) - len(kept)} more blocks left out_")]


def help_blocks(unknown: str | None = None) -> list[Block]:
    """What GRACE does and every `/grace` subcommand (after "unknown" when one was)."""
    commands = "\n".join(f"• `{cmd}` — {what}" for cmd, what in HELP_COMMANDS)
    lead: list[Block] = []
    if unknown is not None:
        lead.append(section(f"⚠️ `/grace {safe(one_line(unknown), 100)}` is not a command I know."))
    return [
        header("GRACE — help"),
        *lead,
        section(
            "Mention me with a question (`@grace how do I…?`) or send me a DM. I make a plan, "
            "search the knowledge base step by step, score my confidence at every step and "
            "ask you in the thread when I am unsure."
        ),
        section(commands),
        context(RUN_ID_HINT),
        context(
            "Reply in a thread to answer my questions · 👍 / 👎 on an answer teaches me when to ask"
        ),
    ]


_NOT_SIGNALS = frozenset({"base", "calibrated"})
"""Breakdown entries that are the score itself (before penalties, calibrated), not inputs."""


def score_lines(detail: ConfidenceScore) -> list[str]:
    """`Score 0.55` · each named factor once, in plain words (no `base`) · how many finer
    signals the calibrated score also weighed · before penalties · penalties."""
    lines = [f"*Score:* {detail.score:.2f}"]
    factors = [(k, detail.breakdown[k]) for k in FACTOR_WORDS if k in detail.breakdown]
    finer = [k for k in detail.breakdown if k not in FACTOR_WORDS and k not in _NOT_SIGNALS]
    if factors:
        lines.append(f"*Factors:* {factor_text(factors)}")
    if finer:
        noun = "signal" if len(finer) == 1 else "signals"
        lines.append(f"*Also weighed:* {len(finer)} finer {noun} of the answer's evidence")
    if "base" in detail.breakdown:
        lines.append(f"*Before penalties:* {detail.breakdown['base']:.2f}")
    if detail.penalties:
        lines.append("*Penalties:* " + "; ".join(safe(one_line(p), 200) for p in detail.penalties))
    return lines


def waiting_for(state: RunState) -> str:
    """Who a paused run waits for: its escalation's experts first, then whoever may
    answer (the asker, approvers); "" when it is not waiting for anyone."""
    pending = state.pending
    if state.status is not RunStatus.PAUSED or pending is None:
        return ""
    if pending.status is not InterventionStatus.PENDING:
        return ""
    people = list(pending.allowed_responders)
    if pending.kind is InterventionKind.ESCALATE:
        people = [*state.policy.experts, *people]
    return mentions(people) if people else "anyone in the thread"


def run_summary_line(state: RunState, *, with_asker: bool = False) -> str:
    """`• `ab12cd` ✅ answered · “question” · <date>` (+ who asked, in a channel list)."""
    line = f"• `{short_id(state.run_id)}` {RUN_STATUS_LABEL[state.status]}"
    question = safe(one_line(state.query), RUN_QUESTION_LIMIT)
    line += f" · “{question}”"
    if with_asker:
        line += f" · {mention(state.asker)}"
    line += f" · {slack_date(state.created_at)}"
    waiting = waiting_for(state)
    if waiting:
        line += f" · waiting for {waiting}"
    return line


def runs_list_blocks(
    runs: list[RunState],
    *,
    title: str = "GRACE — your recent questions",
    empty: str = "You have no questions with me yet. Mention me to ask something.",
    with_asker: bool = False,
    undelivered: list[str] | None = None,
) -> list[Block]:
    """A compact list of runs, newest first as given, capped at `MAX_RUNS_LISTED`; then
    `undelivered`: one line per run whose Slack messages have not gone out yet."""
    blocks: list[Block] = [header(title)]
    if not runs:
        blocks.append(section(f"_{safe(empty, 500)}_"))
        return _cap(blocks + undelivered_blocks(undelivered or []))
    lines = [run_summary_line(r, with_asker=with_asker) for r in runs[:MAX_RUNS_LISTED]]
    if len(runs) > MAX_RUNS_LISTED:
        lines.append(f"_…and {len(runs) - MAX_RUNS_LISTED} older runs_")
    blocks.extend(sections(lines))
    blocks.append(context("`/grace status <run>` for details"))
    return _cap(blocks + undelivered_blocks(undelivered or []))


def undelivered_blocks(lines: list[str]) -> list[Block]:
    """Runs whose Slack messages have not gone out yet (Slack refused them so far)."""
    if not lines:
        return []
    shown = [f"• {line}" for line in lines[:MAX_RUNS_LISTED]]
    return [
        section(f"*⚠️ Messages not delivered yet ({len(lines)} runs)*"),
        *sections(shown),
    ]


def run_detail_blocks(state: RunState) -> list[Block]:
    """One run in detail: question, status, plan steps, confidence, pause, replans, cost."""
    facts = [
        f"*Status:* {RUN_STATUS_LABEL[state.status]}",
        f"asked by {mention(state.asker)} {slack_date(state.created_at)}",
        f"run id `{state.run_id}`",
    ]
    if state.llm_model:
        facts.append(f"model {safe(one_line(state.llm_model), 100)}")
    blocks: list[Block] = [
        header(f"GRACE run {short_id(state.run_id)}"),
        section(f">{safe(one_line(state.query), 1500)}"),
        context(*facts),
    ]

    if state.overall_confidence is not None:
        line = f"*Confidence:* {badge(state.overall_confidence, state.level)}"
        if state.overall_detail is not None:
            line += "\n" + "\n".join(score_lines(state.overall_detail)[1:])
        blocks.append(section(line))

    pending = state.pending
    if pending is not None and pending.status is InterventionStatus.PENDING:
        text = f"⏸️ *Waiting for an answer* ({pending.kind.value}): "
        text += safe(one_line(pending.question), 1000)
        waiting = waiting_for(state)
        if waiting:
            text += f"\nWaiting for {waiting}"
        if pending.expires_at is not None:
            text += f"\nExpires {slack_date(pending.expires_at)}"
        blocks.append(section(text))

    if state.error:
        blocks.append(section(f"❌ {with_mentions(one_line(state.error), 1500)}"))

    replans = [
        f"{i}. {r.trigger.value} → {r.strategy.value}: {safe(one_line(r.reason), 400)}"
        for i, r in enumerate(state.replan_history, start=1)
    ]
    usage = state.token_usage
    cost = (
        f"Tokens {usage.input_tokens:,} in / {usage.output_tokens:,} out · {usage.calls} LLM calls"
        f" · ${usage.cost_usd:.4f} · {state.execution_time_ms / 1000:.1f} s"
    )
    tail: list[Block] = []
    if replans:
        tail.extend(sections([f"*Replans ({len(replans)})*", *replans])[:3])
    tail.append(context(cost))

    if state.plan is not None:
        budget = MAX_BLOCKS_PER_MESSAGE - len(blocks) - len(tail) - 1
        blocks.append(DividerBlock())
        blocks.extend(step_sections(step_lines(state, detailed=True), budget))
    return _cap(blocks + tail)


STAT_LABELS: dict[str, str] = {
    "runs": "questions asked",
    "answered": "questions answered",
    "cancelled": "cancelled",
    "failed": "failed",
    "paused": "waiting for a person",
    "running": "in progress",
    "completion_rate": "answered",
    "hitl_rate": "asked a person",
    "replan_rate": "changed the plan",
    "replan_success_rate": "answered after changing the plan",
    "avg_confidence": "average confidence of answers",
    "cost_usd": "cost (USD)",
}
"""The store's figure names → words people read; rates (`*_rate`) are shown as %."""


def _format_stat(name: str, value: float | int) -> str:
    if name.endswith("_rate"):
        return f"{float(value) * 100:.0f}%"
    if name == "cost_usd":
        return f"${float(value):,.4f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    if abs(value) < 1:
        return f"{value:.2f}"
    return f"{value:,.2f}"


def feedback_line(up: int, down: int, window: int) -> str:
    """`👍 5 · 👎 1 · 83% helpful (last 6 votes)` or "no votes yet"."""
    total = up + down
    if total == 0:
        return "*Feedback:* no 👍 / 👎 votes yet"
    rate = up / total * 100
    return (
        f"*Feedback:* 👍 {up:,} · 👎 {down:,} · {rate:.0f}% helpful "
        f"(the last {total:,} vote{'s' if total != 1 else ''}, at most {window:,})"
    )


def stats_blocks(
    stats: Mapping[str, float | int],
    *,
    feedback: tuple[int, int, int] | None = None,
    notes: Sequence[str] = (),
    title: str = "GRACE — today",
) -> list[Block]:
    """Today's figures in words (`questions answered`, `asked a person`, `cost (USD)`), the
    👍 / 👎 feedback as (up, down, window) when given, and `notes` on the knowledge base
    (a collection searched by keywords only) under a warning sign."""
    blocks: list[Block] = [header(title)]
    lines = [
        f"• *{safe(STAT_LABELS.get(name, name.replace('_', ' ')), 200)}*: "
        f"{_format_stat(name, value)}"
        for name, value in stats.items()
    ]
    if lines:
        blocks.extend(sections(lines))
    else:
        blocks.append(section("_No questions yet today._"))
    if feedback is not None:
        blocks.append(section(feedback_line(*feedback)))
    blocks.extend(section(f"⚠️ {safe(note, 2900)}") for note in notes)
    blocks.append(context("Rates are shares of today's questions."))
    return _cap(blocks)


_THRESHOLD_ORDER = (InterventionLevel.SILENT, InterventionLevel.NOTIFY, InterventionLevel.CONFIRM)


def threshold_change_line(change: ThresholdChange) -> str:
    """`• 2026-11-26 21:30 <@U1>: silent 0.90 → 0.95, … (raised: …)`."""
    b, a = change.before, change.after
    moves = ", ".join(
        f"{name} {old:.2f} → {new:.2f}"
        for name, old, new in (
            ("silent", b.silent, a.silent),
            ("notify", b.notify, a.notify),
            ("confirm", b.confirm, a.confirm),
        )
    )
    who = mention(change.changed_by) if change.changed_by.isalnum() else safe(change.changed_by, 80)
    return f"• {slack_date(change.changed_at)} {who}'s vote: {moves} ({safe(change.reason, 200)})"


def thresholds_blocks(
    thresholds: Mapping[str, float], changes: Sequence[ThresholdChange] = ()
) -> list[Block]:
    """The current decide_action cut-offs, as the bands a score falls into, and the
    latest recorded changes (who, when, from → to)."""
    lines: list[str] = []
    for level in _THRESHOLD_ORDER:
        if level.value in thresholds:
            cut = thresholds[level.value]
            lines.append(f"{LEVEL_EMOJI[level]} *{level.value}* — score ≥ {cut:.2f}")
    if InterventionLevel.CONFIRM.value in thresholds:
        lowest = thresholds[InterventionLevel.CONFIRM.value]
        lines.append(f"{LEVEL_EMOJI[InterventionLevel.ESCALATE]} *escalate* — score < {lowest:.2f}")
    known = {level.value for level in _THRESHOLD_ORDER}
    lines.extend(
        f"• *{safe(name, 200)}*: {value:.3f}"
        for name, value in thresholds.items()
        if name not in known
    )
    blocks: list[Block] = [header("GRACE — confidence thresholds")]
    blocks.extend(sections(lines) if lines else [section("_No thresholds set._")])
    blocks.append(
        context(
            "Adjusted from 👍 / 👎 feedback on recent answers, within fixed bounds, once "
            "enough different people have voted: no one moves them alone."
        )
    )
    if changes:
        blocks.append(section("*Latest changes*"))
        blocks.extend(sections(threshold_change_line(c) for c in changes))
    else:
        blocks.append(context("No change recorded yet."))
    return _cap(blocks)


def error_blocks(message: str) -> list[Block]:
    """A short ephemeral error, e.g. an unknown run id or a refused command."""
    return [section(f"⚠️ {safe(message.strip() or 'Something went wrong.', 2900)}")]
