"""Shared fixtures: the real sample knowledge base in real Qdrant local mode, the real
offline model, the in-memory run store, and a factory for orchestrators.

The sample KB is ingested once per session into a template directory; every test gets
its own copy, because a Qdrant local directory may be opened by one client at a time."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest

from agent.config import AgentConfig
from agent.knowledge.ingest import SAMPLE_KB_DIR, ingest_paths
from agent.knowledge.lexical import HashingEmbedder
from agent.knowledge.qdrant_kb import QdrantKnowledgeBase, open_knowledge_base
from agent.llm.offline import OfflineModel
from agent.memory_store import InMemoryRunStore
from agent.orchestrator import Orchestrator
from agent.ports import (
    Embedder,
    KnowledgeBase,
    LanguageModel,
    RunObserver,
    UsageLedger,
    WebSearchProvider,
)
from tests.agent.doubles import ScriptedModel
from tests.shared_dirs import built_once

ASKER = "U_ASKER"


async def _build_template(path: Path) -> int:
    kb = open_knowledge_base(path=path, url=None)
    try:
        reports = await ingest_paths(kb, [SAMPLE_KB_DIR])
        return sum(r.chunks for r in reports)
    finally:
        await kb.close()


@pytest.fixture(scope="session")
def sample_kb_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped sample KB ingested once (sparse-only, as offline mode runs it)."""

    def build(root: Path) -> None:
        chunks = asyncio.run(_build_template(root / "qdrant"))
        assert chunks > 20, f"the sample KB produced only {chunks} chunks"

    return built_once(tmp_path_factory, "sample_kb", build) / "qdrant"


@pytest.fixture
async def kb(sample_kb_template: Path, tmp_path: Path) -> AsyncIterator[QdrantKnowledgeBase]:
    """A private copy of the ingested sample KB, opened with a real local Qdrant client."""
    path = tmp_path / "qdrant"
    shutil.copytree(sample_kb_template, path)
    base = open_knowledge_base(path=path, url=None)
    try:
        yield base
    finally:
        await base.close()


@pytest.fixture
def store() -> InMemoryRunStore:
    return InMemoryRunStore()


class OrchestratorFactory:
    """Builds an orchestrator on the real parts; any of them can be replaced by a double."""

    def __init__(self, kb: QdrantKnowledgeBase, store: InMemoryRunStore) -> None:
        self._kb = kb
        self._store = store

    def __call__(
        self,
        *,
        llm: LanguageModel | None = None,
        knowledge_base: KnowledgeBase | None = None,
        config: AgentConfig | None = None,
        web_search: WebSearchProvider | None = None,
        ledger: UsageLedger | None = None,
        observers: Sequence[RunObserver] = (),
        approvers: Sequence[str] = (),
        embedder: Embedder | None = None,
    ) -> Orchestrator:
        return Orchestrator(
            llm=llm or OfflineModel(),
            knowledge_base=knowledge_base or self._kb,
            store=self._store,
            embedder=embedder or HashingEmbedder(),
            config=config,
            web_search=web_search,
            ledger=ledger,
            observers=observers,
            approvers=approvers,
        )


@pytest.fixture
def make_orchestrator(kb: QdrantKnowledgeBase, store: InMemoryRunStore) -> OrchestratorFactory:
    """Orchestrators on this test's knowledge base and store."""
    return OrchestratorFactory(kb, store)


@pytest.fixture
def orchestrator(make_orchestrator: OrchestratorFactory) -> Orchestrator:
    """The agent as offline mode wires it: offline model, real Qdrant, in-memory store."""
    return make_orchestrator()


@pytest.fixture
def spy() -> ScriptedModel:
    """The offline planner and answerer, recording what reaches them."""
    return ScriptedModel()


@pytest.fixture
def spied(make_orchestrator: OrchestratorFactory, spy: ScriptedModel) -> Orchestrator:
    """The offline agent with `spy` as its model."""
    return make_orchestrator(llm=spy)
