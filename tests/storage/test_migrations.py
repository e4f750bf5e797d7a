"""Alembic migrations: a fresh database, an upgrade that keeps data, and schema drift."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Connection, inspect, text
from sqlalchemy.ext.asyncio import AsyncEngine

from agent.schemas import InterventionAction, InterventionAnswer, InterventionStatus, utcnow
from storage.db import alembic_config, current_revision, make_engine, migrate
from storage.run_store import SqlRunStore
from storage.tables import Base
from storage.workspace_notes import SqlWorkspaceNotes
from tests.samples import make_state

HEAD = "0012_installations"


def _url(tmp_path: Path, name: str = "grace.db") -> str:
    return f"sqlite+aiosqlite:///{tmp_path}/{name}"


def _schema_drift(connection: Connection) -> list[object]:
    context = MigrationContext.configure(connection, opts={"compare_type": True})
    return list(compare_metadata(context, Base.metadata))


def _tables_and_run_columns(connection: Connection) -> tuple[set[str], set[str]]:
    inspector = inspect(connection)
    return set(inspector.get_table_names()), {c["name"] for c in inspector.get_columns("runs")}


@pytest.mark.db("sqlite", reason="a database file and its missing parent directories")
async def test_fresh_file_migrates_to_head_matching_the_models(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path}/new/dir/grace.db"  # parent dirs do not exist yet
    assert await current_revision(url) is None

    await migrate(url)
    await migrate(url)  # idempotent

    assert await current_revision(url) == HEAD


async def test_migrated_schema_matches_the_models(db_url: str, engine: AsyncEngine) -> None:
    """On every backend under test: the revisions and `tables.py` describe one schema."""
    await migrate(db_url)  # a second run finds nothing to do
    assert await current_revision(db_url) == HEAD
    async with engine.connect() as connection:
        assert await connection.run_sync(_schema_drift) == []


async def test_concurrent_migrations_serialise(fresh_db_url: str) -> None:
    url = fresh_db_url
    await asyncio.gather(migrate(url), migrate(url), migrate(url))
    assert await current_revision(url) == HEAD


@pytest.mark.db("sqlite", reason="seeds and inspects the file with the sqlite3 module")
async def test_upgrade_from_0001_keeps_rows_and_adds_the_new_schema(tmp_path: Path) -> None:
    url = _url(tmp_path)
    # The command-line path: Alembic builds its own engine from the URL.
    await asyncio.to_thread(command.upgrade, alembic_config(url), "0001_initial")
    assert await current_revision(url) == "0001_initial"

    # Rows written by the 0001-era code, which knew nothing of llm_model / message_refs.
    state = make_state()
    state.version = 1
    request = state.interventions[0]
    with sqlite3.connect(tmp_path / "grace.db") as db:
        db.execute(
            "INSERT INTO runs (run_id, team_id, channel_id, thread_ts, asker, question, status,"
            " replan_count, cost_usd, state_json, version, created_at, updated_at)"
            " VALUES (?, 'T1', 'C1', ?, 'U_ASKER', ?, 'paused', 1, 0.02, ?, 1,"
            " '2025-01-01 00:00:00.000000', '2025-01-01 00:00:00.000000')",
            (state.run_id, state.thread.thread_ts, state.query, state.model_dump_json()),
        )
        db.execute(
            "INSERT INTO interventions (intervention_id, run_id, step_id, kind, level, question,"
            " reason, options_json, urgency, status, allowed_responders_json, created_at)"
            " VALUES (?, ?, 2, 'confirm', 'confirm', 'Proceed?', '', '[]', 'blocking', 'pending',"
            " '[]', '2025-01-01 00:00:00.000000')",
            (request.intervention_id, state.run_id),
        )
        db.execute(
            "INSERT INTO feedback (run_id, user_id, confidence, was_correct, created_at,"
            " updated_at) VALUES (?, 'U1', 0.8, 1, '2025-01-01 00:00:00', '2025-01-01 00:00:00')",
            (state.run_id,),
        )

    await migrate(url)

    assert await current_revision(url) == HEAD
    engine = make_engine(url)
    try:
        async with engine.connect() as connection:
            tables, run_columns = await connection.run_sync(_tables_and_run_columns)
        assert "message_refs" in tables and "llm_model" in run_columns
        assert {"worker", "lease_expires_at"} <= run_columns
        store = SqlRunStore(engine)
        assert await store.load(state.run_id) == state
        assert await store.recent_feedback() == [(0.8, True)]
        claim = await store.claim_intervention(
            state.run_id,
            request.intervention_id,
            InterventionAnswer(action=InterventionAction.PROCEED, user="U_ASKER"),
        )
        assert claim.claimed
        await store.set_message_ref(run_id=state.run_id, kind="plan", channel_id="C1", ts="1.2")
        await store.save(state)
        assert (await store.load(state.run_id)) is not None
    finally:
        await engine.dispose()


@pytest.mark.db("sqlite", reason="inspects the file with the sqlite3 module")
async def test_downgrade_to_0001_keeps_runs_and_interventions(tmp_path: Path) -> None:
    url = _url(tmp_path)
    await migrate(url)
    engine = make_engine(url)
    try:
        state = make_state()
        await SqlRunStore(engine).save(state)
    finally:
        await engine.dispose()

    await asyncio.to_thread(command.downgrade, alembic_config(url), "0001_initial")

    assert await current_revision(url) == "0001_initial"
    with sqlite3.connect(tmp_path / "grace.db") as db:
        assert db.execute("SELECT count(*) FROM runs").fetchone() == (1,)
        status = db.execute("SELECT status FROM interventions").fetchall()
        assert status == [(InterventionStatus.PENDING.value,)]
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        assert "message_refs" not in tables
    await migrate(url)
    assert await current_revision(url) == HEAD


@asynccontextmanager
async def opened(url: str) -> AsyncIterator[AsyncEngine]:
    engine = make_engine(url)
    try:
        yield engine
    finally:
        await engine.dispose()


def _tables(connection: Connection) -> set[str]:
    return set(inspect(connection).get_table_names())


async def test_workspace_notes_move_out_of_message_refs(fresh_db_url: str) -> None:
    """0006: notes kept as message refs of `team:<id>` (team id in channel_id, until as
    epoch seconds in ts, value in digest) become rows of `workspace_notes`; run refs stay."""
    url = fresh_db_url
    await migrate(url, revision="0005_inbox_claims")
    until = datetime.now(UTC).replace(microsecond=0) + timedelta(hours=1)
    long_team = "E" + "9" * 80
    refs = [  # (run_id, kind, channel_id, ts, digest)
        ("team:T1", "stream_refused", "T1", str(int(until.timestamp())), "feature_not_enabled"),
        ("team:" + "a" * 40, "stream_refused", long_team, str(int(until.timestamp())), "x"),
        ("team:T2", "stream_refused", "T2", "not-a-time", "ignored"),
        ("run1", "plan", "C1", "1.0001", "abc"),
    ]
    async with opened(url) as engine:
        async with engine.begin() as connection:
            for run_id, kind, channel_id, ts, digest in refs:
                await connection.execute(
                    text(
                        "INSERT INTO message_refs (run_id, kind, channel_id, ts, digest,"
                        " created_at, updated_at) VALUES (:r, :k, :c, :t, :d, :now, :now)"
                    ),
                    {
                        "r": run_id,
                        "k": kind,
                        "c": channel_id,
                        "t": ts,
                        "d": digest,
                        "now": datetime(2026, 11, 1),
                    },
                )

        await migrate(url)

        notes = SqlWorkspaceNotes(engine)
        assert await notes.workspace_note("T1", "stream_refused") == ("feature_not_enabled", until)
        assert await notes.workspace_note(long_team, "stream_refused") == ("x", until)
        assert await notes.workspace_note("T2", "stream_refused") is None
        store = SqlRunStore(engine)
        assert await store.message_refs("run1") == {"plan": ("C1", "1.0001")}
        async with engine.connect() as connection:
            owners = set(await connection.scalars(text("SELECT run_id FROM message_refs")))
        assert owners == {"run1"}


async def test_processed_events_is_dropped_and_comes_back_on_downgrade(
    fresh_db_url: str,
) -> None:
    url = fresh_db_url
    await migrate(url, revision="0005_inbox_claims")
    async with opened(url) as engine:
        async with engine.begin() as connection:
            assert "processed_events" in await connection.run_sync(_tables)
            await connection.execute(
                text(
                    "INSERT INTO processed_events (event_id, kind, created_at)"
                    " VALUES ('Ev1', 'event', :now)"
                ),
                {"now": datetime(2026, 11, 1)},
            )
        await migrate(url)
        async with engine.connect() as connection:
            assert "processed_events" not in await connection.run_sync(_tables)
            assert "workspace_notes" in await connection.run_sync(_tables)

    await asyncio.to_thread(command.downgrade, alembic_config(url), "0005_inbox_claims")
    async with opened(url) as engine:
        async with engine.connect() as connection:
            tables = await connection.run_sync(_tables)
            assert "processed_events" in tables and "workspace_notes" not in tables
            rows = await connection.scalar(text("SELECT count(*) FROM processed_events"))
            assert rows == 0


@pytest.mark.db("sqlite", reason="the round trip is the same SQL on both; one is enough")
async def test_a_note_survives_a_downgrade_and_upgrade(tmp_path: Path) -> None:
    url = _url(tmp_path)
    await migrate(url)
    until = utcnow().replace(microsecond=0) + timedelta(hours=1)
    async with opened(url) as engine:
        await SqlWorkspaceNotes(engine).note_workspace("T1", "stream_refused", "no", until=until)

    await asyncio.to_thread(command.downgrade, alembic_config(url), "0005_inbox_claims")
    with sqlite3.connect(tmp_path / "grace.db") as db:
        assert db.execute("SELECT run_id, channel_id, digest FROM message_refs").fetchall() == [
            ("team:T1", "T1", "no")
        ]
    await migrate(url)
    async with opened(url) as engine:
        note = await SqlWorkspaceNotes(engine).workspace_note("T1", "stream_refused")
    assert note == ("no", until)
