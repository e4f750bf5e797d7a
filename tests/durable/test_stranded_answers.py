"""A process that claimed a question (the answer is recorded, exactly once) and died
before moving the run on leaves the run paused on an answered question — no later click
can resume it. The next `grace recover` (or the bot's sweeper) acts on the recorded
answer or expiry, exactly once however many replicas try."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta
from pathlib import Path

from agent.config import AgentConfig, ExecutionConfig
from agent.knowledge.lexical import HashingEmbedder
from agent.knowledge.qdrant_kb import open_knowledge_base
from agent.llm.offline import OfflineModel
from agent.orchestrator import Orchestrator
from agent.schemas import InterventionAction, InterventionAnswer, RunStatus, utcnow
from storage.db import make_engine
from storage.run_store import SqlRunStore
from tests.durable.helpers import (
    audit_trail,
    grace_env,
    grace_here,
    grace_here_async,
    wait_until,
)

LATEST_Q = "What is the latest version?"  # the offline planner asks which product
LEASE_S = 0.5


async def _wait_for(url: str, what: str, *, stranded: bool, run_id: str) -> None:
    """Wait until the store lists the run's question as past its deadline (`stranded`
    False) or as claimed a lease ago by a process now taken for dead (True)."""
    engine = make_engine(url)
    try:
        store = SqlRunStore(engine)

        async def listed() -> bool:
            if stranded:
                found = await store.stranded_interventions(utcnow() - timedelta(seconds=LEASE_S))
            else:
                found = await store.due_interventions(utcnow())
            return run_id in {request.run_id for request in found}

        await wait_until(listed, within=60, what=what)
    finally:
        await engine.dispose()


async def _claim_and_die(url: str, run_id: str, *, expire: bool = False) -> str:
    """What the dying process got done: its claim, nothing after it."""
    engine = make_engine(url)
    try:
        store = SqlRunStore(engine)
        state = await store.load(run_id)
        assert state is not None and state.pending is not None
        intervention_id = state.pending.intervention_id
        if expire:
            assert await store.claim_expiry(intervention_id=intervention_id, now=utcnow())
        else:
            answer = InterventionAnswer(
                action=InterventionAction.INPUT, text="Beacon Server", user="U_ALICE"
            )
            assert (await store.claim_intervention(run_id, intervention_id, answer)).claimed
        return intervention_id
    finally:
        await engine.dispose()


def test_an_answer_claimed_by_a_process_that_died_is_acted_on_by_grace_recover(
    data_dir: Path, fresh_db_url: str
) -> None:
    env = grace_env(
        data_dir, GRACE_DATABASE_URL=fresh_db_url, GRACE_EXECUTION__LEASE_SECONDS=str(LEASE_S)
    )
    asked = grace_here(env, "ask", LATEST_Q, "--no-input", "--json")
    run_id = json.loads(asked.stdout)["run_id"]
    url = fresh_db_url
    asyncio.run(_claim_and_die(url, run_id))
    # the claim is a lease old: only then is its process taken for dead
    asyncio.run(_wait_for(url, "a stranded answer", stranded=True, run_id=run_id))

    stuck = grace_here(env, "resume", run_id, "--action", "input", "--text", "Other")
    assert stuck.returncode == 2  # not waiting: bad input, as for an answered run
    assert "already answered by U_ALICE" in stuck.stderr
    recovered = grace_here(env, "recover")

    assert recovered.returncode == 0, recovered.stderr
    assert f"{run_id}: answered question → answered" in recovered.stdout
    shown = json.loads(grace_here(env, "show", run_id, "--json").stdout)
    assert shown["status"] == "answered"
    assert "4.2" in shown["answer"], "the recorded answer (Beacon Server) was used"
    trail = asyncio.run(audit_trail(url, run_id))
    assert trail.count("intervention_answered") == 1
    assert trail[-1] == "answer_ready"
    assert "nothing to recover" in grace_here(env, "recover").stdout


def test_an_expiry_claimed_by_a_process_that_died_is_applied(
    data_dir: Path, fresh_db_url: str
) -> None:
    env = grace_env(
        data_dir,
        GRACE_DATABASE_URL=fresh_db_url,
        GRACE_EXECUTION__LEASE_SECONDS=str(LEASE_S),
        GRACE_INTERVENTION__EXPIRY_HOURS="0.0001",  # 0.36 s
    )
    run_id = json.loads(grace_here(env, "ask", LATEST_Q, "--no-input", "--json").stdout)["run_id"]
    # the question is past its deadline; a sweeper claims its expiry, and dies
    asyncio.run(_wait_for(fresh_db_url, "an expired question", stranded=False, run_id=run_id))
    asyncio.run(_claim_and_die(fresh_db_url, run_id, expire=True))
    # the claim is a lease old: only then is its process taken for dead
    asyncio.run(_wait_for(fresh_db_url, "a stranded expiry", stranded=True, run_id=run_id))

    recovered = grace_here(env, "recover")

    assert f"{run_id}: expired question → cancelled" in recovered.stdout, recovered.stdout
    shown = json.loads(grace_here(env, "show", run_id, "--json").stdout)
    assert shown["status"] == "cancelled"


async def test_of_four_replicas_finishing_one_stranded_answer_exactly_one_does(
    data_dir: Path, fresh_db_url: str
) -> None:
    env = grace_env(data_dir, GRACE_DATABASE_URL=fresh_db_url)
    code, out, err = await grace_here_async(env, "ask", LATEST_Q, "--no-input", "--json")
    assert code == 0, err
    run_id = json.loads(out)["run_id"]
    url = fresh_db_url
    intervention_id = await _claim_and_die(url, run_id)

    kb = open_knowledge_base(path=data_dir / "qdrant", url=None)
    engines = [make_engine(url) for _ in range(4)]
    try:
        replicas = [
            Orchestrator(
                llm=OfflineModel(),
                knowledge_base=kb,
                store=SqlRunStore(engine),
                embedder=HashingEmbedder(),
                config=AgentConfig(execution=ExecutionConfig(lease_seconds=0.5)),
            )
            for engine in engines
        ]
        outcomes = await asyncio.gather(
            *(r.finish_stranded(run_id, intervention_id) for r in replicas)
        )
    finally:
        for engine in engines:
            await engine.dispose()
        await kb.close()

    assert any(state is not None for state in outcomes)
    engine = make_engine(url)
    try:
        stored = await SqlRunStore(engine).load(run_id)
    finally:
        await engine.dispose()
    assert stored is not None and stored.status is RunStatus.ANSWERED
    trail = await audit_trail(url, run_id)
    assert trail.count("intervention_answered") == 1, trail
    assert trail.count("answer_ready") == 1, trail
