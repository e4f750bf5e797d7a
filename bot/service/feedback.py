"""👍/👎 feedback: one vote per person per answer; the asker's and approvers' votes
(or everyone's, by setting) teach the thresholds, atomically (storage/feedback.py) —
but only a quorum of distinct people can move them (agent/feedback_quorum.py), each
person's votes are rate-limited, and every change is recorded (storage/threshold_audit.py)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Protocol

from agent.config import Thresholds
from agent.feedback_quorum import FeedbackQuorum
from agent.intervention import DynamicThresholdAdjuster
from agent.orchestrator import Orchestrator
from agent.schemas import RunState, utcnow
from bot.service.settings import Settings
from storage.feedback import SqlFeedback, Voters
from storage.run_store import SqlRunStore
from storage.threshold_audit import SqlThresholdAudit


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


class VoteCounters(Protocol):
    """The running parts a vote needs: the Slack layer's `BotDeps` and the command
    line's `Services` both have them."""

    store: SqlRunStore
    orchestrator: Orchestrator
    settings: Settings


async def record_feedback(
    parts: VoteCounters, *, state: RunState, user: str, up: bool
) -> FeedbackReply:
    """Store the vote and, when it counts, let the adjuster look at the fair window of
    counted votes (a quorum of people, none filling it alone); the message quotes the
    thresholds exactly as stored. `settings.feedback` says whose votes count, the quorum
    and the hourly limit; `settings.intervention` how the thresholds move."""
    store, orchestrator, settings = parts.store, parts.orchestrator, parts.settings
    if state.overall_confidence is None:
        return FeedbackReply(f"Run {state.run_id} has no answer yet; feedback is for answers.")
    config = settings.intervention
    limit = settings.feedback.max_votes_per_hour
    since = utcnow() - timedelta(hours=1)
    if await SqlThresholdAudit(store.engine).votes_since(user, since) >= limit:
        return FeedbackReply(
            f"You have voted {limit} times in the last hour, my limit; "
            "this vote was not recorded. Thank you — try again later.",
            counted=False,
        )
    fair = FeedbackQuorum(settings.feedback.quorum)
    # OAuth mode: each workspace's votes move its own thresholds only (issue 21)
    team = state.thread.team_id if settings.oauth_mode else None

    def adjust(
        current: Thresholds, history: list[tuple[float, bool, str]]
    ) -> tuple[Thresholds, str] | None:
        window = fair.window(history, config.feedback_window)
        if window is None:
            return None  # not enough people's votes yet: nobody moves the thresholds alone
        adjuster = DynamicThresholdAdjuster(current, config)
        change = adjuster.update(window)
        return (adjuster.thresholds, change) if change else None

    outcome = await SqlFeedback(store.engine).vote(
        run_id=state.run_id,
        user_id=user,
        confidence=state.overall_confidence,
        was_correct=up,
        voters=Voters(
            approvers=tuple(orchestrator.approvers),
            everyone=settings.feedback.counted_voters == "everyone",
        ),
        window=config.feedback_window,
        default=orchestrator.thresholds_for(state),
        adjust=adjust,
        fetch=fair.fetch(config.feedback_window),
        team_id=team,
    )
    if team is None:
        orchestrator.thresholds = outcome.thresholds
    else:
        orchestrator.team_thresholds[team] = outcome.thresholds
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
