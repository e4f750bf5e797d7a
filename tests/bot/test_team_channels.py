"""Channel settings kept per team, and a team limited to some collections (issue 21,
point 3), end to end in OAuth mode: the real Bolt app over HTTP with signed requests
from two installed workspaces against the fake Slack, on SQLite and PostgreSQL. Both
teams use the same channel id: only the team tells their settings apart."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest

from agent.errors import InvalidInputError
from agent.schemas import RunState, RunStatus, ThreadKey
from blocks import channel_config as cfg
from bot.service.channels import ChannelService
from bot.simulator.oauth import FakeOAuth, FakeTeam
from bot.simulator.requests import (
    FORM_CONTENT_TYPE,
    form_body,
    message_envelope,
    slash_command_form,
    view_submission_payload,
)
from bot.simulator.webapi import FakeSlack
from storage.channel_settings import ChannelUpdate

from .conftest import FACILITIES, assert_valid_block_kit
from .test_oauth import (
    TEAM_A,
    TEAM_B,
    BotFactory,
    OAuthHarness,
    make_bot,  # noqa: F401  (the fixture `teams` builds on)
)

SHARED = "C0SHARED01"
"""The same channel id in both workspaces."""
USER = {TEAM_A.team_id: "U0ALPHA001", TEAM_B.team_id: "U0BETA0002"}
ADMIN = {TEAM_A.team_id: "U0ADMINA01", TEAM_B.team_id: "U0ADMINB02"}
EXPERT_A = "U0EXPERTA1"
DOCS = "grace_docs"
BIKE_Q = "What is the door code of the bike room?"
VACATION_Q = "How many vacation days do new employees get?"


@pytest.fixture
async def oauth_fake() -> AsyncIterator[tuple[FakeSlack, FakeOAuth]]:
    async with FakeSlack() as server:
        yield server, server.enable_oauth(FakeOAuth())
        assert_valid_block_kit(server.calls)


Teams = Callable[[dict[str, list[str]]], Awaitable[OAuthHarness]]
"""Starts a bot with both teams installed, given which collections each team may search."""


@pytest.fixture
def teams(oauth_fake: tuple[FakeSlack, FakeOAuth], make_bot: BotFactory) -> Teams:  # noqa: F811
    """Both teams installed (`make_bot`), each with an admin and a user, and the given
    collection limits per team."""
    fake = oauth_fake[0]

    async def start(limits: dict[str, list[str]]) -> OAuthHarness:
        harness = await make_bot(install=True, slack={"team_collections": limits})
        for team in (TEAM_A, TEAM_B):
            fake.workspace.add_user(ADMIN[team.team_id], name=f"admin-{team.name}", is_admin=True)
            fake.workspace.add_user(USER[team.team_id], name=f"user-{team.name}")
        return harness

    return start


@pytest.fixture
async def bot(teams: Teams) -> OAuthHarness:
    return await teams({})


@pytest.fixture
async def limited(teams: Teams) -> OAuthHarness:
    """Team B may search `facilities` only; team A every collection."""
    return await teams({str(TEAM_B.team_id): [FACILITIES]})


def channels(harness: OAuthHarness) -> ChannelService:
    service = harness.bot.deps.channels
    assert service is not None
    return service


async def mention(harness: OAuthHarness, team: FakeTeam, text: str, ts: str) -> None:
    await harness.mention_in(team, text, ts, user=USER[team.team_id], channel=SHARED)


async def command(harness: OAuthHarness, team: FakeTeam, text: str, user: str) -> None:
    form = slash_command_form(text=text, user=user, channel=SHARED, team_id=str(team.team_id))
    reply = await harness.signed(form_body(form), FORM_CONTENT_TYPE)
    assert reply.status == 200, reply.text


async def submit(harness: OAuthHarness, team: FakeTeam, user: str, **fields: Any) -> Any:
    """A `view_submission` of the config modal from `team`, its inputs in Slack's shapes."""
    payload = view_submission_payload(
        callback_id=cfg.CONFIG_MODAL_CALLBACK,
        values={},
        private_metadata=SHARED,
        user=user,
        team_id=str(team.team_id),
    )
    payload["view"]["state"] = {
        "values": {block: {cfg.action_id(block): state} for block, state in fields.items()}
    }
    reply = await harness.interactive(payload)
    assert reply.status == 200, reply.text
    return reply.json() if reply.text else {}


