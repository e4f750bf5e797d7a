"""`grace runs` and `grace show`: the stored runs, listed or one in full."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from bot.cli.output import load_run

if TYPE_CHECKING:
    from bot.service.wiring import Services


async def run_runs(args: argparse.Namespace, services: Services) -> int:
    from agent.schemas import RunStatus
    from bot.cli.report import run_json

    status = RunStatus(args.status) if args.status else None
    states = await services.store.runs.list_runs(status=status)
    if args.json:
        print(json.dumps([run_json(s) for s in states], ensure_ascii=False))
        return 0
    if not states:
        print("no runs" + (f" with status {status.value}" if status else ""))
        return 0
    print(f"{'RUN':14} {'STATUS':10} {'CONF':>5} {'UPDATED':20} QUESTION")
    for s in states:
        conf = f"{s.overall_confidence:.2f}" if s.overall_confidence is not None else "-"
        print(
            f"{s.run_id:14} {s.status.value:10} {conf:>5} "
            f"{s.updated_at:%Y-%m-%d %H:%M:%S}  {s.query[:60]}"
        )
    return 0


async def run_show(args: argparse.Namespace, services: Services) -> int:
    from bot.cli.report import run_json, run_text

    state = await load_run(services, args.run_id, reader=args.user)
    if args.json:
        print(json.dumps(run_json(state), ensure_ascii=False))
    else:
        print(run_text(state))
    return 0
