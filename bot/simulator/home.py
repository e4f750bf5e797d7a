"""The App Home tab of the fake Slack.

- `views.publish` (`user_id`, a `home` view, optional `hash`), validated as Slack does
  and kept per person; each publish is a workspace event of kind `home_published`.
- `app_home_opened_envelope`: the event Slack sends when a person opens one of the
  app's tabs (`home`, `messages`, `about`).
- For the page: `GET /sim/home?user=U…` (the person's published view, or none),
  `POST /sim/home/open {user}` (the person opens the Home tab: the app is sent
  `app_home_opened` with tab `home`).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from aiohttp import web

from bot.simulator.panes import body_of, no_person, person
from bot.simulator.requests import event_envelope
from bot.simulator.workspace import SlackWorkspace, WorkspaceError

PUBLISHED = "home_published"


@dataclass
class HomeView:
    """A person's Home tab as last published."""

    id: str
    user: str
    hash: str
    view: dict[str, Any]
    publishes: int = 1


def app_home_opened_envelope(
    *,
    user: str,
    tab: str = "home",
    team_id: str,
    api_app_id: str,
    bot_user_id: str,
    channel: str = "",
    view: dict[str, Any] | None = None,
    event_ts: str = "",
    event_id: str | None = None,
) -> dict[str, Any]:
    """The `app_home_opened` event_callback (Slack sends `view` when the tab has one)."""
    event: dict[str, Any] = {
        "type": "app_home_opened",
        "user": user,
        "channel": channel,
        "tab": tab,
        "event_ts": event_ts,
    }
    if view is not None:
        event["view"] = view
    return event_envelope(
        event, team_id=team_id, api_app_id=api_app_id, bot_user_id=bot_user_id, event_id=event_id
    )


class HomeTabs:
    """Every person's published Home tab and the `views.publish` method."""

    def __init__(self, workspace: SlackWorkspace) -> None:
        self.workspace = workspace
        self.views: dict[str, HomeView] = {}

    def handlers(self) -> dict[str, Any]:
        """Web API method → handler (see `webapi.Handler`)."""
        return {"views.publish": self._publish}

    def view(self, user: str) -> HomeView | None:
        """`user`'s Home tab as last published, if ever."""
        return self.views.get(user)

    def _api(self, home: HomeView) -> dict[str, Any]:
        ws = self.workspace
        return {
            **home.view,
            "id": home.id,
            "team_id": ws.team_id,
            "app_id": ws.app_id,
            "bot_id": ws.bot_id,
            "hash": home.hash,
            "state": {"values": {}},
        }

    def _publish(self, params: dict[str, Any], call: object) -> dict[str, Any]:
        user = params.get("user_id")
        if not isinstance(user, str) or not user:
            raise WorkspaceError("invalid_arguments", "user_id is required")
        self.workspace.user_info(user)  # user_not_found for an implausible id
        view = params.get("view")
        if not isinstance(view, dict) or view.get("type") != "home":
            raise WorkspaceError("invalid_arguments", "views.publish takes a home view")
        self.workspace._check_view(view)
        known = self.views.get(user)
        wanted = params.get("hash")
        if known is not None and isinstance(wanted, str) and wanted and wanted != known.hash:
            raise WorkspaceError("hash_conflict")
        home = HomeView(
            id=known.id if known else f"VH{uuid.uuid4().hex[:9].upper()}",
            user=user,
            hash=uuid.uuid4().hex[:16],
            view=dict(view),
            publishes=(known.publishes + 1) if known else 1,
        )
        self.views[user] = home
        self.workspace._emit(PUBLISHED, None, None, home=asdict(home))
        return {"view": self._api(home)}

    # ------------------------------------------------------------------ the page

    def add_routes(
        self, app: web.Application, send_event: Callable[[dict[str, Any]], object]
    ) -> None:
        """`GET /sim/home`, `POST /sim/home/open`; `send_event` delivers an Events API
        envelope to the app (over Socket Mode in the simulator)."""

        async def state(request: web.Request) -> web.Response:
            home = self.views.get(request.query.get("user", ""))
            return web.json_response({"home": asdict(home) if home else None})

        async def open_home(request: web.Request) -> web.Response:
            user = person(self.workspace, await body_of(request))
            if user is None:
                return no_person()
            ws = self.workspace
            home = self.views.get(user)
            send_event(
                app_home_opened_envelope(
                    user=user,
                    tab="home",
                    team_id=ws.team_of_user(user),
                    api_app_id=ws.app_id,
                    bot_user_id=ws.bot_user_id,
                    channel="D" + user[1:],
                    view=self._api(home) if home else None,
                    event_ts=ws.next_ts(),
                )
            )
            return web.json_response({"ok": True, "home": asdict(home) if home else None})

        app.router.add_get("/sim/home", state)
        app.router.add_post("/sim/home/open", open_home)
