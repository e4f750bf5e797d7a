"""Acceptance 4: DynamicThresholdAdjuster (agent/intervention.py, seed 000 §4.3)."""

from __future__ import annotations

import pytest

from agent.config import InterventionConfig, Thresholds
from agent.intervention import LOWER, UPPER, DynamicThresholdAdjuster

CONFIDENT_WRONG = (0.85, False)  # false positive: confidence > 0.7, answer wrong
UNSURE_RIGHT = (0.3, True)  # false negative: confidence < 0.5, answer right
FINE = (0.8, True)


@pytest.fixture
def adjuster() -> DynamicThresholdAdjuster:
    return DynamicThresholdAdjuster(Thresholds(), InterventionConfig())


def test_nothing_changes_before_a_full_window_of_ten(adjuster: DynamicThresholdAdjuster) -> None:
    assert adjuster.update([CONFIDENT_WRONG] * 9) is None
    assert adjuster.thresholds == Thresholds()


@pytest.mark.parametrize(
    ("misjudged", "word", "silent", "notify", "confirm"),
    [
        (CONFIDENT_WRONG, "raised", 0.95, 0.75, 0.45),
        (UNSURE_RIGHT, "lowered", 0.85, 0.65, 0.35),
    ],
    ids=["false positives raise", "false negatives lower"],
)
def test_more_than_three_misjudged_answers_move_every_threshold(
    adjuster: DynamicThresholdAdjuster,
    misjudged: tuple[float, bool],
    word: str,
    silent: float,
    notify: float,
    confirm: float,
) -> None:
    message = adjuster.update([misjudged] * 4 + [FINE] * 6)
    assert message is not None and message.startswith(word)
    assert adjuster.thresholds.silent == pytest.approx(silent)
    assert adjuster.thresholds.notify == pytest.approx(notify)
    assert adjuster.thresholds.confirm == pytest.approx(confirm)


def test_exactly_three_false_positives_change_nothing(adjuster: DynamicThresholdAdjuster) -> None:
    assert adjuster.update([CONFIDENT_WRONG] * 3 + [FINE] * 7) is None
    assert adjuster.thresholds == Thresholds()


def test_only_the_last_ten_answers_count(adjuster: DynamicThresholdAdjuster) -> None:
    history = [CONFIDENT_WRONG] * 8 + [FINE] * 10
    assert adjuster.update(history) is None
    assert adjuster.thresholds == Thresholds()


def test_borderline_confidences_are_neither_false_positive_nor_negative(
    adjuster: DynamicThresholdAdjuster,
) -> None:
    # 0.7 is not "> 0.7" and 0.5 is not "< 0.5"
    assert adjuster.update([(0.7, False)] * 5 + [(0.5, True)] * 5) is None


def test_thresholds_stay_within_bounds(adjuster: DynamicThresholdAdjuster) -> None:
    for _ in range(20):
        adjuster.update([CONFIDENT_WRONG] * 10)
    assert adjuster.thresholds == UPPER
    for _ in range(40):
        adjuster.update([UNSURE_RIGHT] * 10)
    assert adjuster.thresholds == LOWER
    t = adjuster.thresholds
    assert t.silent >= t.notify >= t.confirm


def test_learning_rate_and_window_are_configurable() -> None:
    adjuster = DynamicThresholdAdjuster(
        Thresholds(), InterventionConfig(learning_rate=0.1, feedback_window=5)
    )
    assert adjuster.update([CONFIDENT_WRONG] * 4 + [FINE]) is not None
    assert adjuster.thresholds.notify == pytest.approx(0.8)
