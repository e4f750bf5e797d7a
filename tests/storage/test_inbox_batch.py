"""A burst's inbox write is one statement: the ack of every event in the batch waits for
it, so its cost must not grow with one round trip per row (issue 23: 416 ms p50 for a
burst of 200 when each row had its own INSERT). Counted on the real engine, not timed."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine

from storage.inbox import InboxItem, SqlInbox

BURST = 200


def _item(n: int, *, message: int | None = None) -> InboxItem:
    return InboxItem(
        event_id=f"Ev{n:04d}",
        kind="question",
        message_key=f"T1:C1:{n if message is None else message}.000100",
        payload={"text": f"question {n}"},
    )


@contextmanager
def inbox_statements(engine: AsyncEngine) -> Iterator[list[str]]:
    """The SQL statements that touch the inbox table, as the driver receives them."""
    seen: list[str] = []

    def record(*args: Any) -> None:
        statement = str(args[2])
        if "inbox" in statement.lower():
            seen.append(statement)

    event.listen(engine.sync_engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(engine.sync_engine, "before_cursor_execute", record)


async def test_a_burst_is_stored_with_one_insert_whatever_its_duplicates(
    engine: AsyncEngine,
) -> None:
    inbox = SqlInbox(engine)
    with inbox_statements(engine) as statements:
        first = await inbox.add([_item(n) for n in range(BURST)])
    assert len(statements) == 1 and statements[0].lstrip().upper().startswith("INSERT")
    assert all(i is not None for i in first) and len(set(first)) == BURST

    # Slack's retries of half the burst (same event ids), the same messages under new
    # event ids, a repeat inside the batch, and new events: still one statement.
    retries = [_item(n) for n in range(0, BURST, 2)]
    same_messages = [_item(1000 + n, message=n) for n in range(1, 21)]
    new = [_item(n) for n in range(BURST, BURST + 50)]
    repeat = [_item(BURST)]
    with inbox_statements(engine) as statements:
        second = await inbox.add(retries + same_messages + new + repeat)
    assert len(statements) == 1
    assert second[: len(retries) + len(same_messages)] == [None] * (
        len(retries) + len(same_messages)
    )
    fresh = second[len(retries) + len(same_messages) : -1]
    assert all(i is not None for i in fresh) and len(set(fresh)) == len(new)
    assert second[-1] is None, "the repeat inside the batch is stored once"
    pending = await inbox.pending(limit=1000)
    assert len(pending) == BURST + len(new)
    assert {e.id: e.event_id for e in pending}[fresh[0]] == new[0].event_id  # type: ignore[index]
