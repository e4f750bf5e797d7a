"""Durable runs through the real `grace` command.

A paused run must survive its process ending; a run killed mid-step must be finished by
the next process without redoing completed steps; unanswered questions must expire.
The process that ends (or is killed) is a real `grace` process; the next one is often
this test's own process running `grace` in-process (`grace_here`): a different process
all the same, without paying for another interpreter's start-up.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from agent.schemas import RunStatus
from bot.service.settings import Settings
from bot.service.wiring import build_services
from storage.db import make_engine
from storage.run_store import SqlRunStore
from tests.durable.helpers import (
    GRACE,
    audit_trail,
    grace_env,
    grace_here,
    grace_here_async,
    run_grace,
)
from tests.fakes.fake_gemini import (
    BATCH_EMBED,
    GENERATE,
    CannedResponse,
    FakeGemini,
    RecordedRequest,
    generate_body,
)


def test_paused_run_survives_the_process_and_resumes_in_another(
    data_dir: Path, fresh_db_url: str
) -> None:
    env = grace_env(data_dir, GRACE_DATABASE_URL=fresh_db_url)

    first = run_grace(env, "ask", "What is the latest version?", "--no-input", "--json")
    assert first.returncode == 0, first.stderr
    paused = json.loads(first.stdout)
    assert paused["status"] == "paused"
    assert paused["pending"]["kind"] == "ask_user"
    run_id = paused["run_id"]

    listing = grace_here(env, "runs", "--status", "paused")
    assert run_id in listing.stdout

    resumed = grace_here(
        env, "resume", run_id, "--action", "input", "--text", "Beacon Server", "--json"
    )
    assert resumed.returncode == 0, resumed.stderr
    answer = json.loads(resumed.stdout)
    assert answer["run_id"] == run_id
    assert answer["status"] == "answered"
    assert "4.2" in answer["answer"]
    assert answer["sources"] == ["product-faq.csv"]

    shown = json.loads(grace_here(env, "show", run_id, "--json").stdout)
    assert shown == answer

    trail = asyncio.run(audit_trail(fresh_db_url, run_id))
    assert trail[:3] == ["run_started", "plan_created", "intervention_requested"]
    assert "intervention_answered" in trail
    assert trail.count("step_started") >= 2
    assert trail[-1] == "answer_ready"

    again = grace_here(env, "resume", run_id, "--action", "proceed")
    assert again.returncode == 2
    assert "not waiting for an answer" in again.stderr


def _is_reasoning(request: RecordedRequest) -> bool:
    return request.route == GENERATE and "careful assistant" in json.dumps(request.body)


async def test_a_run_killed_mid_step_is_recovered_without_redoing_completed_steps(
    data_dir: Path, fresh_db_url: str
) -> None:
    url = fresh_db_url
    async with FakeGemini() as fake:
        env = grace_env(
            data_dir,
            **fake.grace_env(),
            GRACE_DATABASE_URL=url,
            GRACE_KNOWLEDGE__COLLECTION="gemini_docs",
            GRACE_INTERVENTION__PAUSE_ON_CONFIRM="false",  # fake embeddings score modestly
        )
        code, out, err = await grace_here_async(
            env, "ingest", str(Path("agent/sample_kb/vacation-policy.md"))
        )
        assert code == 0, err
        plan = {
            "complexity": 0.3,
            "steps": [
                {"step_id": 1, "action": "rag_search", "description": "search",
                 "query": "vacation days new employees", "depends_on": []},
                {"step_id": 2, "action": "reasoning", "description": "answer",
                 "depends_on": [1]},
            ],
        }  # fmt: skip
        fake.reply_json(plan)
        # The first process hangs in the reasoning step until it is killed.
        fake.enqueue(GENERATE, CannedResponse(generate_body("too late"), delay=60))
        process = await asyncio.create_subprocess_exec(
            *GRACE, "ask", "How many vacation days do new employees get?", "--no-input",
            "--json", env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while not any(_is_reasoning(r) for r in fake.requests):
            assert time.monotonic() < deadline, "the reasoning step never started"
            assert process.returncode is None
            await asyncio.sleep(0.05)
        searches_before = len(fake.calls(BATCH_EMBED))
        os.kill(process.pid, signal.SIGKILL)
        await process.wait()

        engine = make_engine(url)
        store = SqlRunStore(engine)
        running = await store.runs_with_status(RunStatus.RUNNING)
        await engine.dispose()
        assert len(running) == 1
        stuck = running[0]
        assert stuck.step_results[1].status.value == "success"
        assert stuck.step_results[2].status.value == "running"

        fake.reset()
        fake.reply_text("New employees get 15 days of paid vacation. [Source: vacation-policy.md]")
        fake.reply_json({"self_eval": 0.9, "coverage": 0.9, "rationale": "grounded"})
        code, out, err = await grace_here_async(env, "recover")  # the next process: this one
        assert code == 0, err
        assert f"{stuck.run_id}: answered" in out

        plan_calls = [r for r in fake.calls(GENERATE) if "step_id" in json.dumps(r.body)]
        assert plan_calls == [], "the plan must not be made again"
        assert len(fake.calls(BATCH_EMBED)) == 0, "the completed search must not run again"
        assert searches_before >= 1

        code, out, err = await grace_here_async(env, "show", stuck.run_id, "--json")
        shown: dict[str, Any] = json.loads(out)
        assert shown["status"] == "answered"
        assert "15 days" in shown["answer"]
        assert [s["status"] for s in shown["plan"]["steps"]] == ["success", "success"]


@pytest.mark.parametrize(
    ("auto_proceed", "expected"), [("false", "cancelled"), ("true", "answered")]
)
def test_unanswered_questions_expire_and_the_sweeper_applies_the_policy(
    data_dir: Path, fresh_db_url: str, auto_proceed: str, expected: str
) -> None:
    env = grace_env(
        data_dir,
        GRACE_DATABASE_URL=fresh_db_url,
        GRACE_INTERVENTION__EXPIRY_HOURS="0.0001",  # 0.36 s
        GRACE_INTERVENTION__AUTO_PROCEED_ON_TIMEOUT=auto_proceed,
    )
    asked = grace_here(env, "ask", "What is the latest version?", "--no-input", "--json")
    run_id = json.loads(asked.stdout)["run_id"]
    time.sleep(0.5)

    swept = grace_here(env, "sweep")
    assert swept.returncode == 0, swept.stderr
    assert f"{run_id}: intervention" in swept.stdout
    assert swept.stdout.strip().endswith(expected)

    shown = json.loads(grace_here(env, "show", run_id, "--json").stdout)
    assert shown["status"] == expected
    assert shown["interventions"][0]["status"] == "expired"
    if expected == "cancelled":
        assert "no answer within" in shown["error"]
    assert "nothing expired" in grace_here(env, "sweep").stdout


async def answered_runs(data_dir: Path, url: str, count: int) -> list[str]:
    """Confident answers, made in this process (quicker than ten `grace ask` processes)."""
    services = await build_services(Settings(data_dir=data_dir, database_url=url))
    try:
        run_ids = []
        for _ in range(count):
            state = await services.orchestrator.start(
                "How many vacation days do new employees get?"
            )
            assert state.overall_confidence is not None and state.overall_confidence > 0.7
            run_ids.append(state.run_id)
        return run_ids
    finally:
        await services.close()


def test_feedback_moves_thresholds_and_they_survive_a_restart(
    data_dir: Path, fresh_db_url: str
) -> None:
    # one person votes here: a one-person install's quorum (issue 22 needs 3 by default)
    env = grace_env(data_dir, GRACE_DATABASE_URL=fresh_db_url, GRACE_FEEDBACK__QUORUM="1")
    assert grace_here(env, "thresholds").stdout.strip() == "silent 0.90  notify 0.70  confirm 0.40"
    run_ids = asyncio.run(answered_runs(data_dir, fresh_db_url, 10))
    messages = [grace_here(env, "feedback", run_id, "down").stdout for run_id in run_ids]
    assert "raised" in messages[-1]
    # A fresh process reads the learned thresholds from the database.
    assert run_grace(env, "thresholds").stdout.strip() == "silent 0.95  notify 0.75  confirm 0.45"
