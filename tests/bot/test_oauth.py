"""Install to many workspaces (issue 21), end to end: the real Bolt app behind `grace
serve`'s HTTP app, Bolt's OAuth flow, our installation store on SQLite and PostgreSQL,
and the fake Slack answering `oauth.v2.access` and checking every call's token."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import aiohttp
import pytest
from pydantic import SecretStr
from sqlalchemy import update

from agent.schemas import RunState, RunStatus, ThreadKey
from blocks import ids
from bot.service.settings import LLMSettings, Settings, SlackSettings
from bot.simulator.oauth import FakeOAuth, FakeTeam
from bot.simulator.requests import (
    FORM_CONTENT_TYPE,
    app_mention_envelope,
    block_actions_payload,
    event_envelope,
    form_body,
    interactive_body,
    slash_command_form,
)
from bot.simulator.webapi import FakeSlack
from storage.installations import SqlInstallationStore
from storage.sealing import new_key
from storage.tables import OAuthStateRow

from .conftest import SECRET, BotHarness, assert_valid_block_kit, button_values

TEAM_A = FakeTeam(team_id="TAAAA0001", name="Alpha", bot_user_id="UBOTA", bot_id="BBOTA")
TEAM_B = FakeTeam(team_id="TBBBB0002", name="Beta", bot_user_id="UBOTB", bot_id="BBOTB")
CHANNEL = {TEAM_A.team_id: "CALPHA001", TEAM_B.team_id: "CBETA0002"}
ASKER = {TEAM_A.team_id: "UALICE001", TEAM_B.team_id: "UBOB00002"}
QUESTION = "How many vacation days do new employees get?"
PAUSING = "Why do multiple teams share an office day and how do I claim the remote work stipend?"


class OAuthHarness(BotHarness):
    """A bot in OAuth mode, and a browser (its own cookie jar) to install it with."""

    def __init__(self, fake: FakeSlack, settings: Settings, oauth: FakeOAuth) -> None:
        super().__init__(fake, settings)
        self.oauth = oauth
        self.browser: aiohttp.ClientSession | None = None
        self.cookie = ""
        """The state cookie the install page set (Secure: a browser sends it back over
        https only, so the test hands it back itself)."""

    @property
    def installations(self) -> SqlInstallationStore:
        store = self.bot.deps.installations
        assert store is not None
        return store

    async def open_install_page(self) -> str:
        """GET /slack/install as a browser: the `state` in its Add to Slack link."""
        if self.browser is None:
            self.browser = aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar())
        async with self.browser.get(self.base + "/slack/install") as response:
            assert response.status == 200
            page = await response.text()
            [(name, morsel)] = response.cookies.items()
            assert morsel["secure"] and morsel["httponly"]
            self.cookie = f"{name}={morsel.value}"
        link = re.search(r'<a href="([^"]+)"', page)
        assert link is not None, page
        url = urlparse(link.group(1).replace("&amp;", "&"))
        query = parse_qs(url.query)
        assert url.path == "/oauth/v2/authorize"
        assert query["client_id"] == [self.oauth.client_id]
        assert "chat:write" in query["scope"][0].split(",")
        return query["state"][0]

    async def come_back(self, code: str, state: str) -> tuple[int, str]:
        """Slack sends the browser to /slack/oauth_redirect with the code and state."""
        assert self.browser is not None
        params = {"code": code, "state": state}
        headers = {"Cookie": self.cookie}
        url = self.base + "/slack/oauth_redirect"
        async with self.browser.get(url, params=params, headers=headers) as r:
            return r.status, await r.text()

    async def install(self, team: FakeTeam) -> None:
        state = await self.open_install_page()
        status, page = await self.come_back(self.oauth.authorize(team), state)
        assert status == 200, page

    async def close(self) -> None:
        if self.browser is not None:
            await self.browser.close()
        await super().close()

    # ------------------------------------------------------------------ per team

    async def mention_in(
        self, team: FakeTeam, text: str, ts: str, *, user: str = "", channel: str = ""
    ) -> None:
        """A mention in `team` (by default its asker, in its channel)."""
        envelope = app_mention_envelope(
            text=text,
            ts=ts,
            user=user or ASKER[str(team.team_id)],
            channel=channel or CHANNEL[str(team.team_id)],
            team_id=str(team.team_id),
            bot_user_id=team.bot_user_id,
        )
        reply = await self.event(envelope)
        assert reply.status == 200, reply.text

    async def open_app_in(self, team: FakeTeam, user: str, *, event_ts: str) -> None:
        """`user` of `team` opens the app's Home tab."""
        await self.open_app(
            user, team_id=str(team.team_id), bot_user_id=team.bot_user_id, event_ts=event_ts
        )

    async def command_in(self, team: FakeTeam, text: str, *, user: str | None = None) -> Any:
        form = slash_command_form(
            text=text,
            user=user or ASKER[str(team.team_id)],
            channel=CHANNEL[str(team.team_id)],
            team_id=str(team.team_id),
        )
        reply = await self.signed(form_body(form), FORM_CONTENT_TYPE)
        assert reply.status == 200, reply.text
        return reply.json()

    async def run_of(self, team: FakeTeam, ts: str) -> RunState:
        key = ThreadKey(
            team_id=str(team.team_id), channel_id=CHANNEL[str(team.team_id)], thread_ts=ts
        )
        state = await self.store.latest_run_in_thread(key)
        assert state is not None, f"no run of {team.name} in {ts}"
        return state

    def tokens_posting_to(self, channel: str) -> set[str]:
        return {
            c.headers.get("Authorization", "").removeprefix("Bearer ")
            for c in self.fake.calls
            if c.params.get("channel") == channel and c.method.startswith("chat.")
        }

    def teams_of_tokens(self, channel: str) -> set[str | None]:
        teams = set()
        for token in self.tokens_posting_to(channel):
            team = self.oauth.team_of(token)
            teams.add(team.team_id if team is not None else f"dead token {token}")
        return teams


