"""Workspace notes (storage/workspace_notes.py): a table of their own since 0006."""

from __future__ import annotations

from datetime import timedelta

from agent.schemas import utcnow
from storage.run_store import SqlRunStore


async def test_a_workspace_note_holds_until_it_expires(store: SqlRunStore) -> None:
    """E.g. "this workspace refused streaming": read back by another process until it
    expires; a newer note replaces it; it is nobody's run message."""
    now = utcnow()
    assert await store.workspace_note("T1", "stream_refused") is None
    await store.note_workspace(
        "T1",
        "stream_refused",
        "feature_not_enabled (HTTP 200) and more",
        until=now + timedelta(hours=1),
    )
    note = await store.workspace_note("T1", "stream_refused")
    assert note is not None and note[0] == "feature_not_enabled (HTTP 200) a"  # 32 characters
    assert now + timedelta(minutes=59) < note[1] <= now + timedelta(hours=1)
    assert await store.workspace_note("T1", "stream_refused", now=now + timedelta(hours=2)) is None
    assert await store.workspace_note("T2", "stream_refused") is None

    await store.note_workspace(
        "T1", "stream_refused", "not_allowed", until=now - timedelta(seconds=5)
    )
    assert await store.workspace_note("T1", "stream_refused") is None
    long_team = "E" + "9" * 80
    await store.note_workspace(long_team, "stream_refused", "x", until=now + timedelta(hours=1))
    assert (await store.workspace_note(long_team, "stream_refused") or ("", now))[0] == "x"
    assert await store.runs.list_runs(limit=5) == []
