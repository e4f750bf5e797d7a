"""👍/👎 feedback: one vote per person per answer; the asker's and approvers' votes
(or everyone's, by setting) teach the thresholds, atomically (storage/feedback.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from agent.config import InterventionConfig, Thresholds
from agent.intervention import DynamicThresholdAdjuster
from agent.orchestrator import Orchestrator
from agent.schemas import RunState
from storage.feedback import SqlFeedback, Voters
from storage.run_store import SqlRunStore

CountedVoters = Literal["asker_and_approvers", "everyone"]


@dataclass(frozen=True)
class FeedbackReply:
    text: str
    """One line for the voter; it quotes the thresholds exactly as stored."""
    counted: bool = True
    thresholds: str | None = None
    """\"Thresholds raised: … → silent …\" when this vote moved them."""


NOT_COUNTED = (
    "Your vote is kept but not counted: only the person who asked and GRACE's approvers "
    "tune when GRACE asks before answering."
)


async def record_feedback(
    *,
    store: SqlRunStore,
    orchestrator: Orchestrator,
    config: InterventionConfig,
    state: RunState,
    user: str,
    up: bool,
    counted_voters: CountedVoters = "asker_and_approvers",
) -> FeedbackReply:
    """Store the vote and, when it counts, let the adjuster look at the recent window of
    counted votes; the message quotes the thresholds exactly as stored."""
    if state.overall_confidence is None:
        return FeedbackReply(f"Run {state.run_id} has no answer yet; feedback is for answers.")

    def adjust(
        current: Thresholds, history: list[tuple[float, bool]]
    ) -> tuple[Thresholds, str] | None:
        adjuster = DynamicThresholdAdjuster(current, config)
        change = adjuster.update(history)
        return (adjuster.thresholds, change) if change else None

    outcome = await SqlFeedback(store.engine).vote(
        run_id=state.run_id,
        user_id=user,
        confidence=state.overall_confidence,
        was_correct=up,
        voters=Voters(
            approvers=tuple(orchestrator.approvers), everyone=counted_voters == "everyone"
        ),
        window=config.feedback_window,
        default=orchestrator.thresholds,
        adjust=adjust,
    )
    orchestrator.thresholds = outcome.thresholds
    vote = "👍" if up else "👎"
    verb = "recorded" if outcome.first else "updated"
    message = f"{vote} feedback {verb} for run {state.run_id}."
    if not outcome.counted:
        return FeedbackReply(f"{message} {NOT_COUNTED}", counted=False)
    if not outcome.change:
        return FeedbackReply(message)
    t = outcome.thresholds
    moved = (
        f"Thresholds {outcome.change} → silent {t.silent:.2f}, notify {t.notify:.2f}, "
        f"confirm {t.confirm:.2f}."
    )
    return FeedbackReply(f"{message} {moved}", thresholds=moved)