async def run_of(harness: OAuthHarness, team: FakeTeam, ts: str) -> RunState:
    key = ThreadKey(team_id=str(team.team_id), channel_id=SHARED, thread_ts=ts)
    state = await harness.store.latest_run_in_thread(key)
    assert state is not None, f"no run of {team.name} in {ts}"
    return state


def collections_of(state: RunState) -> set[str | None]:
    return {s.collection for s in state.sources}


def opened_views(harness: OAuthHarness) -> list[dict[str, Any]]:
    return [c.params["view"] for c in harness.fake.calls_to("views.open")]


# --------------------------------------------------------------------------- per team


@pytest.mark.usefixtures("with_facilities")
async def test_each_team_runs_with_its_own_settings_of_the_same_channel(
    bot: OAuthHarness,
) -> None:
    a, b = str(TEAM_A.team_id), str(TEAM_B.team_id)
    await channels(bot).update(
        SHARED, ChannelUpdate(collections=[FACILITIES]), changed_by="ops", team_id=a
    )
    await channels(bot).update(
        SHARED, ChannelUpdate(answer_mode="all", follow_ups=True), changed_by="ops", team_id=b
    )

    await mention(bot, TEAM_A, BIKE_Q, "1700007000.000100")
    await mention(bot, TEAM_B, BIKE_Q, "1700007000.000200")
    in_a = await run_of(bot, TEAM_A, "1700007000.000100")
    in_b = await run_of(bot, TEAM_B, "1700007000.000200")
    assert in_a.status is RunStatus.ANSWERED, in_a.error
    assert (in_a.collection, in_a.policy.collections) == (FACILITIES, [FACILITIES])
    assert collections_of(in_a) == {FACILITIES} and "4721" in in_a.final_answer
    assert (in_b.collection, in_b.policy.collections) == (DOCS, [])
    assert FACILITIES not in collections_of(in_b) and "4721" not in in_b.final_answer

    # team B's channel answers every question posted in it; team A's, same id, does not
    for team, ts in ((TEAM_A, "1700007000.000300"), (TEAM_B, "1700007000.000400")):
        posted = message_envelope(
            text=VACATION_Q,
            ts=ts,
            user=USER[team.team_id],
            channel=SHARED,
            team_id=str(team.team_id),
            bot_user_id=team.bot_user_id,
        )
        assert (await bot.event(posted)).status == 200
    unasked = ThreadKey(team_id=a, channel_id=SHARED, thread_ts="1700007000.000300")
    assert await bot.store.latest_run_in_thread(unasked) is None
    assert (await run_of(bot, TEAM_B, "1700007000.000400")).status is RunStatus.ANSWERED

    # the settings as each team reads them
    assert (await channels(bot).get(SHARED, team_id=a)).answer_mode is None
    assert (await channels(bot).get(SHARED, team_id=b)).collections is None
    assert [c.team_id for c in await channels(bot).all_channels()] == sorted([a, b])
    assert [c.team_id for c in await channels(bot).team_channels(b)] == [b]
    assert await channels(bot).team_channels(None) == []  # no team, no one's settings


async def test_team_b_config_cannot_read_or_change_team_a_settings(bot: OAuthHarness) -> None:
    a, b = str(TEAM_A.team_id), str(TEAM_B.team_id)
    await channels(bot).update(
        SHARED,
        ChannelUpdate(experts=[EXPERT_A], silent=0.95),
        changed_by=ADMIN[a],
        team_id=a,
    )
    bot.fake.workspace.add_user(EXPERT_A, name="expert-alpha")

    # team A's expert, sending from team B: team B's settings of the channel name nobody
    await command(bot, TEAM_B, "config", EXPERT_A)
    assert opened_views(bot) == []
    told = [e.text for e in bot.fake.workspace.ephemerals(user=EXPERT_A)]
    assert any("Only workspace admins" in t for t in told), told
    forged = await submit(bot, TEAM_B, EXPERT_A, **{cfg.SILENT: plain("0.85")})
    assert forged["response_action"] == "errors"
    assert (await channels(bot).get(SHARED, team_id=a)).silent == 0.95
    assert (await channels(bot).get(SHARED, team_id=b)).silent is None

    # team B's admin sees team B's (empty) settings, never team A's, and changes B's only
    await command(bot, TEAM_B, "config", ADMIN[b])
    [view] = opened_views(bot)
    assert EXPERT_A not in json.dumps(view) and "0.95" not in json.dumps(view)
    saved = await submit(bot, TEAM_B, ADMIN[b], **{cfg.SILENT: plain("0.85")})
    assert "errors" not in saved
    mine = await channels(bot).get(SHARED, team_id=b)
    theirs = await channels(bot).get(SHARED, team_id=a)
    assert (mine.silent, mine.experts, mine.updated_by) == (0.85, None, ADMIN[b])
    assert (theirs.silent, theirs.experts, theirs.updated_by) == (0.95, [EXPERT_A], ADMIN[a])
    assert {c.changed_by for c in await channels(bot).history(SHARED, team_id=a)} == {ADMIN[a]}

    # team A's own expert, from team A: its modal, with its values
    await command(bot, TEAM_A, "config", EXPERT_A)
    assert len(opened_views(bot)) == 2
    assert EXPERT_A in json.dumps(opened_views(bot)[1])