@pytest.fixture
async def oauth_fake() -> AsyncIterator[tuple[FakeSlack, FakeOAuth]]:
    async with FakeSlack() as server:
        oauth = server.enable_oauth(FakeOAuth(rotation=True, expires_in=12 * 3600))
        yield server, oauth
        assert_valid_block_kit(server.calls)


def oauth_settings(data_dir: Path, fake: FakeSlack, oauth: FakeOAuth, db_url: str) -> Settings:
    return Settings(
        data_dir=data_dir,
        database_url=db_url,
        slack_bot_token=None,
        slack_client_id=oauth.client_id,
        slack_client_secret=oauth.client_secret,
        encryption_key=new_key(),
        slack_signing_secret=SECRET,
        slack_app_token=None,
        slack_api_url=fake.base_url,
        google_api_key=None,
        log_format="text",
        llm=LLMSettings(provider="offline"),
        slack=SlackSettings(plan_display="message"),
    )


BotFactory = Callable[..., Awaitable[OAuthHarness]]
"""`make_bot(install=False, **update)`: a started bot whose settings `update` changes; with
`install`, both teams are installed first. Each is closed when the test ends."""


@pytest.fixture
def make_bot(
    oauth_fake: tuple[FakeSlack, FakeOAuth],
    data_dir: Path,
    fresh_db_url: str,
    started: list[BotHarness],
) -> BotFactory:
    fake, oauth = oauth_fake

    async def start(
        *, install: bool = False, slack: dict[str, Any] | None = None, **update: Any
    ) -> OAuthHarness:
        settings = oauth_settings(data_dir, fake, oauth, fresh_db_url).model_copy(update=update)
        if slack:
            update_slack = {"slack": settings.slack.model_copy(update=slack)}
            settings = settings.model_copy(update=update_slack)
        harness = OAuthHarness(fake, settings, oauth)
        await harness.start()
        started.append(harness)
        if install:
            await harness.install(TEAM_A)
            await harness.install(TEAM_B)
        return harness

    return start


