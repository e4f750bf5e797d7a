"""Token pricing and spending limits (SPEC §2.8)."""

from __future__ import annotations

from datetime import timedelta

from agent.config import CostConfig
from agent.errors import CostLimitError
from agent.ports import UsageLedger
from agent.schemas import TokenUsage, utcnow

FREE_MODELS = {"offline"}


def price(usage: TokenUsage, config: CostConfig, model: str) -> TokenUsage:
    """Attach a cost to a call's usage; the offline model is free."""
    if model in FREE_MODELS:
        return usage.model_copy(update={"cost_usd": 0.0})
    cost = (
        usage.input_tokens * config.input_usd_per_million
        + usage.output_tokens * config.output_usd_per_million
    ) / 1_000_000
    return usage.model_copy(update={"cost_usd": cost})


async def check_budget(ledger: UsageLedger | None, config: CostConfig) -> None:
    """Refuse to start work once the hourly or daily budget is spent."""
    if ledger is None:
        return
    now = utcnow()
    hourly = await ledger.spent_since(now - timedelta(hours=1))
    if hourly >= config.max_usd_per_hour:
        raise CostLimitError(
            f"The hourly LLM budget is used up (${hourly:.2f} of "
            f"${config.max_usd_per_hour:.2f}). Try again later or ask an admin to raise "
            "GRACE_COST__MAX_USD_PER_HOUR."
        )
    daily = await ledger.spent_since(now - timedelta(days=1))
    if daily >= config.max_usd_per_day:
        raise CostLimitError(
            f"Today's LLM budget is used up (${daily:.2f} of ${config.max_usd_per_day:.2f}). "
            "Ask an admin to raise GRACE_COST__MAX_USD_PER_DAY."
        )


def check_query_budget(spent: float, config: CostConfig) -> None:
    if spent >= config.max_usd_per_query:
        raise CostLimitError(
            f"This question has used its LLM budget (${spent:.4f} of "
            f"${config.max_usd_per_query:.2f}); stopping instead of spending more."
        )
