"""The ack path does not wait for the agent: an event is acked (and stored first) while
a run is busy in the model. No clocks: the test waits on a definite signal."""

from __future__ import annotations

import asyncio

from agent.llm.offline import OfflineModel
from tests.agent.doubles import GatedModel

from .conftest import VACATION_Q, HarnessFactory

BOUND = 10.0
"""Seconds to wait for a signal that comes at once unless the code under test is wrong."""
TURNS = 50
"""Loop turns given to background work that should not take any of them."""


async def test_an_event_is_stored_and_acked_while_a_run_is_blocked_in_the_agent(
    make_harness: HarnessFactory,
) -> None:
    model = GatedModel(OfflineModel())
    harness = await make_harness(llm=model)
    try:
        first = await harness.mention(VACATION_Q, ts="1700009000.000100", settle=False)
        assert first.status == 200
        await asyncio.wait_for(model.reached.wait(), BOUND)

        second = await asyncio.wait_for(
            harness.mention(VACATION_Q, ts="1700009000.000200", settle=False), BOUND
        )
        assert second.status == 200
        assert not model.gate.is_set(), "acked while the first run was still blocked"
        # stored before its ack: still in the inbox, or already taken in as a run
        pending = {e.payload["thread_ts"] for e in await harness.bot.services.inbox.pending()}
        taken = await harness.store.latest_run_in_thread(harness.key("1700009000.000200"))
        assert "1700009000.000200" in pending or taken is not None

        model.gate.set()
        await harness.settle()
        for ts in ("1700009000.000100", "1700009000.000200"):
            assert (await harness.run_in(ts)).status.value == "answered"
        assert await harness.bot.services.inbox.pending() == []
    finally:
        model.gate.set()  # a failed check must not leave the run blocked for teardown