@pytest.fixture
async def bot(make_bot: BotFactory) -> OAuthHarness:
    return await make_bot()


# --------------------------------------------------------------------------- install


async def test_install_round_trip_stores_the_installation_sealed(bot: OAuthHarness) -> None:
    await bot.install(TEAM_A)

    found = await bot.installations.async_find_bot(enterprise_id=None, team_id=TEAM_A.team_id)
    assert found is not None
    assert bot.oauth.team_of(found.bot_token) == TEAM_A
    assert found.bot_refresh_token and found.bot_token_expires_at
    [team] = await bot.installations.teams()
    assert (team.team_id, team.team_name, team.uninstalled_at) == (TEAM_A.team_id, "Alpha", None)


async def test_bad_replayed_and_expired_states_are_refused(bot: OAuthHarness) -> None:
    state = await bot.open_install_page()
    status, _ = await bot.come_back(bot.oauth.authorize(TEAM_A), "made-up-state")
    assert status in (400, 401)
    status, page = await bot.come_back(bot.oauth.authorize(TEAM_A), state)
    assert status == 200, page
    status, _ = await bot.come_back(bot.oauth.authorize(TEAM_B), state)  # replayed
    assert status in (400, 401)

    stale = await bot.open_install_page()
    async with bot.store.engine.begin() as connection:
        await connection.execute(
            update(OAuthStateRow)
            .where(OAuthStateRow.state == stale)
            .values(expires_at=datetime.now(UTC) - timedelta(seconds=1))
        )
    status, _ = await bot.come_back(bot.oauth.authorize(TEAM_B), stale)
    assert status in (400, 401)

    installed = {t.team_id for t in await bot.installations.teams()}
    assert installed == {TEAM_A.team_id}  # only the one good round trip installed anything


async def test_refuses_to_start_without_a_valid_key(
    oauth_fake: tuple[FakeSlack, FakeOAuth], data_dir: Path, fresh_db_url: str
) -> None:
    from agent.errors import InvalidInputError
    from bot.slack.compose import create_bot

    fake, oauth = oauth_fake
    settings = oauth_settings(data_dir, fake, oauth, fresh_db_url)
    for key in (None, "not-a-fernet-key"):
        with pytest.raises(InvalidInputError, match="GRACE_ENCRYPTION_KEY"):
            sealed = SecretStr(key) if key is not None else None
            await create_bot(settings.model_copy(update={"encryption_key": sealed}))


# --------------------------------------------------------------------------- per team


async def test_two_teams_are_answered_with_their_own_tokens(bot: OAuthHarness) -> None:
    await bot.install(TEAM_A)
    await bot.install(TEAM_B)

    await bot.mention_in(TEAM_A, QUESTION, "1700000100.000100")
    await bot.mention_in(TEAM_B, QUESTION, "1700000200.000100")

    for team in (TEAM_A, TEAM_B):
        state = await bot.run_of(
            team, "1700000100.000100" if team is TEAM_A else "1700000200.000100"
        )
        assert state.status is RunStatus.ANSWERED, state.error
        channel = CHANNEL[str(team.team_id)]
        assert bot.fake.messages(channel) or bot.fake.workspace.all_messages(channel)
        assert bot.teams_of_tokens(channel) == {team.team_id}
    failed = [c for c in bot.fake.calls if c.response.get("ok") is False]
    # the Home tab's link to the asker's own message, which this fake never saw (events
    # are delivered, not posted), is refused: Slack would give it
    failed = [c for c in failed if c.method != "chat.getPermalink"]
    assert not failed, [(c.method, c.response) for c in failed]


