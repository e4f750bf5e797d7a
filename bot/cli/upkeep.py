"""`grace recover`, `grace sweep` and `grace thresholds`: what the bot's background upkeep
does (`bot.service.sweeper`), once, from the command line."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.service.wiring import Services


async def run_recover(args: argparse.Namespace, services: Services) -> int:
    from agent.schemas import RunStatus
    from bot.service.sweeper import finish_stranded_once, recover_once

    active = await services.store.runs_with_status(RunStatus.RUNNING)
    active += await services.store.runs_with_status(RunStatus.PLANNING)
    stranded = await finish_stranded_once(services)
    for line in [*await recover_once(services), *stranded]:
        print(line)
    for state in active:
        current = await services.store.load(state.run_id)
        if (
            current is not None
            and current.status.is_active
            and current.worker != services.orchestrator.worker_id
        ):
            until = current.lease_expires_at.isoformat() if current.lease_expires_at else "?"
            print(
                f"{state.run_id}: still running in {current.worker} (lease until {until}); "
                "left alone — it is taken over once that lease runs out"
            )
    if not active and not stranded:
        print("nothing to recover")
    return 0


async def run_sweep(args: argparse.Namespace, services: Services) -> int:
    from bot.service.sweeper import sweep_once

    outcomes = await sweep_once(services)
    for line in outcomes:
        print(line)
    if not outcomes:
        print("nothing expired")
    return 0


async def run_thresholds(args: argparse.Namespace, services: Services) -> int:
    t = services.orchestrator.thresholds
    print(f"silent {t.silent:.2f}  notify {t.notify:.2f}  confirm {t.confirm:.2f}")
    return 0
