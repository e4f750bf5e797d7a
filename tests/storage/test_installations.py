"""Slack installations and OAuth states in our database (issue 21), on both backends."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from slack_sdk.oauth.installation_store import Bot, Installation
from sqlalchemy import select, text, update
from sqlalchemy.ext.asyncio import AsyncEngine

from agent.schemas import ThreadKey
from storage.installations import SqlInstallationStore, SqlOAuthStateStore
from storage.run_store import SqlRunStore
from storage.sealing import Sealer, SealError, new_key
from storage.tables import InstallationRow, OAuthStateRow
from storage.team_data import SqlTeamData
from tests.samples import make_state


def _installation(
    team: str | None = "T1",
    *,
    enterprise: str | None = None,
    token: str = "xoxb-1",
    org_wide: bool = False,
    refresh: str | None = None,
) -> Installation:
    return Installation(
        app_id="A1",
        enterprise_id=enterprise,
        team_id=team,
        team_name=f"team {team}",
        bot_token=token,
        bot_id="B1",
        bot_user_id="UBOT",
        bot_scopes="chat:write,commands",
        bot_refresh_token=refresh,
        bot_token_expires_in=43200 if refresh else None,
        user_id="UINSTALLER",
        is_enterprise_install=org_wide,
    )


@pytest.fixture
def sealer() -> Sealer:
    return Sealer(new_key())


@pytest.fixture
def installations(engine: AsyncEngine, sealer: Sealer) -> SqlInstallationStore:
    return SqlInstallationStore(engine, sealer)


async def test_saved_installation_found_with_tokens_sealed(
    installations: SqlInstallationStore, engine: AsyncEngine
) -> None:
    await installations.async_save(_installation(token="xoxb-secret-1", refresh="xoxe-1-r"))

    found = await installations.async_find_installation(enterprise_id=None, team_id="T1")
    assert found is not None
    assert (found.bot_token, found.bot_refresh_token) == ("xoxb-secret-1", "xoxe-1-r")
    assert found.bot_token_expires_at is not None
    bot = await installations.async_find_bot(enterprise_id=None, team_id="T1")
    assert bot is not None and bot.bot_token == "xoxb-secret-1"
    assert await installations.async_find_installation(enterprise_id=None, team_id="T2") is None
    # what the database holds: no token in clear anywhere in the row
    async with engine.connect() as connection:
        rows = (await connection.execute(text("SELECT * FROM slack_installations"))).all()
    assert len(rows) == 1
    assert "xoxb-secret-1" not in repr(rows) and "xoxe-1-r" not in repr(rows)


async def test_another_key_cannot_open_the_tokens(
    installations: SqlInstallationStore, engine: AsyncEngine
) -> None:
    await installations.async_save(_installation())
    other = SqlInstallationStore(engine, Sealer(new_key()))
    with pytest.raises(SealError):
        await other.async_find_installation(enterprise_id=None, team_id="T1")
    with pytest.raises(SealError):
        Sealer("not a key")


async def test_rotated_bot_tokens_replace_the_old_ones(
    installations: SqlInstallationStore,
) -> None:
    await installations.async_save(_installation(token="xoxb-old", refresh="xoxe-old"))
    await installations.async_save_bot(
        Bot(
            app_id="A1",
            team_id="T1",
            bot_token="xoxb-new",
            bot_id="B1",
            bot_user_id="UBOT",
            bot_refresh_token="xoxe-new",
            bot_token_expires_in=43200,
            installed_at=datetime.now(UTC),
        )
    )
    found = await installations.async_find_installation(enterprise_id=None, team_id="T1")
    assert found is not None
    assert (found.bot_token, found.bot_refresh_token, found.user_id) == (
        "xoxb-new",
        "xoxe-new",
        "UINSTALLER",
    )


async def test_org_wide_install_acts_for_every_workspace_of_the_org(
    installations: SqlInstallationStore,
) -> None:
    await installations.async_save(
        _installation(None, enterprise="E1", token="xoxb-org", org_wide=True)
    )
    for team in ("T7", "T8"):
        bot = await installations.async_find_bot(enterprise_id="E1", team_id=team)
        assert bot is not None and bot.bot_token == "xoxb-org"
    org = await installations.async_find_installation(
        enterprise_id="E1", team_id=None, is_enterprise_install=True
    )
    assert org is not None and org.is_enterprise_install
    assert await installations.async_find_bot(enterprise_id="E2", team_id="T7") is None
    [team] = await installations.teams()
    assert (team.key, team.is_enterprise_install) == ("E1", True)


async def test_uninstall_forgets_tokens_at_once_and_a_reinstall_revives(
    installations: SqlInstallationStore,
) -> None:
    await installations.async_save(_installation())
    await installations.async_delete_bot(enterprise_id=None, team_id="T1")
    assert await installations.async_find_bot(enterprise_id=None, team_id="T1") is None
    assert await installations.async_find_installation(enterprise_id=None, team_id="T1") is None
    [team] = await installations.teams()
    assert team.uninstalled_at is not None
    assert await installations.uninstalled_before(datetime.now(UTC) + timedelta(seconds=1))

    await installations.async_save(_installation(token="xoxb-2"))
    [team] = await installations.teams()
    assert team.uninstalled_at is None
    assert await installations.uninstalled_before(datetime.now(UTC) + timedelta(days=1)) == []


async def test_a_workspace_uninstalled_on_its_own_falls_back_to_its_orgs_later_install(
    installations: SqlInstallationStore,
) -> None:
    await installations.async_save(_installation("T7", enterprise="E1", token="xoxb-ws"))
    await installations.async_delete_bot(enterprise_id="E1", team_id="T7")
    assert await installations.async_find_bot(enterprise_id="E1", team_id="T7") is None

    await installations.async_save(
        _installation(None, enterprise="E1", token="xoxb-org", org_wide=True)
    )
    bot = await installations.async_find_bot(enterprise_id="E1", team_id="T7")
    assert bot is not None and bot.bot_token == "xoxb-org"
    # the workspace's own uninstall, repeated (Slack retries events), is not the org's
    assert not await installations.revoke("E1", "T7")
    bot = await installations.async_find_bot(enterprise_id="E1", team_id="T7")
    assert bot is not None and bot.bot_token == "xoxb-org"
    own = {t.key: t.uninstalled_at for t in await installations.teams()}
    assert own["E1"] is None and own["T7"] is not None
    # the org serves the workspace now: its data is in use, never due for deletion
    later = datetime.now(UTC) + timedelta(days=400)
    assert await installations.uninstalled_before(later) == []
    # once the org's install goes too, both are due
    assert await installations.revoke("E1", None, org_wide=True)
    assert {t.key for t in await installations.uninstalled_before(later)} == {"E1", "T7"}


async def test_oauth_state_is_single_use_and_expires(engine: AsyncEngine) -> None:
    states = SqlOAuthStateStore(engine, expiration_seconds=600)
    state = await states.async_issue()
    assert await states.async_consume("made-up") is False
    assert await states.async_consume(state) is True
    assert await states.async_consume(state) is False  # replayed

    stale = await states.async_issue()
    async with engine.begin() as connection:
        await connection.execute(
            update(OAuthStateRow)
            .where(OAuthStateRow.state == stale)
            .values(expires_at=datetime.now(UTC) - timedelta(seconds=1))
        )
    assert await states.async_consume(stale) is False


async def test_forgetting_a_team_deletes_its_runs_and_installation_only(
    installations: SqlInstallationStore, store: SqlRunStore, engine: AsyncEngine
) -> None:
    await installations.async_save(_installation("T1"))
    await installations.async_save(_installation("T2", token="xoxb-2"))
    mine = make_state()
    theirs = make_state(thread_ts="1700000000.000200")
    theirs.thread = ThreadKey(team_id="T2", channel_id="C9", thread_ts=theirs.thread.thread_ts)
    await store.save(mine)
    await store.save(theirs)

    team = await installations.find_team("T1")
    assert team is not None
    forgotten = await SqlTeamData(engine).forget(team)

    assert forgotten.runs == 1 and forgotten.installation
    assert await store.load(mine.run_id) is None
    assert await store.load(theirs.run_id) is not None
    async with engine.connect() as connection:
        keys = (await connection.execute(select(InstallationRow.team_key))).scalars().all()
    assert keys == ["T2"]


async def test_a_new_key_first_still_opens_tokens_sealed_with_the_old(engine: AsyncEngine) -> None:
    old, new = new_key(), new_key()
    await SqlInstallationStore(engine, Sealer(old)).async_save(_installation(token="xoxb-kept"))

    both = SqlInstallationStore(engine, Sealer(f"{new},{old}"))
    found = await both.async_find_installation(enterprise_id=None, team_id="T1")
    assert found is not None and found.bot_token == "xoxb-kept"
    await both.async_save(found)  # sealed again, with the new key
    only_new = SqlInstallationStore(engine, Sealer(new))
    again = await only_new.async_find_installation(enterprise_id=None, team_id="T1")
    assert again is not None and again.bot_token == "xoxb-kept"