async def test_a_cross_team_click_or_status_is_not_found(bot: OAuthHarness) -> None:
    await bot.install(TEAM_A)
    await bot.install(TEAM_B)
    ts = "1700000300.000100"
    await bot.mention_in(TEAM_A, PAUSING, ts)
    state = await bot.run_of(TEAM_A, ts)
    assert state.status is RunStatus.PAUSED

    # even with the asker's own id, sent from team B: not found, as an unknown run
    asker = ASKER[str(TEAM_A.team_id)]
    answer = await bot.command_in(TEAM_B, f"status {state.run_id}", user=asker)
    unknown = await bot.command_in(TEAM_B, "status 0123456789ab", user=asker)
    assert answer["text"] == unknown["text"].replace("0123456789ab", state.run_id)
    assert "No run" in answer["text"]
    short = await bot.command_in(TEAM_B, f"status {state.run_id[:6]}", user=asker)
    assert "No run" in short["text"]
    listed = await bot.command_in(TEAM_B, "status", user=asker)
    assert state.run_id[:6] not in json.dumps(listed)
    mine = await bot.command_in(TEAM_A, f"status {state.run_id}")
    assert "No run" not in mine["text"]

    plan = await bot.plan_message(state)
    value = button_values(plan)[ids.PLAN_RUN]
    reply = await bot.click(
        ids.PLAN_RUN,
        value,
        message=plan,
        user=ASKER[str(TEAM_A.team_id)],  # even the asker's id, sent from team B
        team_id=str(TEAM_B.team_id),
    )
    assert reply.status == 200
    assert (await bot.run_of(TEAM_A, ts)).status is RunStatus.PAUSED  # nothing moved
    told = [e.text for e in bot.fake.workspace.ephemerals(user=ASKER[str(TEAM_A.team_id)])]
    assert any("don't know run" in t for t in told), told
    # the refusal itself went out with team B's token, never A's
    ephemeral_tokens = {
        bot.oauth.team_of(c.headers["Authorization"].removeprefix("Bearer "))
        for c in bot.fake.calls_to("chat.postEphemeral")
    }
    assert ephemeral_tokens == {TEAM_B}


# --------------------------------------------------------------------------- uninstall


async def test_uninstall_forgets_the_tokens_and_the_team_is_not_answered(
    bot: OAuthHarness,
) -> None:
    await bot.install(TEAM_A)
    await bot.install(TEAM_B)
    event = {"type": "app_uninstalled", "event_ts": "1700000400.000001"}
    reply = await bot.event(event_envelope(event, team_id=str(TEAM_B.team_id)))
    assert reply.status == 200
    bot.oauth.revoke(TEAM_B)  # Slack's side of it

    assert (
        await bot.installations.async_find_bot(enterprise_id=None, team_id=TEAM_B.team_id) is None
    )
    teams = {t.team_id: t for t in await bot.installations.teams()}
    assert teams[TEAM_B.team_id].uninstalled_at is not None
    assert teams[TEAM_A.team_id].uninstalled_at is None

    before = len(bot.fake.calls)
    await bot.mention_in(TEAM_B, QUESTION, "1700000500.000100")
    assert not [c for c in bot.fake.calls[before:] if c.method.startswith("chat.")]
    await bot.mention_in(TEAM_A, QUESTION, "1700000600.000100")
    assert (await bot.run_of(TEAM_A, "1700000600.000100")).status is RunStatus.ANSWERED


async def test_tokens_revoked_forgets_the_bot_token(bot: OAuthHarness) -> None:
    await bot.install(TEAM_A)
    event = {
        "type": "tokens_revoked",
        "tokens": {"bot": [TEAM_A.bot_user_id]},
        "event_ts": "1700000700.000001",
    }
    reply = await bot.event(event_envelope(event, team_id=str(TEAM_A.team_id)))
    assert reply.status == 200
    assert (
        await bot.installations.async_find_bot(enterprise_id=None, team_id=TEAM_A.team_id) is None
    )


# --------------------------------------------------------------------------- rotation


