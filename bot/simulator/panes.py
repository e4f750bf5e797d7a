"""What the page's side panes (assistant, App Home, agent sessions) share when it posts to
them: a lenient JSON body, and the person it names."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from bot.simulator.workspace import SlackWorkspace


async def body_of(request: web.Request) -> dict[str, Any]:
    """The posted JSON object; {} when the body is not one (the pane then finds no person)."""
    try:
        body = await request.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def person(workspace: SlackWorkspace, body: dict[str, Any]) -> str | None:
    """`body["user"]` when it is a person of the workspace (not a bot), else None."""
    user = str(body.get("user") or "")
    known = workspace.users.get(user)
    return user if known is not None and not known.get("is_bot") else None


def no_person() -> web.Response:
    """The answer to a post that names no person: Slack's `user_not_found`."""
    return web.json_response({"ok": False, "error": "user_not_found"}, status=400)
