"""`grace channel show | set | list`: per-channel settings for operators — the same ones
`/grace config` edits (bot/service/channels.py), every change recorded with who made it.

In OAuth mode every workspace keeps its own settings: `--team T…` says whose. It may be
left out while one workspace is installed; `list` without it shows every workspace's."""

from __future__ import annotations

import argparse
import getpass
import json
import re
from typing import TYPE_CHECKING, Any

from bot.cli.errors import CommandError, ExitCode

if TYPE_CHECKING:
    from bot.service.channels import ChannelService, EffectiveChannel
    from bot.service.wiring import Services
    from storage.channel_settings import ChannelSettings

_CHANNEL = re.compile(r"^<?#?([CGD][A-Z0-9]+)(?:\|[^>]*)?>?$")
_TEAM = re.compile(r"^T[A-Z0-9]+$")
TEAM_HELP = "OAuth mode: the workspace (team id T…) whose settings these are"
UNSET_NAMES = (
    "collections",
    "experts",
    "approvers",
    "silent",
    "notify",
    "confirm",
    "answer_mode",
    "reply_mode",
    "follow_ups",
    "thresholds",
)
"""`storage.channel_settings.FIELDS` and `thresholds` (all three): spelled out, so that
building the parser loads no database code (tests/cli/test_startup_imports.py)."""


def add_channel_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    channel = sub.add_parser("channel", help="show or change a Slack channel's own settings")
    channel_sub = channel.add_subparsers(dest="channel_command", required=True)
    listed = channel_sub.add_parser("list", help="every channel with settings of its own")
    listed.add_argument("--json", action="store_true")
    listed.add_argument("--team", metavar="TEAM", help=f"{TEAM_HELP} (default: every one)")
    show = channel_sub.add_parser("show", help="a channel's settings, resolved, and its changes")
    show.add_argument("channel", help="channel id (C…), as in the channel's details")
    show.add_argument("--json", action="store_true")
    show.add_argument("--team", metavar="TEAM", help=TEAM_HELP)
    put = channel_sub.add_parser(
        "set", help="change a channel's settings (unset ones use the global settings)"
    )
    put.add_argument("channel", help="channel id (C…)")
    put.add_argument(
        "--collection",
        action="append",
        metavar="NAME",
        help="a collection the channel searches (repeat, or comma-separate; the first is "
        "the default)",
    )
    put.add_argument("--experts", metavar="IDS", help="U1,U2,S3: mentioned on escalation")
    put.add_argument("--approvers", metavar="IDS", help="U1,U2: may answer its pauses")
    put.add_argument("--silent", type=float, metavar="X")
    put.add_argument("--notify", type=float, metavar="X")
    put.add_argument("--confirm", type=float, metavar="X")
    put.add_argument("--answer", choices=["mentions", "all"], help="answer mode")
    put.add_argument("--reply", choices=["thread", "ephemeral"], help="where answers go")
    put.add_argument("--follow-ups", choices=["on", "off"], dest="follow_ups")
    put.add_argument(
        "--unset",
        action="append",
        default=[],
        choices=UNSET_NAMES,
        metavar="FIELD",
        help=f"back to the global setting (repeatable): {', '.join(UNSET_NAMES)}",
    )
    put.add_argument("--by", help="who makes the change (recorded; default cli:<login>)")
    put.add_argument("--json", action="store_true")
    put.add_argument("--team", metavar="TEAM", help=TEAM_HELP)


def channel_id(raw: str) -> str:
    match = _CHANNEL.match(raw.strip())
    if match is None:
        raise CommandError(
            "invalid_input", f"{raw!r} is not a channel id (C…, G… or D…)", ExitCode.BAD_INPUT
        )
    return match.group(1)


def _service(services: Services) -> ChannelService:
    from bot.service.channels import ChannelService
    from storage.channel_settings import SqlChannelSettings

    return ChannelService(
        SqlChannelSettings(services.engine, health=services.store.health),
        services.settings,
        shared_thresholds=lambda: services.orchestrator.thresholds,
        cache_seconds=0,
    )


async def _team(args: argparse.Namespace, services: Services, *, every: bool) -> str | None:
    """Whose settings the command is about: "" in single-workspace mode; in OAuth mode
    `--team` (an installed workspace, or any in an org GRACE is installed to org-wide),
    else the one live installation — or, with `every` (`list`), None: all of them."""
    team = getattr(args, "team", None)
    if not services.settings.oauth_mode:
        if team:
            raise CommandError(
                "invalid_input",
                "--team is for OAuth mode (many workspaces); with SLACK_BOT_TOKEN there is "
                "one set of channel settings",
                ExitCode.BAD_INPUT,
            )
        return ""
    from storage.installations import SqlInstallationStore

    installed = await SqlInstallationStore(services.engine, None).teams()  # reads no token
    live = [t for t in installed if t.uninstalled_at is None]
    if team:
        team = team.strip().upper()
        known = {t.team_id for t in installed if t.team_id}
        org_wide = any(t.is_enterprise_install for t in live)
        if not _TEAM.match(team) or (team not in known and not org_wide):
            raise CommandError(
                "not_found",
                f"no installed workspace {team!r} (`grace teams` lists them)",
                ExitCode.BAD_INPUT,
            )
        return team
    if every:
        return None
    ids = [t.team_id for t in live if t.team_id and not t.is_enterprise_install]
    if len(ids) == 1 and len(live) == 1:
        return ids[0]
    listed = ", ".join(t.key for t in live) or "none"
    raise CommandError(
        "invalid_input",
        f"name the workspace with --team T… (installed: {listed}); each keeps its own "
        "channel settings",
        ExitCode.BAD_INPUT,
    )


