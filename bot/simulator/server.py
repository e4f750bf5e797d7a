"""`SlackSimulator`: the fake Slack with everything — Web API, Socket Mode, the page.

It *is* a `FakeSlack` (same recording, scripted failures and workspace access), served
as one aiohttp application:

- `/api/{method}` — the Web API, plus `apps.connections.open`;
- `/socket-mode/link/` — the Socket Mode WebSocket;
- `/hooks/{token}` — `response_url`s;
- `/`, `/static/…`, `/sim/…` — the page and its API (see `ui.py`).

With `state_path`, the workspace is loaded from that JSON file on construction and
saved to it after every change, so a restart keeps the channel history.
"""

from __future__ import annotations

import time
from functools import partial
from pathlib import Path
from typing import Any

from aiohttp import web

from bot.simulator.consent import ConsentPage
from bot.simulator.oauth import FakeOAuth, FakeTeam
from bot.simulator.relay import Relay
from bot.simulator.socket_mode import EVENTS_API, SLACK_RETRY_DELAYS, SocketModeServer
from bot.simulator.ui import SimulatorUI
from bot.simulator.webapi import FakeSlack, RecordedCall
from bot.simulator.workspace import (
    DEFAULT_CHANNEL_ID,
    SLACKBOT_USER_ID,
    AutoSaver,
    SlackWorkspace,
)

PEOPLE = (("U0ALICE", "alice"), ("U0BOB", "bob"), ("U0CAROL", "carol"))
"""The simulated people: the page's user switcher offers them."""
ADMINS = frozenset({"U0ALICE"})
"""Workspace admins (`users.info` says `is_admin`): alice may open `/grace config`."""
CHANNELS = ((DEFAULT_CHANNEL_ID, "general"), ("C0RANDOM01", "random"))


def dm_channel(user_id: str) -> str:
    """The id of the DM between `user_id` and the bot (`U0ALICE` → `D0ALICE`)."""
    return "D" + user_id[1:]


def default_workspace() -> SlackWorkspace:
    """A workspace with #general, #random, alice (an admin), bob and carol, and each one's
    DM with grace."""
    workspace = SlackWorkspace(team_name="GRACE Simulator", clock=time.time)
    workspace.add_user(SLACKBOT_USER_ID, name="slackbot", is_bot=True)
    for channel_id, name in CHANNELS:
        workspace.add_channel(channel_id, name)
    for user_id, name in PEOPLE:
        workspace.add_user(user_id, name=name, is_admin=user_id in ADMINS)
        workspace.add_channel(dm_channel(user_id), workspace.bot_name, is_im=True, user=user_id)
    return workspace


SECOND_TEAM = ("T0SECOND", "Second Workspace")
SECOND_PEOPLE = (("U0DAVE", "dave"), ("U0ERIN", "erin"))
SECOND_CHANNELS = (("C0LOBBY01", "lobby"),)


def two_workspaces() -> SlackWorkspace:
    """The default workspace plus a second one (`grace dev --workspaces 2`): its own
    #lobby and people (dave, an admin, and erin), each channel and person marked with
    the team it belongs to, so events from it carry that team's id."""
    workspace = default_workspace()
    for channel in workspace.channels.values():
        channel["context_team_id"] = workspace.team_id
    team_id = SECOND_TEAM[0]
    for channel_id, name in SECOND_CHANNELS:
        workspace.add_channel(channel_id, name, team_id=team_id)
    for user_id, name in SECOND_PEOPLE:
        workspace.add_user(user_id, name=name, is_admin=user_id == "U0DAVE", team_id=team_id)
        workspace.add_channel(
            dm_channel(user_id), workspace.bot_name, is_im=True, user=user_id, team_id=team_id
        )
    return workspace


def fake_teams(workspace: SlackWorkspace) -> list[FakeTeam]:
    """Every workspace the simulator holds, as teams that can install the app."""
    named = {workspace.team_id: workspace.team_name, SECOND_TEAM[0]: SECOND_TEAM[1]}
    seen = {workspace.team_of(channel_id) for channel_id in workspace.channels}
    return [
        FakeTeam(
            team_id=team_id,
            name=named.get(team_id, team_id),
            bot_user_id=workspace.bot_user_id,
            bot_id=workspace.bot_id,
        )
        for team_id in sorted(seen, key=lambda t: (t != workspace.team_id, t))
    ]


class SlackSimulator(FakeSlack):
    """A local Slack an unmodified Bolt app can use over Socket Mode, with a web page."""

    def __init__(
        self,
        workspace: SlackWorkspace | None = None,
        *,
        state_path: Path | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        ack_timeout: float = 3.0,
        retry_delays: tuple[float, ...] = SLACK_RETRY_DELAYS,
    ) -> None:
        workspace = workspace or default_workspace()
        if state_path is not None:
            workspace.load(state_path)
        super().__init__(workspace, host=host, port=port)
        self.state_path = state_path
        self.socket_mode = SocketModeServer(
            workspace, ack_timeout=ack_timeout, retry_delays=retry_delays
        )
        self.add_method("apps.connections.open", self.socket_mode.connections_open)
        self.relay = Relay(workspace, self.socket_mode, origin=lambda: self.origin)
        self.ui = SimulatorUI(workspace, self.socket_mode, self.relay)
        self.saver: AutoSaver | None = None
        self.consent: ConsentPage | None = None

    def enable_installs(self, oauth: FakeOAuth, install_url: str) -> list[FakeTeam]:
        """Many-workspace mode: the app installs through OAuth (`oauth.v2.access`, the
        authorize page) to each workspace the simulator holds; the page offers "Add to
        Slack" (`install_url`, the app's install page) for each. Before `start`."""
        teams = fake_teams(self.workspace)
        self.enable_oauth(oauth)
        exchange = self.handler("oauth.v2.access")

        def access(params: dict[str, Any], call: RecordedCall) -> dict[str, Any]:
            answer = exchange(params, call)
            assert isinstance(answer, dict)  # FakeOAuth answers at once
            self.ui.workspaces_changed()  # the page shows the install
            return answer

        self.add_method("oauth.v2.access", access)
        self.consent = ConsentPage(oauth, teams)
        self.ui.workspaces = lambda: [
            {
                "id": team.team_id,
                "name": team.name,
                "installed": bool(oauth.tokens_of(team)),
                "install_url": install_url,
            }
            for team in teams
        ]
        return teams

    @property
    def url(self) -> str:
        """The page: `http://127.0.0.1:PORT/`."""
        return f"{self.origin}/"

    def build_app(self) -> web.Application:
        """Web API, Socket Mode, response URLs and the page on one application."""
        app = super().build_app()
        self.socket_mode.add_routes(app)
        self.relay.add_routes(app)
        self.ui.add_routes(app)
        if self.consent is not None:
            self.consent.add_routes(app)
        self.home.add_routes(app, partial(self.socket_mode.send, EVENTS_API))
        self.assistant.add_routes(app, partial(self.socket_mode.send, EVENTS_API))
        self.sessions.add_routes(
            app, partial(self.socket_mode.send, EVENTS_API), self.assistant.dm_of
        )
        return app

    async def start(self) -> None:
        """Listen, and start saving the workspace after every change (with `state_path`)."""
        await super().start()
        if self.state_path is not None and self.saver is None:
            self.saver = AutoSaver(self.workspace, self.state_path)

    async def stop(self) -> None:
        """Write the final state, close connections and event streams, stop listening."""
        if self.saver is not None:
            self.saver.close()
            self.saver = None
        await self.socket_mode.close()
        self.ui.close()
        await super().stop()
