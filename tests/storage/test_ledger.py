"""The cost ledger (storage/ledger.py)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from agent.ports import UsageLedger
from agent.schemas import TokenUsage, utcnow
from storage.ledger import SqlUsageLedger


async def test_ledger_sums(ledger: SqlUsageLedger) -> None:
    port: UsageLedger = ledger
    start = utcnow()
    await port.record(
        "r1", TokenUsage(input_tokens=100, output_tokens=10, calls=1, cost_usd=0.01), "m"
    )
    await port.record(
        "r1", TokenUsage(input_tokens=50, output_tokens=5, calls=2, cost_usd=0.02), "m"
    )
    await port.record("r2", TokenUsage(input_tokens=1, output_tokens=1, calls=1, cost_usd=0.5), "m")

    assert await port.spent_since(start - timedelta(seconds=1)) == pytest.approx(0.53)
    assert await port.spent_since(utcnow() + timedelta(seconds=1)) == 0.0
    assert await ledger.run_cost("r1") == pytest.approx(0.03)
    assert await ledger.run_cost("none") == 0.0
    totals = await ledger.totals(start - timedelta(seconds=1))
    assert (totals.input_tokens, totals.output_tokens, totals.calls) == (151, 16, 4)
    assert totals.cost_usd == pytest.approx(0.53)