async def test_an_expired_token_is_refreshed_before_the_answer(bot: OAuthHarness) -> None:
    await bot.install(TEAM_A)
    store = bot.installations
    old = await store.async_find_bot(enterprise_id=None, team_id=TEAM_A.team_id)
    assert old is not None
    bot.oauth.expire(TEAM_A)  # Slack refuses it from now on
    old.bot_token_expires_at = int(datetime.now(UTC).timestamp()) - 60
    await store.async_save_bot(old)

    ts = "1700000800.000100"
    await bot.mention_in(TEAM_A, QUESTION, ts)

    assert (await bot.run_of(TEAM_A, ts)).status is RunStatus.ANSWERED
    fresh = await store.async_find_bot(enterprise_id=None, team_id=TEAM_A.team_id)
    assert fresh is not None and fresh.bot_token != old.bot_token
    assert fresh.bot_refresh_token != old.bot_refresh_token
    refreshes = [
        c
        for c in bot.fake.calls_to("oauth.v2.access")
        if c.params.get("grant_type") == "refresh_token"
    ]
    assert len(refreshes) == 1
    assert bot.tokens_posting_to(CHANNEL[str(TEAM_A.team_id)]) == {fresh.bot_token}


# --------------------------------------------------------------------------- restart


async def paused_in_both_teams(
    bot: OAuthHarness, threads: dict[FakeTeam, str]
) -> dict[FakeTeam, RunState]:
    """Both teams install GRACE and each asks, in its thread, a question it pauses on."""
    await bot.install(TEAM_A)
    await bot.install(TEAM_B)
    paused = {}
    for team, ts in threads.items():
        await bot.mention_in(team, PAUSING, ts)
        state = await bot.run_of(team, ts)
        assert state.status is RunStatus.PAUSED and state.pending is not None
        paused[team] = state
    return paused


async def test_a_restart_recovers_paused_runs_of_both_teams_with_their_tokens(
    bot: OAuthHarness,
) -> None:
    threads = {TEAM_A: "1700000900.000100", TEAM_B: "1700000950.000100"}
    plans = {}
    asked = {}
    for team, state in (await paused_in_both_teams(bot, threads)).items():
        assert state.pending is not None
        plans[team] = await bot.plan_message(state)
        asked[team] = state.pending.intervention_id

    await bot.restart()
    bot.fake.reset_calls()

    for team, plan in plans.items():
        value = button_values(plan)[ids.PLAN_RUN]
        asker, team_id = ASKER[str(team.team_id)], str(team.team_id)
        reply = await bot.click(ids.PLAN_RUN, value, message=plan, user=asker, team_id=team_id)
        assert reply.status == 200
    for team, ts in threads.items():
        state = await bot.run_of(team, ts)
        assert state.status in (RunStatus.ANSWERED, RunStatus.PAUSED), state.error
        assert state.pending is None or state.pending.intervention_id != asked[team]
        channel = CHANNEL[str(team.team_id)]
        assert bot.teams_of_tokens(channel) == {team.team_id}


async def test_an_uninstalled_teams_data_goes_after_its_retention(bot: OAuthHarness) -> None:
    from bot.service.teams import forget_uninstalled

    await bot.install(TEAM_A)
    await bot.install(TEAM_B)
    await bot.mention_in(TEAM_A, QUESTION, "1700001000.000100")
    await bot.mention_in(TEAM_B, QUESTION, "1700001100.000100")
    kept = await bot.run_of(TEAM_A, "1700001000.000100")
    gone = await bot.run_of(TEAM_B, "1700001100.000100")
    event = {"type": "app_uninstalled", "event_ts": "1700001200.000001"}
    await bot.event(event_envelope(event, team_id=str(TEAM_B.team_id)))

    days = bot.settings.slack.uninstalled_retention_days
    assert days == 30
    assert await forget_uninstalled(bot.installations, retention_days=days) == []
    assert await bot.store.load(gone.run_id) is not None  # kept while within retention

    later = datetime.now(UTC) + timedelta(days=days, minutes=1)
    due = await forget_uninstalled(bot.installations, retention_days=days, now=later)

    assert [t.team_id for t in due] == [TEAM_B.team_id]
    assert await bot.store.load(gone.run_id) is None
    assert await bot.store.load(kept.run_id) is not None
    assert [t.team_id for t in await bot.installations.teams()] == [TEAM_A.team_id]


