"""`grace sync` and `grace sources` as a person runs them, on a real knowledge base: a
folder ingested, then one document changed, one removed, one left alone; an older copy of
a document still known as one after the sync; a source listed and removed with its
chunks."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

from agent.knowledge.chunking import CHUNKING_VERSION
from agent.knowledge.qdrant_kb import StoredDocument, open_knowledge_base
from agent.knowledge.source_ingest import ingest_source
from agent.knowledge.sync import sync_all
from agent.schemas import Source
from bot.service.knowledge_sync import sync_forever, sync_once
from bot.service.settings import KnowledgeSettings, Settings
from bot.service.wiring import build_services
from storage.sources import SqlSourceCatalog
from tests.durable.helpers import grace_env, grace_here, wait_until


async def grace(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """`grace ARGS` in this process (in a thread: it runs its own event loop)."""
    return await asyncio.to_thread(grace_here, env, *args)


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


async def _stored(data_dir: Path) -> dict[str, StoredDocument]:
    """What the knowledge base holds, read after the command closed it."""
    kb = open_knowledge_base(path=data_dir / "qdrant", url=None)
    try:
        return await kb.documents("grace_docs")
    finally:
        await kb.close()


async def _search(data_dir: Path, query: str) -> list[Source]:
    kb = open_knowledge_base(path=data_dir / "qdrant", url=None)
    try:
        return await kb.search(query, limit=3)
    finally:
        await kb.close()


def _folder(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    _write(docs / "widgets.md", "# Widgets\n\nA blue widget costs 12 dollars.\n")
    _write(docs / "gadgets.md", "# Gadgets\n\nThe standard gadget weighs 3 kilograms.\n")
    _write(docs / "parts.md", "# Spare parts\n\nSpare parts ship within 5 working days.\n")
    _write(docs / "expenses.md", "# Expenses\n\nMeals are refunded up to 40 EUR a day.\n")
    _write(
        docs / "expenses_2021-03-01.md", "# Expenses\n\nMeals are refunded up to 25 EUR a day.\n"
    )
    return docs


async def test_sync_reindexes_the_changed_removes_the_gone_and_leaves_the_rest(
    tmp_path: Path,
) -> None:
    docs = _folder(tmp_path)
    data = tmp_path / "data"
    env = grace_env(data)

    done = await grace(env, "ingest", str(docs))
    assert done.returncode == 0, done.stderr
    assert "added       1 chunk from widgets.md" in done.stdout  # the usual per-file lines
    assert done.stdout.splitlines()[-1].startswith("Ingested 5 files (5 chunks) into")

    listed = await grace(env, "sources")
    assert listed.returncode == 0, listed.stderr
    header, row = listed.stdout.splitlines()
    assert header.split() == [
        *("ID", "KIND", "DOCS", "COLLECTION", "LAST", "SYNC", "(UTC)", "LOCATION")
    ]
    assert row.split()[1:4] == ["folder", "5", "grace_docs"]
    assert row.endswith(str(docs.resolve()))

    _write(docs / "gadgets.md", "# Gadgets\n\nSince the redesign the gadget weighs 4 kilograms.\n")
    (docs / "parts.md").unlink()
    # Not even opened: unreadable now, but its size and time say it did not change.
    os.chmod(docs / "widgets.md", 0o000)
    unreadable = os.geteuid() != 0  # root reads anything

    synced = await grace(env, "sync")
    os.chmod(docs / "widgets.md", 0o644)
    assert synced.returncode == 0, synced.stderr
    out = synced.stdout
    assert "changed gadgets.md (1 chunk)" in out
    assert "removed parts.md" in out
    assert "unchanged widgets.md" in out
    assert "unchanged expenses.md" in out
    assert "skipped" not in out.replace("0 skipped", "")
    assert out.splitlines()[-1] == (
        "Synced 1 source: 0 added, 1 changed, 1 removed, 3 unchanged, 0 skipped."
    )
    if unreadable:  # as any user but root: proof it was not read
        assert "widgets.md (" not in out

    stored = await _stored(data)
    assert set(stored) == {"widgets.md", "gadgets.md", "expenses.md", "expenses_2021-03-01.md"}
    assert stored["expenses_2021-03-01.md"].superseded_by == "expenses.md"
    assert stored["expenses.md"].superseded_by is None

    found = await _search(data, "How much does the gadget weigh?")
    assert found[0].source == "gadgets.md"
    assert "4 kilograms" in found[0].text
    assert "parts.md" not in [s.source for s in await _search(data, "spare parts ship")]
    meals = await _search(data, "How much are meals refunded?")
    assert {s.source: s.stale for s in meals} == {
        "expenses.md": False,
        "expenses_2021-03-01.md": True,
    }

    # A file touched but not changed is hashed, found the same, and not re-indexed.
    os.utime(docs / "gadgets.md", ns=(1_000_000_000, 1_000_000_000))
    again = await grace(env, "sync")
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines()[-1] == (
        "Synced 1 source: 0 added, 0 changed, 0 removed, 4 unchanged, 0 skipped."
    )

    # The living document goes: its dated copy is no longer an older copy of anything.
    (docs / "expenses.md").unlink()
    _write(docs / "tools.md", "# Tools\n\nThe torque wrench is kept in locker 7.\n")
    third = await grace(env, "sync")
    assert third.returncode == 0, third.stderr
    assert "added tools.md (1 chunk)" in third.stdout
    assert "removed expenses.md" in third.stdout
    stored = await _stored(data)
    assert "expenses.md" not in stored
    assert stored["expenses_2021-03-01.md"].superseded_by is None


async def test_a_removed_source_takes_its_chunks_with_it(tmp_path: Path) -> None:
    docs = _folder(tmp_path)
    single = _write(tmp_path / "faq.md", "# FAQ\n\nThe office opens at 8 am.\n")
    data = tmp_path / "data"
    env = grace_env(data)
    assert (await grace(env, "ingest", str(docs))).returncode == 0
    assert (await grace(env, "ingest", str(single))).returncode == 0

    rows = (await grace(env, "sources")).stdout.splitlines()[1:]
    assert [row.split()[1] for row in rows] == ["folder", "file"]
    folder_id = rows[0].split()[0]

    removed = await grace(env, "sources", "remove", folder_id)
    assert removed.returncode == 0, removed.stderr
    assert removed.stdout.strip() == (
        f"Removed source {folder_id} ({docs.resolve()}) and its 5 documents (5 chunks) "
        "from 'grace_docs'."
    )
    assert set(await _stored(data)) == {"faq.md"}
    rows = (await grace(env, "sources")).stdout.splitlines()[1:]
    assert [row.split()[1] for row in rows] == ["file"]

    by_path = await grace(env, "sources", "remove", str(single))
    assert by_path.returncode == 0, by_path.stderr
    assert "and its 1 document (1 chunks)" in by_path.stdout
    assert await _stored(data) == {}
    assert "No sources remembered yet" in (await grace(env, "sources")).stdout

    unknown = await grace(env, "sources", "remove", "nope")
    assert unknown.returncode == 2
    assert "no remembered source 'nope'" in unknown.stderr


async def test_a_missing_folder_is_left_alone(tmp_path: Path) -> None:
    """An unmounted drive must not empty the knowledge base."""
    docs = _folder(tmp_path)
    data = tmp_path / "data"
    env = grace_env(data)
    assert (await grace(env, "ingest", str(docs))).returncode == 0
    docs.rename(tmp_path / "elsewhere")
    synced = await grace(env, "sync")
    assert synced.returncode == 0, synced.stderr
    assert "is missing: its 5 document(s) were left in the knowledge base" in synced.stdout
    assert len(await _stored(data)) == 5


async def test_the_scheduled_sync_runs_on_its_trigger_on_one_replica(tmp_path: Path) -> None:
    """What `grace serve` runs with GRACE_KNOWLEDGE__SYNC_INTERVAL_MINUTES set, driven by
    its trigger instead of the clock; a second replica on the same lease skips the turn
    the first took."""
    docs = _folder(tmp_path)
    data = tmp_path / "data"
    assert (await grace(grace_env(data), "ingest", str(docs))).returncode == 0
    _write(docs / "gadgets.md", "# Gadgets\n\nSince the redesign the gadget weighs 4 kilograms.\n")

    settings = Settings(data_dir=data, knowledge=KnowledgeSettings(sync_interval_minutes=5))
    services = await build_services(settings)
    ticks: asyncio.Queue[None] = asyncio.Queue()
    waits: list[float] = []

    async def trigger(seconds: float) -> None:
        waits.append(seconds)
        await ticks.get()

    # The lease replicas sharing a Qdrant server take (the embedded index is one
    # process's own and needs none): given here to show that a second replica skips.
    lease = SqlSourceCatalog(services.engine)
    schedule = asyncio.create_task(sync_forever(services, 5, wait=trigger, lease=lease))
    try:
        await wait_until(lambda: len(waits) == 1, within=30, what="the schedule to start")
        assert waits == [300.0]
        ticks.put_nowait(None)
        await wait_until(lambda: len(waits) == 2, within=60, what="the first scheduled sync")
        found = await services.knowledge_base.search("How much does the gadget weigh?", limit=1)
        assert "4 kilograms" in found[0].text
        assert await sync_once(services, owner="another-replica", lease=lease) is None
        alone = await sync_once(services)  # its own index, no lease: syncs, finds nothing
        assert alone is not None and alone[0].changed == [] and alone[0].unchanged
    finally:
        schedule.cancel()
        await asyncio.gather(schedule, return_exceptions=True)
        await services.close()


async def test_sources_in_the_database_sync_the_same(tmp_path: Path) -> None:
    """With a Qdrant server the sources are in the database, so any replica syncs them:
    remembered through one catalog object, synced through another."""
    docs = _folder(tmp_path)
    services = await build_services(Settings(data_dir=tmp_path / "data"))
    try:
        kb = services.knowledge_base
        await ingest_source(kb, str(docs), catalog=SqlSourceCatalog(services.engine))
        (docs / "parts.md").unlink()
        _write(docs / "widgets.md", "# Widgets\n\nA blue widget now costs 15 dollars.\n")
        (report,) = await sync_all(kb, SqlSourceCatalog(services.engine))
        assert report.removed == ["parts.md"]
        assert [r.source for r in report.changed] == ["widgets.md"]
        assert sorted(report.unchanged) == ["expenses.md", "expenses_2021-03-01.md", "gadgets.md"]
        (again,) = await sync_all(kb, SqlSourceCatalog(services.engine))
        assert (again.added, again.changed, again.removed) == ([], [], [])
        assert len(again.unchanged) == 4
    finally:
        await services.close()


async def test_files_cut_by_an_older_chunker_are_read_again_once(tmp_path: Path) -> None:
    """A new GRACE may cut the same file into other chunks: a sync reads again every
    file whose memo names another chunker version (files stored before versions were
    kept name none), then leaves them alone."""
    docs = _folder(tmp_path)
    services = await build_services(Settings(data_dir=tmp_path / "data"))
    try:
        kb = services.knowledge_base
        catalog = SqlSourceCatalog(services.engine)
        await ingest_source(kb, str(docs), catalog=catalog)
        (source,) = await catalog.list()
        assert {memo.chunking for memo in source.files.values()} == {CHUNKING_VERSION}
        older = {
            key: memo.model_copy(update={"chunking": ""}) for key, memo in source.files.items()
        }
        await catalog.save(source.model_copy(update={"files": older}))

        (report,) = await sync_all(kb, catalog)
        assert sorted(r.source for r in report.changed) == sorted(
            memo.source for memo in source.files.values()
        )
        assert report.unchanged == [] and report.removed == []
        (source,) = await catalog.list()
        assert {memo.chunking for memo in source.files.values()} == {CHUNKING_VERSION}
        (again,) = await sync_all(kb, catalog)
        assert (again.added, again.changed, again.removed) == ([], [], [])
        assert len(again.unchanged) == 5
        hits = await kb.search("blue widget", limit=3)
        assert hits and hits[0].source == "widgets.md"
    finally:
        await services.close()
