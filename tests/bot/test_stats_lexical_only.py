"""Issue 23 point 5, the Slack half: `/grace stats` names a collection that has no dense
vectors although a dense model is now configured (ingested before it was), with the
command that fixes it, to an approver (who sees the workspace's figures); with no dense
model configured there is nothing to say."""

from __future__ import annotations

from pathlib import Path

from bot.simulator.webapi import FakeSlack

from .conftest import APPROVER, BotHarness, make_settings
from .test_commands import ephemeral_body, shown


async def _stats(fake: FakeSlack, data_dir: Path, embedder: str) -> str:
    settings = make_settings(data_dir, fake, [APPROVER]).model_copy(update={"embedder": embedder})
    harness = BotHarness(fake, settings)
    await harness.start()
    try:
        # the workspace's figures, and notes on its knowledge base, are for approvers
        return shown(ephemeral_body(await harness.command("stats", user=APPROVER)))
    finally:
        await harness.close()


async def test_stats_names_a_collection_searched_by_keywords_only(
    fake: FakeSlack, data_dir: Path
) -> None:
    text = await _stats(fake, data_dir, "use-m3")  # the sample was ingested offline
    assert "'grace_docs' has no dense vectors" in text
    assert "grace reembed --collection grace_docs" in text

    assert "dense vectors" not in await _stats(fake, data_dir, "auto")
