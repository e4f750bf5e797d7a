"""`grace serve` with GRACE_KNOWLEDGE__SYNC_INTERVAL_MINUTES set: the served knowledge base
follows its folder without anybody running `grace sync` (the embedded index is held by
the server, so that is the only way to keep it current)."""

from __future__ import annotations

import json
from pathlib import Path

from agent.knowledge.qdrant_kb import open_knowledge_base
from bot.simulator.webapi import FakeSlack
from tests.durable.helpers import grace_env, grace_here_async
from tests.faults.helpers import serve_env, start_server, wait_until


def _synced(log: Path) -> list[dict[str, object]]:
    """The `knowledge_synced` lines the server logged so far."""
    lines = []
    for line in log.read_text(errors="replace").splitlines():
        if '"knowledge_synced"' in line:
            lines.append(json.loads(line))
    return lines


async def test_serve_syncs_its_sources_on_a_schedule(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "gadgets.md").write_text("# Gadgets\n\nThe gadget weighs 3 kilograms.\n")
    (docs / "parts.md").write_text("# Parts\n\nSpare parts ship within 5 days.\n")
    data = tmp_path / "data"
    code, _, err = await grace_here_async(grace_env(data), "ingest", str(docs))
    assert code == 0, err
    (docs / "gadgets.md").write_text("# Gadgets\n\nSince the redesign it weighs 4 kilograms.\n")
    (docs / "parts.md").unlink()

    log = tmp_path / "serve.log"
    async with FakeSlack() as fake:
        env = serve_env(data, fake, GRACE_KNOWLEDGE__SYNC_INTERVAL_MINUTES="0.01")
        env["GRACE_LOG_LEVEL"] = "INFO"  # the sync's summary line is at INFO
        server = await start_server(env, 0, log)
        try:
            await wait_until(lambda: bool(_synced(log)), within=60, what="a scheduled sync")
        finally:
            assert await server.stop() == 0, server.stderr()[-3000:]
    first = _synced(log)[0]
    assert (first["changed"], first["removed"], first["added"]) == (1, 1, 0)

    kb = open_knowledge_base(path=data / "qdrant", url=None)
    try:
        assert set(await kb.documents("grace_docs")) == {"gadgets.md"}
        found = await kb.search("How much does the gadget weigh?", limit=1)
        assert "4 kilograms" in found[0].text
    finally:
        await kb.close()
