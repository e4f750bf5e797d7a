"""Issue 21 through the real process: `grace serve` in OAuth mode serves the install page
and the OAuth redirect, answers two installed workspaces each with its own token, and
after a kill -9 the next process answers with them still (they are in the database,
encrypted, not in the process)."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import aiohttp

from bot.simulator.oauth import FakeOAuth, FakeTeam
from bot.simulator.requests import app_mention_envelope
from bot.simulator.webapi import FakeSlack
from storage.sealing import new_key
from tests.faults.helpers import Delivery, send, serve_env, serving, start_server, wait_until

TEAMS = (
    FakeTeam(team_id="TSERVE001", name="One", bot_user_id="UBOT1"),
    FakeTeam(team_id="TSERVE002", name="Two", bot_user_id="UBOT2"),
)
CHANNEL = {"TSERVE001": "CSERVE001", "TSERVE002": "CSERVE002"}
QUESTION = "How many vacation days do new employees get?"


async def install(http: aiohttp.ClientSession, base: str, oauth: FakeOAuth, team: FakeTeam) -> None:
    async with http.get(f"{base}/slack/install") as page:
        assert page.status == 200
        html = await page.text()
        [(name, morsel)] = page.cookies.items()
    link = re.search(r'<a href="([^"]+)"', html)
    assert link is not None, html
    state = parse_qs(urlparse(link.group(1).replace("&amp;", "&")).query)["state"][0]
    params = {"code": oauth.authorize(team), "state": state}
    headers = {"Cookie": f"{name}={morsel.value}"}
    async with http.get(f"{base}/slack/oauth_redirect", params=params, headers=headers) as back:
        assert back.status == 200, await back.text()


def mention_in(team: FakeTeam, ts: str) -> Delivery:
    return Delivery(
        app_mention_envelope(
            text=QUESTION,
            ts=ts,
            channel=CHANNEL[str(team.team_id)],
            team_id=str(team.team_id),
            bot_user_id=team.bot_user_id,
        )
    )


def answered_by(fake: FakeSlack, oauth: FakeOAuth, team: FakeTeam) -> set[FakeTeam | None]:
    """The workspaces whose tokens posted to the team's channel (empty: nothing yet)."""
    return {
        oauth.team_of(c.headers.get("Authorization", "").removeprefix("Bearer "))
        for c in fake.calls_to("chat.postMessage")
        if c.params.get("channel") == CHANNEL[str(team.team_id)] and c.response.get("ok")
    }


async def test_serve_installs_two_workspaces_and_answers_each_after_a_kill(
    data_dir: Path, tmp_path: Path
) -> None:
    async with FakeSlack() as fake:
        oauth = fake.enable_oauth(FakeOAuth(rotation=True))
        env = serve_env(data_dir, fake)
        env.pop("SLACK_BOT_TOKEN")
        env |= {
            "SLACK_CLIENT_ID": oauth.client_id,
            "SLACK_CLIENT_SECRET": oauth.client_secret,
            "GRACE_ENCRYPTION_KEY": new_key(),
        }
        async with aiohttp.ClientSession() as http:
            first = await start_server(env, 0, tmp_path / "first.log")
            for team in TEAMS:
                await install(http, first.base, oauth, team)
            first.kill()  # kill -9: only the database remembers the installations
            await first.process.wait()

            async with serving(env, tmp_path / "second.log") as second:
                for n, team in enumerate(TEAMS):
                    await send(http, second.base, mention_in(team, f"17000030{n}0.000100"))
                for team in TEAMS:
                    await wait_until(
                        lambda team=team: bool(answered_by(fake, oauth, team)),
                        within=60,
                        what=f"an answer in {team.name}",
                    )
                    assert answered_by(fake, oauth, team) == {team}
                log = second.stderr() + first.stderr()
    assert "xoxb-" not in log and "xoxe-" not in log