async def test_grace_teams_lists_installations_and_forgets_one(bot: OAuthHarness) -> None:
    from tests.durable.helpers import grace_env, grace_here_async

    await bot.install(TEAM_A)
    await bot.install(TEAM_B)
    await bot.mention_in(TEAM_A, QUESTION, "1700001300.000100")
    run = await bot.run_of(TEAM_A, "1700001300.000100")
    await bot.stop()  # the data dir's knowledge base takes one process at a time

    env = grace_env(bot.settings.data_dir, GRACE_DATABASE_URL=str(bot.settings.database_url))
    code, out, err = await grace_here_async(env, "teams", "--json")
    assert code == 0, err
    listed = json.loads(out)
    assert {t["team_id"] for t in listed} == {TEAM_A.team_id, TEAM_B.team_id}
    assert "xoxb" not in out and "xoxe" not in out

    code, out, err = await grace_here_async(env, "teams", "forget", str(TEAM_A.team_id))
    assert code == 0, err
    assert f"forgot team {TEAM_A.team_id}: 1 runs" in out
    code, out, _ = await grace_here_async(env, "teams", "forget", "TNOPE")
    assert code == 2

    code, out, _ = await grace_here_async(env, "teams")
    assert code == 0 and TEAM_B.team_id in out and str(TEAM_A.team_id) not in out
    await bot.start()
    assert await bot.store.load(run.run_id) is None


def test_no_token_reaches_the_logs_even_at_debug() -> None:
    import io
    import logging

    from bot.service.logs import configure_logging

    stream = io.StringIO()
    root = logging.getLogger()
    saved = (root.handlers[:], root.level)
    try:
        configure_logging("DEBUG", "text", stream=stream)
        logging.getLogger("slack_sdk.web.async_base_client").debug(
            "Sending a request - headers: %s",
            {"Authorization": "Bearer xoxb-123-456-abcDEF"},
        )
        logging.getLogger("slack_bolt").debug(
            "body: %s", '{"access_token": "xoxb-9-8-zz", "refresh_token": "xoxe-1-abc"}'
        )
    finally:
        root.handlers[:], _ = saved
        root.setLevel(saved[1])
    logged = stream.getvalue()
    assert "Sending a request" in logged and "redacted" in logged
    assert "xoxb-123" not in logged and "xoxb-9" not in logged and "xoxe-1" not in logged


async def test_an_org_wide_install_answers_every_workspace_of_the_org(bot: OAuthHarness) -> None:
    org = FakeTeam(
        team_id=None, name="Grid", enterprise_id="E0GRID001", org_wide=True, bot_user_id="UBOTE"
    )
    await bot.install(org)
    [installed] = await bot.installations.teams()
    assert (installed.enterprise_id, installed.team_id, installed.is_enterprise_install) == (
        "E0GRID001",
        None,
        True,
    )
    for workspace, channel, ts in (
        ("TGRIDWS01", "CGRID0001", "1700001400.000100"),
        ("TGRIDWS02", "CGRID0002", "1700001500.000100"),
    ):
        envelope = app_mention_envelope(
            text=QUESTION,
            ts=ts,
            user="UGRIDUSER",
            channel=channel,
            team_id=workspace,
            bot_user_id=org.bot_user_id,
        )
        envelope["enterprise_id"] = org.enterprise_id
        envelope["is_enterprise_install"] = True
        envelope["authorizations"][0].update(
            {"enterprise_id": org.enterprise_id, "team_id": None, "is_enterprise_install": True}
        )
        reply = await bot.event(envelope)
        assert reply.status == 200
        key = ThreadKey(
            team_id=workspace, channel_id=channel, thread_ts=ts, enterprise_id=org.enterprise_id
        )
        state = await bot.store.latest_run_in_thread(key)
        assert state is not None and state.status is RunStatus.ANSWERED, state
        assert state.thread.enterprise_id == org.enterprise_id
        assert {bot.oauth.team_of(t) for t in bot.tokens_posting_to(channel)} == {org}


