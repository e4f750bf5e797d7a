"""Human-in-the-loop requests and the thresholds that decide when to ask (SPEC §2.6)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime, timedelta

from agent.config import InterventionConfig, Thresholds
from agent.evidence import gather
from agent.schemas import (
    ConfidenceScore,
    InterventionKind,
    InterventionLevel,
    RunState,
    Source,
    utcnow,
)
from agent.schemas import InterventionRequest as InterventionRequest

# Bounds from seed 000 §4.3: thresholds move, but never past these.
UPPER = Thresholds(silent=0.95, notify=0.85, confirm=0.6)
LOWER = Thresholds(silent=0.8, notify=0.6, confirm=0.3)
FALSE_POSITIVE_CONFIDENCE = 0.7
FALSE_NEGATIVE_CONFIDENCE = 0.5
TRIGGER_COUNT = 3
MAX_SUGGESTION_CHARS = 150  # a heading, not a paragraph (a button shows 75)


class DynamicThresholdAdjuster:
    """Learns from 👍/👎: confident-but-wrong answers make the agent more careful,
    unsure-but-right answers make it bolder."""

    def __init__(self, thresholds: Thresholds, config: InterventionConfig) -> None:
        self.thresholds = thresholds
        self._config = config

    def update(self, history: Sequence[tuple[float, bool]]) -> str | None:
        """Apply the rule to the most recent feedback window; returns what changed."""
        window = list(history)[-self._config.feedback_window :]
        if len(window) < self._config.feedback_window:
            return None
        false_positives = sum(1 for c, ok in window if c > FALSE_POSITIVE_CONFIDENCE and not ok)
        false_negatives = sum(1 for c, ok in window if c < FALSE_NEGATIVE_CONFIDENCE and ok)
        rate = self._config.learning_rate
        t = self.thresholds
        if false_positives > TRIGGER_COUNT:
            self.thresholds = Thresholds(
                silent=min(UPPER.silent, t.silent + rate),
                notify=min(UPPER.notify, t.notify + rate),
                confirm=min(UPPER.confirm, t.confirm + rate),
            )
            return f"raised: {false_positives} confident answers were wrong"
        if false_negatives > TRIGGER_COUNT:
            self.thresholds = Thresholds(
                silent=max(LOWER.silent, t.silent - rate),
                notify=max(LOWER.notify, t.notify - rate),
                confirm=max(LOWER.confirm, t.confirm - rate),
            )
            return f"lowered: {false_negatives} unsure answers were right"
        return None


def expiry(config: InterventionConfig, now: datetime | None = None) -> datetime:
    return (now or utcnow()) + timedelta(hours=config.expiry_hours)


def plan_approval_request(
    state: RunState, config: InterventionConfig, responders: list[str]
) -> InterventionRequest:
    plan = state.plan
    complexity = plan.complexity if plan else 0.0
    return InterventionRequest(
        run_id=state.run_id,
        kind=InterventionKind.PLAN_APPROVAL,
        level=InterventionLevel.CONFIRM,
        question="This question looks complex. Run this plan?",
        reason=f"complexity {complexity:.2f} is above 0.6",
        options=["Run", "Edit", "Cancel"],
        allowed_responders=responders,
        expires_at=expiry(config),
    )


def confirm_request(
    state: RunState,
    step_id: int,
    score: ConfidenceScore,
    config: InterventionConfig,
    responders: list[str],
) -> InterventionRequest:
    weakest = sorted(
        ((k, v) for k, v in score.breakdown.items() if k != "base"), key=lambda kv: kv[1]
    )[:2]
    why = ", ".join(f"{k} {v:.2f}" for k, v in weakest)
    return InterventionRequest(
        run_id=state.run_id,
        step_id=step_id,
        kind=InterventionKind.CONFIRM,
        level=InterventionLevel.CONFIRM,
        question=f"Step {step_id} finished with confidence {score.score:.2f}. Continue?",
        reason=f"weakest factors: {why}" if why else "confidence below the notify threshold",
        options=["Proceed", "Modify", "Cancel"],
        confidence=score,
        allowed_responders=responders,
        expires_at=expiry(config),
    )


def escalate_request(
    state: RunState,
    step_id: int | None,
    score: ConfidenceScore | None,
    reason: str,
    config: InterventionConfig,
    responders: list[str],
    groups: list[str] | None = None,
) -> InterventionRequest:
    """Ask for details or a source; `groups`: expert user groups whose members may answer."""
    return InterventionRequest(
        run_id=state.run_id,
        step_id=step_id,
        kind=InterventionKind.ESCALATE,
        level=InterventionLevel.ESCALATE,
        question=(
            "I could not find reliable information to answer this. Can you add details "
            "or point me to a source? Reply in the thread, or proceed with what I have."
        ),
        reason=reason,
        confidence=score,
        allowed_responders=responders,
        allowed_groups=groups or [],
        expires_at=expiry(config),
    )


def did_you_mean(sources: Sequence[Source], limit: int = 3) -> list[str]:
    """What an ambiguous question may have meant: the headings of its closest passages
    (the question of an FAQ row, a document's title), distinct. Fewer than two is no
    choice, so then none."""
    found: list[str] = []
    for source in sources:
        lines = source.text.strip().splitlines()
        heading = lines[0].removeprefix("Q:").strip().lstrip("#").strip() if lines else ""
        if heading and len(heading) <= MAX_SUGGESTION_CHARS and heading not in found:
            found.append(heading)
        if len(found) == limit:
            break
    return found if len(found) >= 2 else []


def ask_user_request(
    state: RunState,
    step_id: int,
    question: str,
    reason: str,
    options: list[str],
    config: InterventionConfig,
    responders: list[str],
) -> InterventionRequest:
    return InterventionRequest(
        run_id=state.run_id,
        step_id=step_id,
        kind=InterventionKind.ASK_USER,
        level=InterventionLevel.ESCALATE,
        question=question,
        reason=reason,
        options=options,
        allowed_responders=responders,
        expires_at=expiry(config),
    )


VAGUE_TERMS = 3
"""A question with at most this many content words can be vague ("what's the budget?")."""
CLOSE_CANDIDATES = 0.8
"""Documents whose best passage scores within this share of the best one compete..."""
CLOSE_CANDIDATES_SHORT = 0.5
"""... and within this share for a question of one or two content words."""


_INTERROGATIVE = re.compile(
    r"\b(?:how|what|which|who|where|when|why)\b|いつ|どこ|誰|いくら|何", re.I
)


def ambiguity_options(query: str, sources: Sequence[Source], limit: int = 4) -> list[str]:
    """The topics to offer when a short question is answered about equally well by
    several documents ("what's the limit?" — of hotels, of meals, of gifts?): each
    competing document's title. Fewer than two is no ambiguity, so then none."""
    if len(_INTERROGATIVE.findall(query)) >= 2:
        return []  # "where do I book, and who do I email?" names two things: not vague
    evidence = gather(query, sources)
    if not evidence.query_tokens or len(evidence.query_tokens) > VAGUE_TERMS:
        return []
    best = evidence.best_per_family()
    if not best or best[0].score <= 0:
        return []
    topics: list[str] = []
    for unit in best:
        close = (
            CLOSE_CANDIDATES
            if len(evidence.query_tokens) == VAGUE_TERMS
            else CLOSE_CANDIDATES_SHORT
        )
        if unit.score < close * best[0].score:
            break
        topic = _topic(unit.context, unit.source)
        if topic and topic not in topics:
            topics.append(topic)
        if len(topics) == limit:
            break
    return topics if len(topics) >= 2 else []


def _topic(context: str, source: str) -> str:
    """A document's title: the first part of a passage's heading trail, else its name."""
    title = context.split(" › ")[0].strip() if context else ""
    if not title:
        title = source.rsplit(".", 1)[0].replace("_", " ").replace("-", " ")
    return title[:MAX_SUGGESTION_CHARS]


def clarify_request(
    state: RunState,
    step_id: int,
    options: list[str],
    config: InterventionConfig,
    responders: list[str],
) -> InterventionRequest:
    """Ask which of several documents a vague question is about, before answering."""
    japanese = any("\u3040" <= ch <= "\u9fff" for ch in state.query)
    question = (
        "この質問は複数の文書に当てはまります。どれについてですか？"
        if japanese
        else "Your question matches several documents. Which one do you mean?"
    )
    return ask_user_request(
        state,
        step_id,
        question=question,
        reason="several documents answer this short question about equally well",
        options=options,
        config=config,
        responders=responders,
    )