def _update(args: argparse.Namespace) -> dict[str, Any]:
    changes: dict[str, Any] = {}
    for name in args.unset:
        for field in ("silent", "notify", "confirm") if name == "thresholds" else (name,):
            changes[field] = None
    if args.collection:
        changes["collections"] = [
            c.strip() for raw in args.collection for c in raw.split(",") if c.strip()
        ]
    for name in ("experts", "approvers"):
        value = getattr(args, name)
        if value is not None:
            changes[name] = [v for v in value.split(",") if v.strip()] or None
    for name in ("silent", "notify", "confirm"):
        if getattr(args, name) is not None:
            changes[name] = getattr(args, name)
    if args.answer:
        changes["answer_mode"] = args.answer
    if args.reply:
        changes["reply_mode"] = args.reply
    if args.follow_ups:
        changes["follow_ups"] = args.follow_ups == "on"
    return changes


def _as_json(own: ChannelSettings, resolved: EffectiveChannel | None = None) -> dict[str, Any]:
    data = own.model_dump(mode="json")
    if resolved is not None:
        data["effective"] = {
            "collections": resolved.collections,
            "experts": resolved.experts,
            "approvers": resolved.approvers,
            "thresholds": resolved.thresholds.model_dump() if resolved.thresholds else None,
            "answer_mode": resolved.answer_mode,
            "reply_mode": resolved.reply_mode,
            "follow_ups": resolved.follow_ups,
        }
    return data


def _shown(value: Any) -> str:
    if value is None:
        return "(global)"
    if isinstance(value, list):
        return ", ".join(value) or "(none)"
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


async def _show(service: ChannelService, channel: str, *, team: str, as_json: bool) -> int:
    own = await service.get(channel, team_id=team)
    resolved = service.resolve(own)
    changes = await service.history(channel, team_id=team, limit=10)
    if as_json:
        data = _as_json(own, resolved)
        data["history"] = [c.model_dump(mode="json") for c in changes]
        print(json.dumps(data, ensure_ascii=False))
        return 0
    print(f"channel {channel}" + (f" of team {team}" if team else ""))
    for name, value in own.values().items():
        print(f"  {name:<12} {_shown(value)}")
    thresholds = resolved.thresholds
    print("  in effect:")
    limited = " (the team's limit)" if resolved.team_limited else ""
    print(f"    collections  {', '.join(resolved.collections) or '(every collection)'}{limited}")
    print(f"    experts      {', '.join(resolved.experts) or '(none)'}")
    print(f"    approvers    {', '.join(resolved.approvers) or '(none)'}")
    if thresholds is not None:
        print(
            f"    thresholds   silent {thresholds.silent:g} · notify {thresholds.notify:g}"
            f" · confirm {thresholds.confirm:g}"
        )
    else:
        print("    thresholds   (the shared ones: `grace thresholds`)")
    print(f"    answers      {resolved.answer_mode}, {resolved.reply_mode}")
    print(f"    follow-ups   {'on' if resolved.follow_ups else 'off'}")
    if changes:
        print("  changes (newest first):")
    for change in changes:
        print(
            f"    {change.changed_at:%Y-%m-%d %H:%M} {change.changed_by}: {change.field} "
            f"{_shown(change.old)} → {_shown(change.new)}"
        )
    return 0


async def run_channel(args: argparse.Namespace, services: Services) -> int:
    service = _service(services)
    team = await _team(args, services, every=args.channel_command == "list")
    if args.channel_command == "list":
        rows = await service.all_channels(team_id=team)
        if args.json:
            print(json.dumps([_as_json(r) for r in rows], ensure_ascii=False))
            return 0
        if not rows:
            print("no channel has settings of its own")
        for row in rows:
            shown = ", ".join(f"{k}={_shown(v)}" for k, v in row.values().items() if v is not None)
            where = f"{row.team_id}/" if row.team_id else ""
            print(f"{where}{row.channel_id}  {shown}")
        return 0
    channel = channel_id(args.channel)
    if args.channel_command == "show":
        assert team is not None
        return await _show(service, channel, team=team, as_json=args.json)
    from agent.errors import InvalidInputError
    from storage.channel_settings import ChannelUpdate

    changes = _update(args)
    if not changes:
        raise CommandError(
            "invalid_input", "nothing to change: give a setting or --unset", ExitCode.BAD_INPUT
        )
    assert team is not None
    try:
        service.check_collections(changes.get("collections") or [], team_id=team)
        for name in changes.get("collections") or []:
            await services.orchestrator.validate_collection(name)
        update = ChannelUpdate(**changes)
        by = args.by or f"cli:{getpass.getuser()}"
        await service.update(channel, update, changed_by=by, team_id=team)
    except (InvalidInputError, ValueError) as exc:
        message = exc.message if isinstance(exc, InvalidInputError) else str(exc)
        raise CommandError("invalid_input", message, ExitCode.BAD_INPUT) from exc
    return await _show(service, channel, team=team, as_json=args.json)
