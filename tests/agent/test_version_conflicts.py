"""Two versions of one document that disagree in words, not figures: the run answers from
the current version, names the older one as outdated, and is never SILENT. Real parts:
the offline model, real Qdrant local mode, real files ingested."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agent.knowledge.ingest import ingest_paths
from agent.knowledge.qdrant_kb import QdrantKnowledgeBase, open_knowledge_base
from agent.schemas import InterventionAction, InterventionLevel, RunStatus
from tests.agent.conftest import ASKER, OrchestratorFactory
from tests.agent.helpers import reply

OLD = """# Widget Community Charter, Version 1.1

## 6. Versions of the Charter

6.1. New Versions. Acme Widget Corporation ("Acme") may publish revised and/or new
versions of the Charter from time to time. Each version will be given a distinguishing
version number.

## 7. Meetings

Members meet once a year to review the Charter and elect the board.
"""

NEW = """# Widget Community Charter, Version 2.0

## 10. Versions of the Charter

Widget Foundation is the charter steward. No one other than the charter steward has the
right to modify or publish new versions of this Charter. Each version will be given a
distinguishing version number.

## 11. Meetings

Members meet once a year to review the Charter and elect the board.
"""

OTHER = """# Gadget Club Rules, Version 2.0

## Publishing

Gadget Makers Guild publishes the club's rule book and may publish new versions of the
rules when members ask for them.
"""

QUESTION = "who is allowed to publish new versions of the Widget Community Charter?"


@pytest.fixture
async def charter_kb(tmp_path: Path) -> AsyncIterator[QdrantKnowledgeBase]:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "charter-1.1.md").write_text(OLD, encoding="utf-8")
    (docs / "charter-2.0.md").write_text(NEW, encoding="utf-8")
    (docs / "gadget-rules.md").write_text(OTHER, encoding="utf-8")
    kb = open_knowledge_base(path=tmp_path / "charter-qdrant", url=None)
    try:
        await ingest_paths(kb, [docs])
        yield kb
    finally:
        await kb.close()


async def test_the_older_version_is_marked_by_its_version_number(
    charter_kb: QdrantKnowledgeBase,
) -> None:
    documents = await charter_kb.documents(charter_kb.default_collection)
    assert documents["charter-1.1.md"].superseded_by == "charter-2.0.md"
    assert documents["charter-2.0.md"].superseded_by is None
    assert documents["gadget-rules.md"].superseded_by is None  # another title: no version


async def test_versions_that_disagree_in_words_answer_from_the_current_one(
    charter_kb: QdrantKnowledgeBase, make_orchestrator: OrchestratorFactory
) -> None:
    orchestrator = make_orchestrator(knowledge_base=charter_kb)
    state = await orchestrator.start(QUESTION, asker=ASKER)

    assert state.level is not InterventionLevel.SILENT
    if state.status is RunStatus.PAUSED:
        state = await reply(orchestrator, state, InterventionAction.PROCEED)
    assert state.status is RunStatus.ANSWERED, (state.pending, state.error)
    assert state.level is not InterventionLevel.SILENT
    answer = state.final_answer
    lines = answer.split("\n")
    # The current version first, with the sentence that names its steward …
    assert lines[0].endswith("[Source: charter-2.0.md]")
    assert "Widget Foundation" in answer.split("⚠️")[0]
    # … then the older one, named as an older copy, with what it said.
    assert "⚠️ An older copy (charter-1.1.md) says instead" in answer
    assert "Acme Widget Corporation" in answer.split("⚠️")[1]
    assert answer.index("charter-2.0.md") < answer.index("charter-1.1.md")
    assert "gadget-rules.md" not in answer.split("⚠️")[1]
    assert state.overall_confidence is not None
    detail = state.step_results[max(state.step_results)].confidence_detail
    assert detail is not None and detail.breakdown.get("sources_conflict") == 1.0


async def test_a_document_that_is_no_version_is_not_called_older(
    charter_kb: QdrantKnowledgeBase, make_orchestrator: OrchestratorFactory
) -> None:
    orchestrator = make_orchestrator(knowledge_base=charter_kb)
    state = await orchestrator.start("who publishes the Gadget Club rule book?", asker=ASKER)
    if state.status is RunStatus.PAUSED:
        state = await reply(orchestrator, state, InterventionAction.PROCEED)
    assert "Gadget Makers Guild" in state.final_answer
    assert "⚠️" not in state.final_answer
