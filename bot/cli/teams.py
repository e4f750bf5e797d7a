"""`grace teams` (the workspaces GRACE is installed to, OAuth mode) and `grace teams
forget TEAM` (delete one's runs, votes, verified answers and installation now)."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from bot.cli.errors import CommandError, ExitCode

if TYPE_CHECKING:
    from bot.service.wiring import Services
    from storage.installations import InstalledTeam


def _json(team: InstalledTeam) -> dict[str, object]:
    return {
        "team_id": team.team_id,
        "enterprise_id": team.enterprise_id,
        "name": team.team_name or team.enterprise_name,
        "org_wide": team.is_enterprise_install,
        "installed_at": team.installed_at.isoformat(),
        "uninstalled_at": team.uninstalled_at.isoformat() if team.uninstalled_at else None,
    }


async def run_teams(args: argparse.Namespace, services: Services) -> int:
    from bot.service.teams import forget_team
    from storage.installations import SqlInstallationStore

    store = SqlInstallationStore(services.engine, None)  # lists and forgets; reads no token
    if getattr(args, "teams_command", None) == "forget":
        team = await store.find_team(args.team)
        if team is None:
            raise CommandError(
                "not_found", f"no installation of team {args.team!r}", ExitCode.BAD_INPUT
            )
        forgotten = await forget_team(services.engine, team)
        print(f"forgot team {team.key}: {forgotten.runs} runs and its installation")
        return 0
    teams = await store.teams()
    if getattr(args, "json", False):
        print(json.dumps([_json(t) for t in teams], ensure_ascii=False))
        return 0
    if not teams:
        print("no installations (OAuth mode: install from /slack/install)")
        return 0
    days = services.settings.slack.uninstalled_retention_days
    for team in teams:
        kind = "org-wide " if team.is_enterprise_install else ""
        name = team.team_name or team.enterprise_name or ""
        since = f"installed {team.installed_at:%Y-%m-%d}"
        if team.uninstalled_at is not None:
            since = f"uninstalled {team.uninstalled_at:%Y-%m-%d}; data deleted after {days:g} days"
        print(f"{team.key}  {kind}{name}  ({since})")
    return 0
