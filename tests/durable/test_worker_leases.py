"""Two `grace` processes on one database, as two replicas would be: a run is driven by
one worker at a time. A live worker keeps its run however slow its step; a worker that
went silent (here: SIGSTOP, as a frozen VM or a long pause would) loses it once its lease
runs out, and when it wakes up it writes nothing — the thread hears one answer.

The worker is a real `grace ask` process (it is stopped and woken); the other replica
is this test's own process running `grace recover` and `grace show` in-process
(`grace_here`). Each has its own data directory (Qdrant local mode allows one process per
directory; replicas would share a Qdrant server) and both share GRACE_DATABASE_URL.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from agent.schemas import utcnow
from tests.durable.helpers import (
    GRACE,
    audit_trail,
    copy_data_dir,
    grace_env,
    grace_here_async,
    only_lease,
    wait_until,
)
from tests.fakes.fake_gemini import GENERATE, CannedResponse, FakeGemini, generate_body
from tests.fakes.vacation_run import QUESTION

ANSWER = "New employees get 15 days of paid vacation. [Source: vacation-policy.md]"
EVALUATION = {"self_eval": 0.9, "coverage": 0.9, "rationale": "grounded"}
PLAN = {
    "complexity": 0.3,
    "steps": [
        {"step_id": 1, "action": "rag_search", "description": "search",
         "query": "vacation days new employees", "depends_on": []},
        {"step_id": 2, "action": "reasoning", "description": "answer", "depends_on": [1]},
    ],
}  # fmt: skip


LEASE_S = 2


def _reasoning_calls(fake: FakeGemini) -> int:
    return sum("careful assistant" in json.dumps(r.body) for r in fake.calls(GENERATE))


class Replicas(NamedTuple):
    """A fake Gemini, two processes' environments with a two-second lease, and the
    database URL they share."""

    fake: FakeGemini
    env_a: dict[str, str]
    env_b: dict[str, str]
    url: str


@pytest.fixture
async def replicas(
    sample_data_dir: Path, tmp_path: Path, fresh_db_url: str
) -> AsyncIterator[Replicas]:
    async with FakeGemini() as fake:
        envs = []
        for name in ("replica-a", "replica-b"):
            env = grace_env(
                copy_data_dir(sample_data_dir, tmp_path / name),
                **fake.grace_env(),
                # the slow reasoning call lasts as long as the test needs — on a starved
                # machine (a parallel test run) `grace recover` and `grace show` may take a
                # minute or more meanwhile: no call, step or run deadline cuts it
                GRACE_LLM__TIMEOUT_SECONDS="600",
                GRACE_LLM__CALL_DEADLINE_SECONDS="600",
                GRACE_EXECUTION__DEFAULT_STEP_TIMEOUT="600",
                GRACE_EXECUTION__RUN_DEADLINE_SECONDS="1200",
                GRACE_DATABASE_URL=fresh_db_url,
                GRACE_KNOWLEDGE__COLLECTION="gemini_docs",
                GRACE_INTERVENTION__PAUSE_ON_CONFIRM="false",
                GRACE_EXECUTION__LEASE_SECONDS=str(LEASE_S),  # renewed every 0.5 s
            )
            code, _, err = await grace_here_async(
                env, "ingest", "agent/sample_kb/vacation-policy.md"
            )
            assert code == 0, err
            envs.append(env)
        yield Replicas(fake, envs[0], envs[1], fresh_db_url)


async def _ask_until_reasoning(
    fake: FakeGemini, env: dict[str, str], reasoning: CannedResponse
) -> asyncio.subprocess.Process:
    """Start `grace ask` on the scripted plan and return once its reasoning step has
    reached the model, which answers it with `reasoning`."""
    fake.reset()
    fake.reply_json(PLAN)
    fake.enqueue(GENERATE, reasoning)
    process = await asyncio.create_subprocess_exec(
        *GRACE, "ask", QUESTION, "--no-input", "--json", env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    deadline = time.monotonic() + 180
    while _reasoning_calls(fake) == 0:
        assert time.monotonic() < deadline, "the reasoning step never started"
        assert process.returncode is None
        await asyncio.sleep(0.05)
    return process


async def _finish(process: asyncio.subprocess.Process) -> tuple[int, dict[str, Any], str]:
    out, err = await asyncio.wait_for(process.communicate(), timeout=180)
    return process.returncode or 0, json.loads(out), err.decode()


async def test_a_live_worker_keeps_its_run_while_another_process_recovers(
    replicas: Replicas,
) -> None:
    fake, env_a, env_b, url = replicas
    slow_step = asyncio.Event()  # the reasoning call lasts until the test lets it end
    reasoning = CannedResponse(generate_body(ANSWER), hold=slow_step)
    worker = await _ask_until_reasoning(fake, env_a, reasoning)
    fake.reply_json(EVALUATION)
    try:
        first = await only_lease(url)
        assert first is not None, "the worker holds a lease"

        async def outlived_twice() -> bool:  # only the worker's renewals keep the run
            lease = await only_lease(url)
            now = utcnow()
            return now > first + timedelta(seconds=LEASE_S) and lease is not None and lease > now

        await wait_until(outlived_twice, within=120, what="two leases kept by renewals")

        code, out, err = await grace_here_async(env_b, "recover")

        assert code == 0, err
        assert "still running in" in out and "left alone" in out, out
        run_id = out.split(":", 1)[0]
        code, shown, err = await grace_here_async(env_b, "show", run_id)
        assert code == 0, err
        assert "Worker: " in shown and "lease until" in shown, shown
    finally:
        slow_step.set()
    code, answered, err = await _finish(worker)
    assert code == 0, err
    assert answered["status"] == "answered"
    assert "15 days" in answered["answer"]
    assert _reasoning_calls(fake) == 1, "the slow step ran twice"


async def test_a_frozen_worker_loses_its_run_and_writes_nothing_when_it_wakes(
    replicas: Replicas,
) -> None:
    fake, env_a, env_b, url = replicas
    late = asyncio.Event()  # its reasoning call answers only once it has woken up
    reasoning = CannedResponse(generate_body("a late answer"), hold=late)
    frozen = await _ask_until_reasoning(fake, env_a, reasoning)
    os.kill(frozen.pid, signal.SIGSTOP)
    try:
        lease = await only_lease(url)
        assert lease is not None, "the worker held a lease"

        async def ran_out() -> bool:  # frozen: nobody renewed it
            return utcnow() > lease and await only_lease(url) == lease

        await wait_until(ran_out, within=60, what="the frozen worker's lease to run out")
        fake.reply_text(ANSWER)
        fake.reply_json(EVALUATION)

        code, out, err = await grace_here_async(env_b, "recover")

        assert code == 0, err
        run_id = out.split(":", 1)[0]
        assert f"{run_id}: answered" in out, out
    finally:
        os.kill(frozen.pid, signal.SIGCONT)
        late.set()
    code, woken, err = await _finish(frozen)

    assert code == 0, err
    assert "Traceback" not in err, err[-3000:]
    assert woken["run_id"] == run_id
    assert woken["status"] == "answered"
    assert "15 days" in woken["answer"], "the woken worker reports the stored answer"
    code, shown, err = await grace_here_async(env_b, "show", run_id, "--json")
    assert "15 days" in json.loads(shown)["answer"]
    trail = await audit_trail(url, run_id)
    assert trail.count("answer_ready") == 1, trail
    assert trail.count("run_recovered") == 1, trail
    assert trail.index("run_recovered") < trail.index("answer_ready")