async def test_after_a_restart_the_sweeper_expires_both_teams_pauses_with_their_tokens(
    bot: OAuthHarness,
) -> None:
    from bot.service.sweeper import sweep_once
    from storage.tables import InterventionRow

    threads = {TEAM_A: "1700001600.000100", TEAM_B: "1700001700.000100"}
    await paused_in_both_teams(bot, threads)

    await bot.restart()
    bot.fake.reset_calls()
    async with bot.store.engine.begin() as connection:
        await connection.execute(
            update(InterventionRow)
            .where(InterventionRow.status == "pending")
            .values(expires_at=datetime.now(UTC) - timedelta(seconds=1))
        )
    expired = await sweep_once(bot.bot.services)
    await bot.settle()

    assert len(expired) == 2, expired
    for team, ts in threads.items():
        state = await bot.run_of(team, ts)
        assert state.status is RunStatus.CANCELLED  # expired, no auto-proceed
        assert bot.teams_of_tokens(CHANNEL[str(team.team_id)]) == {team.team_id}


async def test_an_approvers_stats_count_their_workspace_only(make_bot: BotFactory) -> None:
    harness = await make_bot(install=True, approvers=[ASKER[str(TEAM_A.team_id)]])
    await harness.mention_in(TEAM_A, QUESTION, "1700001800.000100")
    for n in range(2):
        await harness.mention_in(TEAM_B, QUESTION, f"17000019{n}0.000100")
    body = await harness.command_in(TEAM_A, "stats")
    assert body["text"] == "GRACE stats for today"
    assert "*questions asked*: 1" in json.dumps(body["blocks"], ensure_ascii=False)


async def test_one_teams_votes_move_its_own_thresholds_only(make_bot: BotFactory) -> None:
    from agent.config import InterventionConfig
    from agent.schemas import InterventionLevel
    from bot.service.settings import FeedbackSettings

    harness = await make_bot(
        install=True,
        intervention=InterventionConfig(feedback_window=4, learning_rate=0.01),
        feedback=FeedbackSettings(quorum=1),
    )
    asker = ASKER[str(TEAM_A.team_id)]
    channel = CHANNEL[str(TEAM_A.team_id)]
    for n in range(4):
        state = RunState(
            run_id=f"votes{n:07d}",
            query=QUESTION,
            asker=asker,
            thread=ThreadKey(
                team_id=str(TEAM_A.team_id), channel_id=channel, thread_ts=f"17000020{n}0.0"
            ),
            status=RunStatus.ANSWERED,
            final_answer="Twenty days.",
            overall_confidence=0.9,
            level=InterventionLevel.SILENT,
        )
        await harness.store.save(state)
        payload = block_actions_payload(
            action_id=ids.FEEDBACK_DOWN,
            value=ids.ButtonValue(run_id=state.run_id).encode(),
            user=asker,
            channel=channel,
            message_ts=state.thread.thread_ts,
            team_id=str(TEAM_A.team_id),
        )
        reply = await harness.signed(interactive_body(payload), FORM_CONTENT_TYPE)
        assert reply.status == 200

    shared = harness.bot.deps.orchestrator.thresholds
    own = await harness.store.feedback.load_team_thresholds()
    assert set(own) == {TEAM_A.team_id}
    assert own[str(TEAM_A.team_id)].notify > shared.notify  # 👎 on confident answers
    assert await harness.store.load_thresholds() is None  # the shared ones never moved
    a = await harness.command_in(TEAM_A, "thresholds")
    b = await harness.command_in(TEAM_B, "thresholds")
    assert f"{own[str(TEAM_A.team_id)].notify:.2f}" in json.dumps(a)
    assert f"{shared.notify:.2f}" in json.dumps(b)
    assert asker not in json.dumps(b)  # team B sees none of team A's changes


