"""Issue 9 point 6: 👍/👎 cannot be gamed and never loses an update.

Clicks go through signed Slack requests to the real app; the answered runs they vote on
are stored directly (running 14 agents would only slow the test down)."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from agent.config import InterventionConfig, Thresholds
from agent.schemas import RunState
from blocks import ids
from bot.service.settings import FeedbackSettings, load_settings
from bot.simulator.webapi import FakeSlack
from tests.bot.conftest import ASKER, OTHER, BotHarness, make_settings, stored_answers

VOTES = 14
RATE = 0.01
WINDOW = 4
START = Thresholds(silent=0.9, notify=0.7, confirm=0.4)
_NOTIFY = re.compile(r"notify (\d\.\d\d)")


async def _harness(fake: FakeSlack, data_dir: Path, **feedback: object) -> BotHarness:
    settings = make_settings(data_dir, fake)
    settings.intervention = InterventionConfig(feedback_window=WINDOW, learning_rate=RATE)
    settings.feedback = FeedbackSettings(**feedback)  # type: ignore[arg-type]
    harness = BotHarness(fake, settings)
    await harness.start()
    return harness


async def _answered_runs(harness: BotHarness, count: int, *, prefix: str) -> list[RunState]:
    return await stored_answers(
        harness, count, prefix=prefix, asker=ASKER, confidence=0.9, ts_prefix="1700080"
    )


async def _thumbs_down(harness: BotHarness, runs: list[RunState], user: str) -> None:
    clicks = [
        harness.click(
            ids.FEEDBACK_DOWN,
            ids.ButtonValue(run_id=run.run_id).encode(),
            user=user,
            thread_ts=run.thread.thread_ts,
            settle=False,
        )
        for run in runs
    ]
    replies = await asyncio.gather(*clicks)
    assert [r.status for r in replies] == [200] * len(runs)
    await harness.settle()


async def test_a_burst_of_votes_loses_no_update_and_reports_what_is_stored(
    fake: FakeSlack, data_dir: Path
) -> None:
    harness = await _harness(fake, data_dir, quorum=1)  # one voter: lost updates are the point
    try:
        runs = await _answered_runs(harness, VOTES, prefix="burst")
        await _thumbs_down(harness, runs, ASKER)
        stored = await harness.store.load_thresholds()
        told = harness.ephemerals(ASKER)
    finally:
        await harness.close()
    assert len(told) == VOTES
    reported = [float(m.group(1)) for text in told if (m := _NOTIFY.search(text))]
    raises = VOTES - (WINDOW - 1)  # every vote once the window is full of wrong answers
    assert len(reported) == raises, told
    assert sorted(reported) == sorted(set(reported)), "two voters were told the same step"
    assert stored is not None
    assert round(stored.notify, 2) == max(reported), "the last value reported is stored"
    assert abs(stored.notify - (START.notify + raises * RATE)) < 1e-9, stored


async def test_votes_of_others_are_kept_but_do_not_move_thresholds(
    fake: FakeSlack, data_dir: Path
) -> None:
    harness = await _harness(fake, data_dir)
    try:
        runs = await _answered_runs(harness, VOTES, prefix="other")
        await _thumbs_down(harness, runs, OTHER)
        stored = await harness.store.load_thresholds()
        told = harness.ephemerals(OTHER)
        kept = await harness.store.recent_feedback(limit=100)
        live = harness.bot.deps.orchestrator.thresholds
    finally:
        await harness.close()
    assert stored is None and live == START, "a bystander moved the thresholds"
    assert len(kept) == VOTES, "their votes are still stored"
    assert all("not counted" in text for text in told), told


async def test_everyone_counts_when_configured(fake: FakeSlack, data_dir: Path) -> None:
    harness = await _harness(fake, data_dir, counted_voters="everyone", quorum=1)
    try:
        runs = await _answered_runs(harness, WINDOW, prefix="every")
        await _thumbs_down(harness, runs, OTHER)
        stored = await harness.store.load_thresholds()
    finally:
        await harness.close()
    assert stored is not None and stored.notify > START.notify


async def test_one_vote_per_person_per_answer_a_changed_vote_replaces_it(
    fake: FakeSlack, data_dir: Path
) -> None:
    harness = await _harness(fake, data_dir)
    try:
        [run] = await _answered_runs(harness, 1, prefix="change")
        value = ids.ButtonValue(run_id=run.run_id).encode()
        ts = run.thread.thread_ts
        for action in (ids.FEEDBACK_UP, ids.FEEDBACK_UP, ids.FEEDBACK_DOWN):
            assert (await harness.click(action, value, thread_ts=ts)).status == 200
        kept = await harness.store.recent_feedback(limit=100)
        told = harness.ephemerals(ASKER)
    finally:
        await harness.close()
    assert kept == [(0.9, False)], "one vote, the latest"
    assert "recorded" in told[0] and "updated" in told[1] and "updated" in told[2]


def test_the_new_settings_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRACE_FEEDBACK__COUNTED_VOTERS", "everyone")
    monkeypatch.setenv("GRACE_LOG_CONTENT", "true")
    monkeypatch.setenv("GRACE_SLACK__AUTH_TIMEOUT_SECONDS", "3")
    monkeypatch.setenv("GRACE_SLACK__EVENT_RETENTION_DAYS", "2")
    settings = load_settings()
    assert settings.feedback.counted_voters == "everyone" and settings.log_content
    assert settings.slack.auth_timeout_seconds == 3 and settings.slack.event_retention_days == 2
    monkeypatch.setenv("GRACE_FEEDBACK__COUNTED_VOTERS", "anyone")
    with pytest.raises(ValidationError):
        load_settings()
