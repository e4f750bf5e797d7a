"""Exactly-once resumption and many concurrent runs on one database, through the real
orchestrator, offline model, Qdrant local mode and SQL store."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import func, select

from agent.knowledge.ingest import SAMPLE_KB_DIR, ingest_paths
from agent.knowledge.lexical import HashingEmbedder
from agent.knowledge.qdrant_kb import QdrantKnowledgeBase, open_knowledge_base
from agent.llm.offline import OfflineModel
from agent.orchestrator import Orchestrator
from agent.schemas import InterventionAction, InterventionAnswer, RunStatus
from storage.db import make_engine, migrate
from storage.ledger import SqlUsageLedger
from storage.run_store import SqlRunStore
from storage.tables import RunEventRow, RunRow, UsageRow


@pytest.fixture
async def knowledge_base(tmp_path: Path) -> AsyncIterator[QdrantKnowledgeBase]:
    kb = open_knowledge_base(path=tmp_path / "qdrant", url=None)
    await ingest_paths(kb, [SAMPLE_KB_DIR])
    yield kb
    await kb.close()


@pytest.fixture
async def database_url(fresh_db_url: str) -> str:
    await migrate(fresh_db_url)
    return fresh_db_url


def orchestrator_for(url: str, kb: QdrantKnowledgeBase) -> tuple[Orchestrator, SqlRunStore]:
    """One 'process': its own engine on the shared database file."""
    engine = make_engine(url)
    store = SqlRunStore(engine)
    orchestrator = Orchestrator(
        llm=OfflineModel(),
        knowledge_base=kb,
        store=store,
        embedder=HashingEmbedder(),
        ledger=SqlUsageLedger(engine),
    )
    return orchestrator, store


async def test_twenty_concurrent_answers_resume_the_run_exactly_once(
    database_url: str, knowledge_base: QdrantKnowledgeBase
) -> None:
    first, store = orchestrator_for(database_url, knowledge_base)
    paused = await first.start("What is the latest version?", asker="U1")
    assert paused.status is RunStatus.PAUSED and paused.pending is not None
    intervention_id = paused.pending.intervention_id

    replicas = [orchestrator_for(database_url, knowledge_base) for _ in range(4)]
    outcomes = await asyncio.gather(
        *(
            replicas[i % 4][0].answer(
                paused.run_id,
                intervention_id,
                InterventionAnswer(
                    action=InterventionAction.INPUT, text="Beacon Server", user="U1"
                ),
            )
            for i in range(20)
        )
    )
    winners = [o for o in outcomes if o.claimed]
    losers = [o for o in outcomes if not o.claimed]
    assert len(winners) == 1
    assert len(losers) == 19
    assert all(o.answered_by == "U1" and "already answered by U1" in o.reason for o in losers)

    final = await store.load(paused.run_id)
    assert final is not None and final.status is RunStatus.ANSWERED
    events = [e.event_type for e in await store.events(paused.run_id)]
    assert events.count("intervention_answered") == 1
    assert events.count("step_started") == 2  # the search and the reasoning, once each
    assert events.count("answer_ready") == 1
    for _, replica_store in [(first, store), *replicas]:
        await replica_store.engine.dispose()


async def test_fifty_concurrent_runs_on_one_database_lose_nothing(
    database_url: str, knowledge_base: QdrantKnowledgeBase
) -> None:
    replicas = [orchestrator_for(database_url, knowledge_base) for _ in range(5)]
    questions = [
        "How many vacation days do new employees get?",
        "What is the meal expense limit per day?",
        "How long must my password be?",
        "経費精算の締め切りはいつですか？",
        "What is the latest version?",
    ]
    states = await asyncio.gather(
        *(replicas[i % 5][0].start(questions[i % 5], asker=f"U{i}") for i in range(50))
    )
    assert len({s.run_id for s in states}) == 50
    answered = [s for s in states if s.status is RunStatus.ANSWERED]
    paused = [s for s in states if s.status is RunStatus.PAUSED]
    assert len(answered) == 40 and len(paused) == 10  # the ambiguous one asks every time

    engine = replicas[0][1].engine
    async with engine.connect() as connection:
        runs = await connection.scalar(select(func.count()).select_from(RunRow))
        statuses = dict(
            (
                await connection.execute(
                    select(RunRow.status, func.count()).group_by(RunRow.status)
                )
            ).all()
        )
        events = await connection.scalar(select(func.count()).select_from(RunEventRow))
        ledger_calls = await connection.scalar(select(func.sum(UsageRow.calls)))
    assert runs == 50
    assert statuses == {"answered": 40, "paused": 10}
    # answered: started, plan, 2 × (step started, step finished), answer = 7 transitions;
    # paused on the ambiguous question: started, plan, question = 3.
    assert events == 40 * 7 + 10 * 3
    assert ledger_calls == sum(s.token_usage.calls for s in states)
    for _, store in replicas:
        await store.engine.dispose()
