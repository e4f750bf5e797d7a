"""Ephemeral answers to `/grace …`: help, run lists and details, stats, thresholds, errors."""

from __future__ import annotations

from collections.abc import Mapping

from slack_sdk.models.blocks import Block, DividerBlock

from agent.schemas import InterventionLevel, InterventionStatus, RunState
from blocks.common import (
    LEVEL_EMOJI,
    RUN_STATUS_LABEL,
    badge,
    context,
    factor_text,
    header,
    mention,
    one_line,
    safe,
    section,
    sections,
    slack_date,
)
from blocks.limits import MAX_BLOCKS_PER_MESSAGE
from blocks.plan import step_lines, step_sections

MAX_RUNS_LISTED = 40
RUN_QUESTION_LIMIT = 90

HELP_COMMANDS: tuple[tuple[str, str], ...] = (
    ("/grace status", "your recent runs and their state"),
    ("/grace status <run>", "one run in detail: plan, steps, confidence, replans, cost"),
    ("/grace cancel <run>", "stop a running or paused run"),
    ("/grace retry <run>", "run a failed or cancelled question again"),
    ("/grace stats", "answers, confidence, feedback and cost figures"),
    ("/grace thresholds", "the confidence thresholds GRACE currently uses"),
    ("/grace help", "this help"),
)


def _cap(blocks: list[Block]) -> list[Block]:
    """Keep an ephemeral message within 50 blocks, saying that something was left out."""
    if len(blocks) <= MAX_BLOCKS_PER_MESSAGE:
        return blocks
    kept = blocks[: MAX_BLOCKS_PER_MESSAGE - 1]
    return [*kept, context(f"_…{len(blocks) - len(kept)} more blocks left out_")]


def help_blocks() -> list[Block]:
    """What GRACE does and every `/grace` subcommand."""
    commands = "\n".join(f"• `{cmd}` — {what}" for cmd, what in HELP_COMMANDS)
    return [
        header("GRACE — help"),
        section(
            "Mention me with a question (`@grace how do I…?`) or send me a DM. I make a plan, "
            "search the knowledge base step by step, score my confidence at every step and "
            "ask you in the thread when I am unsure."
        ),
        section(commands),
        context(
            "Reply in a thread to answer my questions · 👍 / 👎 on an answer teaches me when to ask"
        ),
    ]


def run_summary_line(state: RunState) -> str:
    """`• `ab12cd34ef56` ✅ answered · 🟡 notify 0.82 · “question” · <date>`."""
    line = f"• `{state.run_id}` {RUN_STATUS_LABEL[state.status]}"
    if state.overall_confidence is not None:
        line += f" · {badge(state.overall_confidence, state.level)}"
    question = safe(one_line(state.query), RUN_QUESTION_LIMIT)
    line += f" · “{question}” · {slack_date(state.created_at)}"
    return line


def runs_list_blocks(runs: list[RunState], undelivered: list[str] | None = None) -> list[Block]:
    """A compact list of runs, newest first as given, capped at `MAX_RUNS_LISTED`; then
    `undelivered`: one line per run whose Slack messages have not gone out yet."""
    blocks: list[Block] = [header("GRACE — runs")]
    if not runs:
        blocks.append(section("_No active or paused runs here. Mention me to ask something._"))
        return _cap(blocks + undelivered_blocks(undelivered or []))
    lines = [run_summary_line(r) for r in runs[:MAX_RUNS_LISTED]]
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
    ]
    if state.llm_model:
        facts.append(f"model {safe(one_line(state.llm_model), 100)}")
    blocks: list[Block] = [
        header(f"GRACE run {state.run_id}"),
        section(f">{safe(one_line(state.query), 1500)}"),
        context(*facts),
    ]

    if state.overall_confidence is not None:
        line = f"*Confidence:* {badge(state.overall_confidence, state.level)}"
        detail = state.overall_detail
        if detail is not None and detail.breakdown:
            line += f"\n{factor_text(sorted(detail.breakdown.items()))}"
        if detail is not None and detail.penalties:
            line += "\nPenalties: " + "; ".join(safe(one_line(p), 200) for p in detail.penalties)
        blocks.append(section(line))

    pending = state.pending
    if pending is not None and pending.status is InterventionStatus.PENDING:
        emoji = LEVEL_EMOJI.get(pending.level, LEVEL_EMOJI[InterventionLevel.ESCALATE])
        text = f"{emoji} *Waiting for an answer* ({pending.kind.value}): "
        text += safe(one_line(pending.question), 1000)
        if pending.expires_at is not None:
            text += f"\nExpires {slack_date(pending.expires_at)}"
        blocks.append(section(text))

    if state.error:
        blocks.append(section(f"❌ {safe(one_line(state.error), 1500)}"))

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
        blocks.extend(step_sections(step_lines(state), budget))
    return _cap(blocks + tail)


def _format_number(value: float | int) -> str:
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if abs(value) < 1:
        return f"{value:.3f}"
    return f"{value:,.2f}"


def stats_blocks(stats: Mapping[str, float | int]) -> list[Block]:
    """Named figures (`runs_total`, `mean_confidence`, `cost_usd_today`…) as a list."""
    blocks: list[Block] = [header("GRACE — stats")]
    if not stats:
        blocks.append(section("_No figures yet._"))
        return blocks
    lines = [
        f"• *{safe(name.replace('_', ' '), 200)}*: {_format_number(value)}"
        for name, value in stats.items()
    ]
    blocks.extend(sections(lines))
    return _cap(blocks)


_THRESHOLD_ORDER = (InterventionLevel.SILENT, InterventionLevel.NOTIFY, InterventionLevel.CONFIRM)


def thresholds_blocks(thresholds: Mapping[str, float]) -> list[Block]:
    """The current decide_action cut-offs, as the bands a score falls into."""
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
    blocks.append(context("Adjusted from 👍 / 👎 feedback on recent answers, within fixed bounds."))
    return _cap(blocks)


def error_blocks(message: str) -> list[Block]:
    """A short ephemeral error, e.g. an unknown run id or a refused command."""
    return [section(f"⚠️ {safe(message.strip() or 'Something went wrong.', 2900)}")]
