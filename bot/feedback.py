"""👍/👎 feedback: stored once per (run, user), and it teaches the thresholds."""

from __future__ import annotations

from agent.config import InterventionConfig
from agent.intervention import DynamicThresholdAdjuster
from agent.orchestrator import Orchestrator
from agent.schemas import RunState
from storage.run_store import SqlRunStore


async def record_feedback(
    *,
    store: SqlRunStore,
    orchestrator: Orchestrator,
    config: InterventionConfig,
    state: RunState,
    user: str,
    up: bool,
) -> str:
    """Store the vote, let the adjuster look at the recent window, persist any change."""
    if state.overall_confidence is None:
        return f"Run {state.run_id} has no answer yet; feedback is for answers."
    new = await store.record_feedback(
        run_id=state.run_id,
        user_id=user,
        confidence=state.overall_confidence,
        was_correct=up,
    )
    adjuster = DynamicThresholdAdjuster(orchestrator.thresholds, config)
    change = adjuster.update(await store.recent_feedback(config.feedback_window))
    if change is not None:
        orchestrator.thresholds = adjuster.thresholds
        await store.save_thresholds(adjuster.thresholds)
    vote = "👍" if up else "👎"
    verb = "recorded" if new else "updated"
    message = f"{vote} feedback {verb} for run {state.run_id}."
    if change:
        t = adjuster.thresholds
        message += (
            f" Thresholds {change} → silent {t.silent:.2f}, notify {t.notify:.2f}, "
            f"confirm {t.confirm:.2f}."
        )
    return message
