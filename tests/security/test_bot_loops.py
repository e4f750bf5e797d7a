"""Issue 22 point 4: events from bots never start or resume a run (unless a setting names
the bot); runs per thread and per person per minute are capped, with one polite reply."""

from __future__ import annotations

from typing import Any

from bot.simulator.requests import app_mention_envelope, message_envelope
from tests.bot.conftest import ASKER, MONGOLIA_Q, OTHER, VACATION_Q, BotHarness

from .conftest import SecureFactory

TS = "1700220000.000100"
OTHER_BOT = "B0OTHERBOT1"
OTHER_BOT_USER = "U0OTHERBOT1"


def from_bot(envelope: dict[str, Any], *, user: str | None = OTHER_BOT_USER) -> dict[str, Any]:
    event = envelope["event"]
    event["bot_id"] = OTHER_BOT
    if user is None:
        event.pop("user", None)
    else:
        event["user"] = user
    return envelope


async def runs(h: BotHarness) -> int:
    return len(await h.store.runs.list_runs(limit=500))


async def test_ten_bot_mentions_in_one_thread_start_no_run(harness: BotHarness) -> None:
    for n in range(10):
        envelope = app_mention_envelope(
            text=f"<@U0GRACEBOT> {VACATION_Q}", ts=f"1700220000.{n + 200:06d}", thread_ts=TS
        )
        reply = await harness.event(from_bot(envelope))
        assert reply.status == 200
    assert await runs(harness) == 0
    assert harness.thread(TS) == [], "no answer, no notice: nothing for the bot to answer"


async def test_a_mention_with_no_user_or_a_bot_message_subtype_starts_no_run(
    harness: BotHarness,
) -> None:
    no_user = app_mention_envelope(text=VACATION_Q, ts="1700220001.000100")
    del no_user["event"]["user"]
    assert (await harness.event(no_user)).status == 200
    subtype = app_mention_envelope(text=VACATION_Q, ts="1700220002.000100")
    subtype["event"]["subtype"] = "bot_message"
    assert (await harness.event(subtype)).status == 200
    assert await runs(harness) == 0
    assert not [r for r in await harness.store.runs.list_runs(limit=50) if r.asker == ""]


async def test_a_bot_reply_never_answers_a_paused_run(harness: BotHarness) -> None:
    state = await harness.ask(MONGOLIA_Q, ts=TS)
    assert state.pending is not None, "this question pauses for a person"
    before = state.pending.intervention_id
    reply = message_envelope(text="proceed", ts="1700220003.000100", thread_ts=TS, user=ASKER)
    await harness.event(from_bot(reply, user=ASKER))
    after = await harness.run_in(TS)
    assert after.pending is not None and after.pending.intervention_id == before


async def test_a_named_bot_may_ask(secure: SecureFactory) -> None:
    h = await secure(slack={"allowed_bots": [OTHER_BOT]})
    envelope = app_mention_envelope(text=VACATION_Q, ts=TS)
    assert (await h.event(from_bot(envelope))).status == 200
    state = await h.run_in(TS)
    assert state.asker == OTHER_BOT_USER


async def test_runs_per_person_per_minute_are_capped_with_one_reply(
    secure: SecureFactory,
) -> None:
    h = await secure(slack={"runs_per_user_per_minute": 2})
    for n in range(5):
        await h.mention(VACATION_Q, ts=f"1700220100.{n:06d}")
    assert await runs(h) == 2
    told = [t for t in h.ephemerals(ASKER) if "in the last minute" in t]
    assert len(told) == 1, told
    await h.mention(VACATION_Q, ts="1700220200.000001", user=OTHER)
    assert await runs(h) == 3, "another person is not held back"


async def test_runs_per_thread_per_minute_are_capped_with_one_reply(
    secure: SecureFactory,
) -> None:
    h = await secure(slack={"runs_per_thread_per_minute": 1})
    first = await h.ask(VACATION_Q, ts=TS)
    assert first.status.is_final or first.pending is not None
    if first.pending is not None:
        await h.command(f"cancel {first.run_id}")
    for n, user in enumerate((OTHER, ASKER, OTHER)):
        await h.mention(VACATION_Q, ts=f"1700220300.{n:06d}", thread_ts=TS, user=user)
    assert len(await h.runs_in(TS)) == 1
    notices = [m for m in h.thread(TS) if "in the last minute" in m.text]
    assert len(notices) == 1
