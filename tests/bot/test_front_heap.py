"""`grace serve`'s front leaves its start-up objects out of the garbage collector's full
collections (`gc.freeze`), which otherwise paused its event loop, and the acks in flight,
for tens of milliseconds a few times per burst (issue 23 point 7)."""

from __future__ import annotations

import gc
import os
from pathlib import Path

from bot.service.settings import LLMSettings, Settings
from bot.simulator.webapi import FakeSlack
from bot.slack.front import start_front

SECRET = "front-heap-secret-0123456789abcdef"


async def test_a_started_front_has_frozen_its_start_up_objects(tmp_path: Path) -> None:
    gc.unfreeze()
    assert gc.get_freeze_count() == 0
    async with FakeSlack() as fake:
        data_dir = tmp_path / "grace"
        settings = Settings(
            _env_file=None,  # type: ignore[call-arg]
            data_dir=data_dir,
            slack_bot_token="xoxb-heap",
            slack_signing_secret=SECRET,
            slack_api_url=fake.base_url,
            llm=LLMSettings(provider="offline"),
        )
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GRACE_", "SLACK_"))}
        env.update(
            GRACE_DATA_DIR=str(data_dir),
            SLACK_BOT_TOKEN="xoxb-heap",
            SLACK_SIGNING_SECRET=SECRET,
            SLACK_API_URL=fake.base_url,
            GRACE_LLM__PROVIDER="offline",
        )
        runtime = await start_front(settings, port=0, host="127.0.0.1", env=env, access_log=False)
        try:
            assert gc.get_freeze_count() > 10_000, "imports, settings, apps: out of collections"
        finally:
            await runtime.stop(5.0)
            gc.unfreeze()  # this test process goes on to other tests
