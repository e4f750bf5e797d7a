"""Issue 22: what held when the bot was probed, kept holding — nobody answers another
person's run whatever ids they forge, a replayed event is one run, a flood of clicks is
one resume, a deep body is refused fast, and a mention carrying another channel's
`thread_ts` starts a fresh run there."""

from __future__ import annotations

import asyncio
import json

from agent.schemas import InterventionStatus
from blocks import ids
from bot.simulator.requests import JSON_CONTENT_TYPE, app_mention_envelope
from bot.slack.conversation import REFUSAL
from tests.bot.conftest import ASKER, OTHER, VACATION_Q, BotHarness

ELSEWHERE = "C0ELSEWHERE9"
TS = "1700290000.000100"


async def test_nobody_answers_another_persons_run_whatever_ids_they_forge(
    harness: BotHarness,
) -> None:
    state, plan, value = await harness.plan_to_approve(ts=TS)
    assert state.pending is not None
    await harness.click(ids.PLAN_RUN, value, message=plan, user=OTHER)
    forged = ids.ButtonValue(
        run_id=state.run_id, intervention_id=state.pending.intervention_id
    ).encode()
    await harness.click(ids.PLAN_CANCEL, forged, user=OTHER, thread_ts="1700290099.000100")
    assert harness.ephemerals(OTHER).count(REFUSAL) == 2
    after = await harness.run_in(TS)
    assert after.pending is not None
    assert after.pending.intervention_id == state.pending.intervention_id


async def test_a_replayed_event_is_one_run(harness: BotHarness) -> None:
    envelope = app_mention_envelope(text=VACATION_Q, ts=TS)
    for retry in (None, 1, 2):
        assert (await harness.event(envelope, retry_num=retry)).status == 200
    assert len(await harness.runs_in(TS)) == 1


async def test_a_flood_of_clicks_resumes_once(harness: BotHarness) -> None:
    state, plan, value = await harness.plan_to_approve(ts=TS)
    replies = await asyncio.gather(
        *(harness.click(ids.PLAN_RUN, value, message=plan, settle=False) for _ in range(40))
    )
    assert {r.status for r in replies} == {200}
    await harness.settle()
    after = await harness.run_in(TS)
    answered = [
        i
        for i in after.interventions
        if i.intervention_id == state.pending.intervention_id  # type: ignore[union-attr]
        and i.status is InterventionStatus.ANSWERED
    ]
    assert len(answered) == 1


async def test_a_deeply_nested_body_is_refused(harness: BotHarness) -> None:
    """Refused by the depth check, never by a recursion error (how fast: bench.hostile_input;
    no wall-clock assertion on a shared machine)."""
    body = '{"a":' * 5000 + "1" + "}" * 5000
    reply = await harness.signed(body, JSON_CONTENT_TYPE)
    assert reply.status == 400
    nested_value = json.dumps({"type": "event_callback", "event": "[" * 9000 + "]" * 9000})
    reply = await harness.signed(nested_value, JSON_CONTENT_TYPE)
    assert 400 <= reply.status < 500, "a nested string in a field: a 4xx, never a 500"


async def test_another_channels_thread_ts_starts_a_fresh_run(harness: BotHarness) -> None:
    first = await harness.ask(VACATION_Q, ts=TS)
    envelope = app_mention_envelope(
        text=VACATION_Q, ts="1700290001.000100", thread_ts=TS, channel=ELSEWHERE
    )
    await harness.event(envelope)
    fresh = await harness.run_in(TS, channel=ELSEWHERE)
    assert fresh.run_id != first.run_id and fresh.context == ""
    assert (await harness.run_in(TS)).run_id == first.run_id
    assert fresh.asker == ASKER
