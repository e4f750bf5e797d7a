"""Issue 9 point 4: who the bot is (`auth.test`) is asked once, at start-up, with a
timeout and a one-line error — never per request, so a cold burst makes one call."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from agent.errors import InvalidInputError, NetworkError
from bot.simulator.requests import (
    JSON_CONTENT_TYPE,
    app_mention_envelope,
    event_envelope,
    json_body,
)
from bot.simulator.webapi import FakeSlack
from bot.simulator.workspace import DEFAULT_CHANNEL_ID
from bot.slack.compose import create_bot
from tests.bot.conftest import BotHarness, make_settings
from tests.durable.helpers import grace_async, grace_env

BURST = 50


def _reaction(n: int) -> dict[str, object]:
    return event_envelope(
        {
            "type": "reaction_added",
            "user": "U0ASKER0001",
            "reaction": "eyes",
            "item": {"type": "message", "channel": DEFAULT_CHANNEL_ID, "ts": f"1700070000.{n:06d}"},
            "event_ts": f"1700070001.{n:06d}",
        }
    )


async def test_a_cold_burst_of_50_events_makes_exactly_one_auth_test(
    fake: FakeSlack, data_dir: Path
) -> None:
    harness = BotHarness(fake, make_settings(data_dir, fake))
    await harness.start()
    try:
        envelopes = [_reaction(n) for n in range(BURST - 5)]
        envelopes += [
            app_mention_envelope(text="How many vacation days?", ts=f"1700071000.{n:06d}")
            for n in range(5)
        ]
        replies = await asyncio.gather(
            *(harness.signed(json_body(e), JSON_CONTENT_TYPE, settle=False) for e in envelopes)
        )
        await harness.settle()
        assert [r.status for r in replies] == [200] * BURST
        assert len(fake.calls_to("auth.test")) == 1, "asked once, at start-up"
        state = await harness.run_in("1700071000.000000")
        assert state.status.is_final or state.pending is not None
    finally:
        await harness.close()


async def test_start_up_fails_fast_and_clearly_when_slack_hangs(
    fake: FakeSlack, data_dir: Path
) -> None:
    fake.set_delay("auth.test", 30)
    settings = make_settings(data_dir, fake)
    settings.slack.auth_timeout_seconds = 0.5
    started = time.monotonic()
    with pytest.raises(NetworkError) as caught:
        await create_bot(settings)
    assert time.monotonic() - started < 5
    message = caught.value.message
    assert fake.base_url in message and "auth.test" in message and "\n" not in message


async def test_a_refused_token_is_a_one_line_input_error(fake: FakeSlack, data_dir: Path) -> None:
    fake.fail_next("auth.test", error="invalid_auth")
    with pytest.raises(InvalidInputError) as caught:
        await create_bot(make_settings(data_dir, fake))
    assert "invalid_auth" in caught.value.message and fake.base_url in caught.value.message


async def test_grace_serve_exits_with_one_line_when_slack_is_unreachable(tmp_path: Path) -> None:
    env = grace_env(
        tmp_path / "data",
        SLACK_BOT_TOKEN="xoxb-test",
        SLACK_SIGNING_SECRET="secret",
        SLACK_API_URL="http://127.0.0.1:9/api/",  # discard port: nothing listens
        GRACE_SLACK__AUTH_TIMEOUT_SECONDS="3",
    )
    code, _, err = await grace_async(env, "serve", "--port", "0", "--host", "127.0.0.1")
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 1
    assert "Traceback" not in err
    errors = [line for line in lines if line.startswith("error:")]
    assert len(errors) == 1 and "http://127.0.0.1:9/api/" in errors[0], err
    assert all(json.loads(line) for line in lines if not line.startswith("error:"))
