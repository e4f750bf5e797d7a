"""Slack's authorize page, faked (issue 21): where "Add to Slack" sends a person.

`GET /oauth/v2/authorize?client_id=…&scope=…&state=…&redirect_uri=…` shows one "Allow"
link per simulated workspace (Slack's own page lets the person pick the workspace);
following one hands the app a one-time code, as Slack does, by redirecting to the app's
`redirect_uri` with `code` and the untouched `state`. The code is `FakeOAuth`'s, so the
app's `oauth.v2.access` exchange installs it to that workspace.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from urllib.parse import urlencode

from aiohttp import web

from bot.simulator.oauth import FakeOAuth, FakeTeam

AUTHORIZE_PATH = "/oauth/v2/authorize"
ALLOW_PATH = "/oauth/v2/authorize/allow"


class ConsentPage:
    """The authorize page and its Allow links, for the workspaces in `teams`."""

    def __init__(self, oauth: FakeOAuth, teams: Sequence[FakeTeam]) -> None:
        self.oauth = oauth
        self.teams = {team.key: team for team in teams}

    def add_routes(self, app: web.Application) -> None:
        app.router.add_get(AUTHORIZE_PATH, self._authorize)
        app.router.add_get(ALLOW_PATH, self._allow)

    async def _authorize(self, request: web.Request) -> web.Response:
        query = request.query
        if query.get("client_id") != self.oauth.client_id:
            return _page("Invalid client_id", "<p>This app is not known here.</p>", status=400)
        links = "".join(
            f'<li><a class="allow" data-team="{html.escape(key)}" href="'
            + html.escape(
                ALLOW_PATH
                + "?"
                + urlencode(
                    {
                        "team": key,
                        "state": query.get("state", ""),
                        "redirect_uri": query.get("redirect_uri", ""),
                        "scope": query.get("scope", ""),
                    }
                )
            )
            + f'">Allow in {html.escape(team.name)}</a></li>'
            for key, team in self.teams.items()
        )
        scopes = html.escape(query.get("scope", "").replace(",", ", "))
        body = f"<p>GRACE asks for: {scopes}</p><ul>{links}</ul>"
        return _page("Install GRACE", body)

    async def _allow(self, request: web.Request) -> web.Response:
        query = request.query
        team = self.teams.get(query.get("team", ""))
        redirect = query.get("redirect_uri", "")
        if team is None or not redirect.startswith(("http://", "https://")):
            return _page("Cannot install", "<p>Unknown workspace or redirect URL.</p>", 400)
        code = self.oauth.authorize(team, scopes=query.get("scope", ""))
        params = urlencode({"code": code, "state": query.get("state", "")})
        raise web.HTTPFound(f"{redirect}{'&' if '?' in redirect else '?'}{params}")


def _page(title: str, body: str, status: int = 200) -> web.Response:
    text = (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title></head>"
        f"<body><h1>{title}</h1>{body}</body></html>"
    )
    return web.Response(text=text, content_type="text/html", status=status)