async def test_a_teams_verified_answer_answers_that_team_only(make_bot: BotFactory) -> None:
    approvers = [ASKER[str(TEAM_A.team_id)], ASKER[str(TEAM_B.team_id)]]
    harness = await make_bot(install=True, approvers=approvers)
    keeper = harness.bot.deps.verified
    assert keeper is not None
    saved, _ = await keeper.save(
        question="What is the capital of Mongolia?",
        answer="It is Ulaanbaatar, according to our travel guide.",
        verified_by=approvers[0],
        verified_by_name="alice",
        team_id=str(TEAM_A.team_id),
    )
    source = f"verified answer {saved.answer_id}"
    for team, ts in ((TEAM_A, "1700002100.000100"), (TEAM_B, "1700002200.000100")):
        await harness.mention_in(team, "What is the capital of Mongolia?", ts)
        state = await harness.run_of(team, ts)
        cited = source in {s.source for s in state.sources}
        assert cited is (team is TEAM_A), (team.name, state.sources, state.status)

    listed_a = json.dumps(await harness.command_in(TEAM_A, "verified"))
    listed_b = json.dumps(await harness.command_in(TEAM_B, "verified"))
    assert saved.answer_id in listed_a and saved.answer_id not in listed_b
    refused = await harness.command_in(TEAM_B, f"forget {saved.answer_id}")
    assert "No verified answer" in refused["text"]
    assert await keeper.store.get(saved.answer_id) is not None


async def test_the_outbox_side_refreshes_an_expired_token_once(bot: OAuthHarness) -> None:
    """Not a request (Bolt's authorize rotates those): work done later for a team — the
    outbox, the sweeper, recovery — rotates through the routed client, once for
    concurrent calls."""
    import asyncio

    from bot.slack.acting import TeamRef, acting_for

    await bot.install(TEAM_A)
    store = bot.installations
    old = await store.async_find_bot(enterprise_id=None, team_id=TEAM_A.team_id)
    assert old is not None
    bot.oauth.expire(TEAM_A)
    old.bot_token_expires_at = int(datetime.now(UTC).timestamp()) - 60
    await store.async_save_bot(old)

    channel = CHANNEL[str(TEAM_A.team_id)]
    with acting_for(TeamRef(team_id=TEAM_A.team_id)):
        posted = await asyncio.gather(
            *(bot.bot.deps.publisher.post_text(channel, None, f"notice {n}") for n in range(3))
        )
    assert all(posted), posted
    fresh = await store.async_find_bot(enterprise_id=None, team_id=TEAM_A.team_id)
    assert fresh is not None and fresh.bot_token != old.bot_token
    assert bot.tokens_posting_to(channel) == {fresh.bot_token}
    refreshes = [
        c
        for c in bot.fake.calls_to("oauth.v2.access")
        if c.params.get("grant_type") == "refresh_token"
    ]
    assert len(refreshes) == 1


async def test_the_home_tab_lists_only_its_own_workspaces_runs(
    oauth_fake: tuple[FakeSlack, FakeOAuth], make_bot: BotFactory
) -> None:
    """A global approver's Home tab, opened in team A, lists team A's paused run and not
    team B's, though the approver could answer both (review finding: it listed both)."""
    fake, oauth = oauth_fake
    approver = "UAPPROVE1"
    bot = await make_bot(install=True, approvers=[approver])
    await bot.mention_in(TEAM_A, PAUSING, "1700000900.000100")
    await bot.mention_in(TEAM_B, PAUSING, "1700000900.000200")
    mine = await bot.run_of(TEAM_A, "1700000900.000100")
    theirs = await bot.run_of(TEAM_B, "1700000900.000200")
    assert mine.status is RunStatus.PAUSED and theirs.status is RunStatus.PAUSED
    await bot.open_app_in(TEAM_A, approver, event_ts="1700000999.000001")
    views = [
        json.dumps(c.params["view"])
        for c in fake.calls_to("views.publish")
        if c.params["user_id"] == approver and _team_of_call(oauth, c) == TEAM_A.team_id
    ]
    assert views, "the approver's tab was published with team A's token"
    assert mine.run_id[:6] in views[-1]
    assert theirs.run_id[:6] not in views[-1]


def _team_of_call(oauth: FakeOAuth, call: Any) -> str | None:
    token = str(call.headers.get("Authorization", "")).removeprefix("Bearer ").strip()
    team = oauth.team_of(token)
    return str(team.team_id) if team is not None else None