async def test_the_home_tab_shows_an_admin_their_own_teams_channel_settings(
    bot: OAuthHarness,
) -> None:
    a, b = str(TEAM_A.team_id), str(TEAM_B.team_id)
    await channels(bot).update(
        SHARED, ChannelUpdate(experts=[EXPERT_A]), changed_by=ADMIN[a], team_id=a
    )
    await channels(bot).update(
        "C0BETAONLY", ChannelUpdate(reply_mode="ephemeral"), changed_by=ADMIN[b], team_id=b
    )
    shown: dict[str, str] = {}
    for team in (TEAM_A, TEAM_B):
        admin = ADMIN[str(team.team_id)]
        await bot.open_app_in(team, admin, event_ts="1700007300.000001")
        home = bot.fake.home.view(admin)
        assert home is not None, f"no Home tab for {team.name}'s admin"
        shown[str(team.team_id)] = json.dumps(home.view["blocks"])
    assert f"<#{SHARED}>" in shown[a] and EXPERT_A in shown[a] and "C0BETAONLY" not in shown[a]
    assert "C0BETAONLY" in shown[b] and SHARED not in shown[b] and EXPERT_A not in shown[b]


def plain(value: str) -> dict[str, str]:
    return {"type": "plain_text_input", "value": value}


# --------------------------------------------------------------------------- collections


@pytest.mark.usefixtures("with_facilities")
async def test_a_team_limited_to_a_collection_is_answered_from_it_only(
    limited: OAuthHarness,
) -> None:
    a, b = str(TEAM_A.team_id), str(TEAM_B.team_id)
    await mention(limited, TEAM_B, VACATION_Q, "1700007100.000100")
    await mention(limited, TEAM_B, BIKE_Q, "1700007100.000200")
    await mention(limited, TEAM_A, VACATION_Q, "1700007100.000300")
    vacation_b = await run_of(limited, TEAM_B, "1700007100.000100")
    bike_b = await run_of(limited, TEAM_B, "1700007100.000200")
    vacation_a = await run_of(limited, TEAM_A, "1700007100.000300")
    for state in (vacation_b, bike_b):
        assert (state.collection, state.policy.collections) == (FACILITIES, [FACILITIES])
        assert collections_of(state) <= {FACILITIES}
    assert bike_b.status is RunStatus.ANSWERED and "4721" in bike_b.final_answer
    assert vacation_a.status is RunStatus.ANSWERED and DOCS in collections_of(vacation_a)
    assert vacation_a.policy.collections == []

    # naming a collection the team may not use: refused, with why
    refused = await submit(
        limited,
        TEAM_B,
        ADMIN[b],
        **{cfg.COLLECTIONS: {"type": "multi_static_select", "selected_options": [{"value": DOCS}]}},
    )
    assert "may not search grace_docs" in refused["errors"][cfg.COLLECTIONS]
    with pytest.raises(InvalidInputError, match="limits it to facilities"):
        await channels(limited).update(
            SHARED, ChannelUpdate(collections=[DOCS]), changed_by="ops", team_id=b
        )
    assert (await channels(limited).get(SHARED, team_id=b)).collections is None
    # team A may name it, for the same channel id
    await channels(limited).update(
        SHARED, ChannelUpdate(collections=[DOCS]), changed_by="ops", team_id=a
    )

    # the modal lists only the collections the team may search
    await command(limited, TEAM_B, "config", ADMIN[b])
    [view] = opened_views(limited)
    assert FACILITIES in json.dumps(view) and f'"{DOCS}"' not in json.dumps(view)

    # a setting stored before the limit (written past the check) is ignored at run time
    await channels(limited).store.update(
        SHARED, ChannelUpdate(collections=[DOCS]), changed_by="before", team_id=b
    )
    channels(limited)._cache.clear()
    await command(limited, TEAM_B, "config", ADMIN[b])
    assert f'"{DOCS}"' not in json.dumps(opened_views(limited)[-1]), "not even preselected"
    await mention(limited, TEAM_B, VACATION_Q, "1700007100.000400")
    again = await run_of(limited, TEAM_B, "1700007100.000400")
    assert (again.collection, again.policy.collections) == (FACILITIES, [FACILITIES])
    assert collections_of(again) <= {FACILITIES}


