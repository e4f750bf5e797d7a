"""Slack message references (storage/message_refs.py)."""

from __future__ import annotations

from storage.run_store import SqlRunStore


async def test_message_refs(store: SqlRunStore) -> None:
    await store.set_message_ref(run_id="r1", kind="plan", channel_id="C1", ts="1.0001")
    await store.set_message_ref(run_id="r1", kind="answer", channel_id="C1", ts="1.0002")
    await store.set_message_ref(run_id="r1", kind="plan", channel_id="C1", ts="1.0003")

    assert await store.get_message_ref(run_id="r1", kind="plan") == ("C1", "1.0003")
    assert await store.get_message_ref(run_id="r1", kind="intervention:x") is None
    assert await store.message_refs("r1") == {"plan": ("C1", "1.0003"), "answer": ("C1", "1.0002")}
    assert await store.message_refs("r2") == {}
