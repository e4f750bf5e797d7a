"""Channel settings (storage/channel_settings.py, 0011): set, unset, listed, every
change recorded; the expert reminder claimed once. On SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio

from sqlalchemy.ext.asyncio import AsyncEngine

from storage.channel_settings import ChannelUpdate, SqlChannelSettings


async def test_settings_are_set_unset_and_recorded(engine: AsyncEngine) -> None:
    store = SqlChannelSettings(engine)
    assert await store.get("C1") is None
    saved = await store.update(
        "C1",
        ChannelUpdate(collections=["hr"], experts=["U1", "S2"], silent=0.95, follow_ups=True),
        changed_by="U0ADMIN",
    )
    assert saved.collections == ["hr"] and saved.experts == ["U1", "S2"]
    assert saved.silent == 0.95 and saved.follow_ups is True and saved.approvers is None
    assert saved.updated_by == "U0ADMIN" and saved.team_id == ""

    # a field left out stays; a field given as None is unset
    again = await store.update(
        "C1", ChannelUpdate(experts=None, answer_mode="all"), changed_by="cli:ops"
    )
    assert again.collections == ["hr"] and again.experts is None and again.answer_mode == "all"
    assert (await store.get("C1")) == again
    assert await store.get("C1", team_id="T9") is None  # other workspaces are apart

    history = await store.history("C1")  # newest first; one change's fields in reverse
    assert [(c.field, c.old, c.new, c.changed_by) for c in history[:2]] == [
        ("answer_mode", None, "all", "cli:ops"),
        ("experts", ["U1", "S2"], None, "cli:ops"),
    ]
    first = {c.field: c for c in history if c.changed_by == "U0ADMIN"}
    assert set(first) == {"collections", "experts", "silent", "follow_ups"}
    assert first["silent"].old is None and first["silent"].new == 0.95

    # nothing changed: nothing recorded
    await store.update("C1", ChannelUpdate(collections=["hr"]), changed_by="U5")
    assert len(await store.history("C1")) == len(history)

    await store.update("C2", ChannelUpdate(reply_mode="ephemeral"), changed_by="U0ADMIN")
    assert [s.channel_id for s in await store.all_channels()] == ["C1", "C2"]
    assert await store.all_channels(team_id="T9") == []


async def test_concurrent_changes_each_land_with_their_record(engine: AsyncEngine) -> None:
    store = SqlChannelSettings(engine)
    await asyncio.gather(
        store.update("C1", ChannelUpdate(silent=0.97), changed_by="U1"),
        store.update("C1", ChannelUpdate(collections=["it"]), changed_by="U2"),
        store.update("C1", ChannelUpdate(experts=["U3"]), changed_by="U3"),
    )
    settings = await store.get("C1")
    assert settings is not None
    assert (settings.silent, settings.collections, settings.experts) == (0.97, ["it"], ["U3"])
    assert sorted(c.field for c in await store.history("C1")) == [
        "collections",
        "experts",
        "silent",
    ]


async def test_a_reminder_is_claimed_once(engine: AsyncEngine, other_engine: AsyncEngine) -> None:
    one, two = SqlChannelSettings(engine), SqlChannelSettings(other_engine)
    claims = await asyncio.gather(
        one.claim_reminder("i1", run_id="r1"), two.claim_reminder("i1", run_id="r1")
    )
    assert sorted(claims) == [False, True]
    assert await one.claim_reminder("i2", run_id="r1") is True