async def test_grace_channel_takes_the_team_in_oauth_mode(bot: OAuthHarness) -> None:
    from tests.durable.helpers import grace_env, grace_here_async

    a, b = str(TEAM_A.team_id), str(TEAM_B.team_id)
    await bot.stop()  # the data dir's knowledge base takes one process at a time
    settings = bot.settings
    assert settings.slack_client_id and settings.slack_client_secret and settings.encryption_key
    env = grace_env(
        settings.data_dir,
        GRACE_DATABASE_URL=str(settings.database_url),
        GRACE_LLM__PROVIDER="offline",
        SLACK_CLIENT_ID=settings.slack_client_id,
        SLACK_CLIENT_SECRET=settings.slack_client_secret.get_secret_value(),
        GRACE_ENCRYPTION_KEY=settings.encryption_key.get_secret_value(),
        GRACE_SLACK__TEAM_COLLECTIONS=json.dumps({b: [FACILITIES]}),
    )

    code, _, err = await grace_here_async(env, "channel", "set", SHARED, "--silent", "0.9")
    assert code == 2 and "--team" in err and a in err and b in err, err
    code, out, err = await grace_here_async(
        env, "channel", "set", SHARED, "--team", a, "--silent", "0.9", "--json"
    )
    assert code == 0, err
    assert (json.loads(out)["team_id"], json.loads(out)["silent"]) == (a, 0.9)
    code, _, err = await grace_here_async(
        env, "channel", "set", SHARED, "--team", b, "--collection", DOCS
    )
    assert code == 2 and "may not search grace_docs" in err, err
    code, _, err = await grace_here_async(
        env, "channel", "set", SHARED, "--team", "TNOTHERE1", "--silent", "0.9"
    )
    assert code == 2 and "no installed workspace" in err, err

    code, out, err = await grace_here_async(env, "channel", "show", SHARED, "--team", b, "--json")
    assert code == 0, err
    shown = json.loads(out)
    assert shown["silent"] is None and shown["history"] == []
    assert shown["effective"]["collections"] == [FACILITIES]
    code, out, _ = await grace_here_async(env, "channel", "list")
    assert code == 0 and out.startswith(f"{a}/{SHARED}  silent=0.9")
    code, out, _ = await grace_here_async(env, "channel", "list", "--team", b)
    assert (code, out.strip()) == (0, "no channel has settings of its own")

    # forgetting a workspace forgets its channel settings, and only its own
    code, _, err = await grace_here_async(
        env, "channel", "set", SHARED, "--team", b, "--answer", "all"
    )
    assert code == 0, err
    code, _, err = await grace_here_async(env, "teams", "forget", a)
    assert code == 0, err
    code, out, _ = await grace_here_async(env, "channel", "list")
    assert (code, out.strip()) == (0, f"{b}/{SHARED}  answer_mode=all")
    await bot.start()
    assert await channels(bot).history(SHARED, team_id=a) == []
    assert len(await channels(bot).history(SHARED, team_id=b)) == 1


async def test_a_team_limited_to_collections_not_ingested_is_told_so(teams: Teams) -> None:
    harness = await teams({str(TEAM_B.team_id): ["payroll"]})
    await mention(harness, TEAM_B, VACATION_Q, "1700007200.000100")
    key = ThreadKey(team_id=str(TEAM_B.team_id), channel_id=SHARED, thread_ts="1700007200.000100")
    assert await harness.store.latest_run_in_thread(key) is None  # no run, nothing searched
    [told] = harness.fake.thread(SHARED, "1700007200.000100")[-1:]
    assert "has been ingested yet" in told.text and DOCS not in told.text


def test_a_limited_team_names_at_least_one_collection() -> None:
    from pydantic import ValidationError

    from bot.service.settings import SlackSettings

    assert SlackSettings(team_collections={" T1 ": [" hr", "it", "hr"]}).team_collections == {
        "T1": ["hr", "it"]
    }
    with pytest.raises(ValidationError, match="at least one collection"):
        SlackSettings(team_collections={"T1": [" "]})
