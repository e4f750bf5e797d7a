"""Fixtures for the fault-and-abuse suite: the real Bolt app over HTTP with signed
requests (tests/bot/conftest.py), with settings a test may tighten."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from bot.simulator.webapi import FakeSlack
from tests.bot.conftest import (  # noqa: F401  (fixtures)
    BotHarness,
    HarnessFactory,
    data_dir,
    fake,
    harness,
    kb_template,
    make_harness,
    make_settings,
    started,
)

SecureFactory = Callable[..., Awaitable[BotHarness]]


@pytest.fixture
def secure(make_harness: HarnessFactory, fake: FakeSlack, data_dir: Path) -> SecureFactory:  # noqa: F811
    """`await secure(approvers=[...], slack={...}, feedback={...})`: a started bot whose
    `SlackSettings` / `FeedbackSettings` fields are overridden as given."""

    async def factory(
        *,
        approvers: Sequence[str] = (),
        slack: dict[str, Any] | None = None,
        feedback: dict[str, Any] | None = None,
    ) -> BotHarness:
        settings = make_settings(data_dir, fake, approvers)
        update: dict[str, Any] = {}
        if slack:
            update["slack"] = settings.slack.model_copy(update=slack)
        if feedback:
            update["feedback"] = settings.feedback.model_copy(update=feedback)
        return await make_harness(settings=settings.model_copy(update=update))

    return factory
