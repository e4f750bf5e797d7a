"""`grace purge --before DATE`: forget finished runs and their Slack text now, the way the
sweeper does every pass when `GRACE_RETENTION_DAYS` is set (storage/retention.py says
what goes and what stays: runs still working or waiting for a person never go)."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.service.wiring import Services


def cut_off(text: str) -> datetime:
    """`--before`: an ISO date (2026-01-31, midnight UTC) or date and time (naive = UTC)."""
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a date: use YYYY-MM-DD or YYYY-MM-DDTHH:MM[+00:00]"
        ) from None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def add_purge_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    purge = sub.add_parser(
        "purge",
        help="forget finished runs (and their Slack text) last changed before a date",
    )
    purge.add_argument(
        "--before",
        required=True,
        type=cut_off,
        metavar="DATE",
        help="YYYY-MM-DD or an ISO date and time (UTC unless it says otherwise)",
    )


async def run_purge(args: argparse.Namespace, services: Services) -> int:
    from storage.retention import SqlRetention

    before: datetime = args.before
    purged = await SqlRetention(services.engine, health=services.store.health).purge(before=before)
    print(
        f"forgot {purged.runs} finished runs from before {before.isoformat()} "
        f"({purged.interventions} questions to people, {purged.events} audit events, "
        f"{purged.message_refs} Slack message refs, {purged.deliveries} outbox rows) "
        f"and {purged.inbox} handled Slack requests; runs still working or waiting for "
        "a person are kept"
    )
    return 0
