"""`grace dev --workspaces 2` (issue 21): the simulator holds two workspaces, GRACE runs
in OAuth mode against it, and each workspace installs GRACE through GRACE's own
`/slack/install` → the simulator's authorize page → GRACE's `/slack/oauth_redirect` →
`oauth.v2.access`; then a question in each is answered with that workspace's token."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from html import unescape
from pathlib import Path

import aiohttp
import pytest

from agent.schemas import RunStatus, ThreadKey
from bot.simulator.server import SECOND_TEAM
from bot.simulator.workspace import DEFAULT_TEAM_ID
from bot.slack.dev import DevEnvironment, banner
from tests.bot.conftest import message_text

from .conftest import ALICE, CHANNEL, VACATION_Q, Page, settle, start_dev

DAVE = "U0DAVE"
LOBBY = "C0LOBBY01"
SECOND = SECOND_TEAM[0]


@pytest.fixture
async def dev2(tmp_path: Path) -> AsyncIterator[DevEnvironment]:
    async with start_dev(tmp_path / "grace", workspaces=2) as env:
        yield env


class Installer:
    """A browser installing GRACE: follows the links a person would click. The state
    cookie is Secure, so over plain http the test hands it back itself."""

    def __init__(self, env: DevEnvironment, http: aiohttp.ClientSession) -> None:
        self.env = env
        self.http = http

    async def open(self, url: str) -> tuple[int, str, aiohttp.ClientResponse]:
        async with self.http.get(url, allow_redirects=False) as response:
            return response.status, await response.text(), response

    async def consent(self, team_id: str) -> tuple[str, str]:
        """GRACE's install page → the simulator's authorize page → Allow in `team_id`:
        (where Slack sends the browser back, the state cookie)."""
        assert self.env.install_url is not None
        status, page, response = await self.open(self.env.install_url)
        assert status == 200, page
        [(name, morsel)] = response.cookies.items()
        link = re.search(r'<a href="([^"]+)"', page)
        assert link is not None, page
        authorize = unescape(link.group(1))
        assert authorize.startswith(self.env.simulator.origin + "/oauth/v2/authorize?")
        status, page, _ = await self.open(authorize)
        assert status == 200, page
        allow = re.search(rf'data-team="{team_id}" href="([^"]+)"', page)
        assert allow is not None, page
        status, _, response = await self.open(self.env.simulator.origin + unescape(allow[1]))
        assert status == 302
        return response.headers["Location"], f"{name}={morsel.value}"

    async def come_back(self, location: str, cookie: str) -> tuple[int, str]:
        async with self.http.get(location, headers={"Cookie": cookie}) as response:
            return response.status, await response.text()

    async def install(self, team_id: str) -> None:
        location, cookie = await self.consent(team_id)
        status, page = await self.come_back(location, cookie)
        assert status == 200, page


async def test_two_workspaces_install_and_are_answered_with_their_own_tokens(
    dev2: DevEnvironment, http: aiohttp.ClientSession
) -> None:
    simulator = dev2.simulator
    page = Page(simulator.origin, http)
    async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as browser:
        installer = Installer(dev2, browser)
        state = await page.state()
        assert [(w["id"], w["installed"]) for w in state["workspaces"]] == [
            (DEFAULT_TEAM_ID, False),
            (SECOND, False),
        ]
        assert {w["install_url"] for w in state["workspaces"]} == {dev2.install_url}

        location, cookie = await installer.consent(DEFAULT_TEAM_ID)
        assert location.startswith(dev2.install_url.replace("/install", "/oauth_redirect"))
        assert (await installer.come_back(location, cookie))[0] == 200
        assert (await installer.come_back(location, cookie))[0] != 200  # the state is spent
        await installer.install(SECOND)

    state = await page.state()
    assert [w["installed"] for w in state["workspaces"]] == [True, True]
    assert simulator.oauth is not None and simulator.consent is not None
    tokens = {
        team.team_id: simulator.oauth.tokens_of(team) for team in simulator.consent.teams.values()
    }
    assert all(len(issued) == 1 for issued in tokens.values()), tokens

    asked = {
        CHANNEL: (await page.say(ALICE, f"@grace {VACATION_Q}"))["message"]["ts"],
        LOBBY: (await page.say(DAVE, f"@grace {VACATION_Q}", channel=LOBBY))["message"]["ts"],
    }
    await settle(dev2)

    team_of = {CHANNEL: DEFAULT_TEAM_ID, LOBBY: SECOND}
    for channel, ts in asked.items():
        answer = simulator.workspace.thread(channel, ts)[-1]
        assert answer.user == simulator.workspace.bot_user_id
        assert "15 days" in message_text(answer)
        run = await dev2.bot.services.store.latest_run_in_thread(
            ThreadKey(team_id=team_of[channel], channel_id=channel, thread_ts=ts)
        )
        assert run is not None and run.status is RunStatus.ANSWERED
    posted = [c for c in simulator.calls if c.method.startswith("chat.")]
    used = {
        (str(c.params.get("channel")), c.headers["Authorization"].removeprefix("Bearer "))
        for c in posted
        if c.params.get("channel") in team_of
    }
    assert {channel for channel, _ in used} == {CHANNEL, LOBBY}
    for channel, token in used:
        assert token in tokens[team_of[channel]], (channel, token)
    assert all(c.response.get("ok") for c in posted), [c.response for c in posted]

    # Slack's side holds the bot to it: one workspace's token in another's channel fails.
    async with aiohttp.ClientSession() as raw:
        async with raw.post(
            simulator.base_url + "chat.postMessage",
            headers={"Authorization": f"Bearer {tokens[DEFAULT_TEAM_ID][0]}"},
            data={"channel": LOBBY, "text": "hi"},
        ) as response:
            assert (await response.json())["error"] == "channel_not_found"
    assert "Add to Slack" in banner(dev2) and dev2.install_url in banner(dev2)
