"""`grace ask` as a person runs it: the JSON contract on every status, clear errors with
the right exit codes, and the interactive prompts on a real terminal."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pexpect
import pytest

from tests.durable.helpers import GRACE, copy_data_dir, grace_env, grace_here, grace_here_async
from tests.fakes.fake_gemini import FakeGemini

RUN_KEYS = {
    "run_id", "status", "question", "answer", "sources", "overall_confidence", "level",
    "breakdown", "model", "plan", "pending", "interventions", "replans", "llm_calls",
    "token_usage", "cost_usd", "error",
}  # fmt: skip
STEP_KEYS = {
    "step_id", "action", "description", "depends_on", "status", "confidence", "level",
    "breakdown", "penalties", "error",
}  # fmt: skip


@pytest.fixture
def env(sample_data_dir: Path, tmp_path: Path) -> Iterator[dict[str, str]]:
    """A copy of the data dir `grace ingest --sample` made once (tests/durable/conftest.py)."""
    yield grace_env(copy_data_dir(sample_data_dir, tmp_path / "data"))


def check_contract(run: dict[str, Any], status: str) -> None:
    assert set(run) == RUN_KEYS
    assert run["status"] == status
    assert isinstance(run["run_id"], str) and run["run_id"]
    assert isinstance(run["sources"], list)
    assert isinstance(run["interventions"], list)
    assert isinstance(run["replans"], list)
    assert isinstance(run["llm_calls"], int) and run["llm_calls"] >= 1
    assert set(run["token_usage"]) == {"input_tokens", "output_tokens", "total_tokens"}
    for step in run["plan"]["steps"]:
        assert set(step) == STEP_KEYS
    for intervention in run["interventions"]:
        assert {"kind", "level", "question", "reason", "options"} <= set(intervention)
    for replan in run["replans"]:
        assert {"trigger", "strategy", "reason"} <= set(replan)


def test_answered_json(env: dict[str, str]) -> None:
    result = grace_here(env, "ask", "How many vacation days do new employees get?", "--json")
    assert result.returncode == 0, result.stderr
    run = json.loads(result.stdout)
    check_contract(run, "answered")
    assert "15 days" in run["answer"]
    assert run["sources"] == ["vacation-policy.md"]
    assert run["level"] in ("silent", "notify")
    assert run["model"] == "offline"
    assert all(s["status"] == "success" and s["confidence"] > 0 for s in run["plan"]["steps"])


def test_paused_and_cancelled_json(env: dict[str, str]) -> None:
    question = "Compare the remote work policy and the employee handbook: why do they differ?"
    paused = json.loads(grace_here(env, "ask", question, "--no-input", "--json").stdout)
    check_contract(paused, "paused")
    assert paused["plan"]["requires_confirmation"] is True
    assert paused["interventions"][0]["kind"] == "plan_approval"
    cancelled = grace_here(env, "resume", paused["run_id"], "--action", "cancel", "--json")
    assert cancelled.returncode == 0, cancelled.stderr
    run = json.loads(cancelled.stdout)
    check_contract(run, "cancelled")
    assert run["interventions"][0]["status"] == "answered"
    assert "cancelled" in run["error"]


def test_unanswerable_question_escalates_after_replanning(env: dict[str, str]) -> None:
    run = json.loads(
        grace_here(env, "ask", "What is the capital of Mongolia?", "--no-input", "--json").stdout
    )
    check_contract(run, "paused")
    assert run["pending"]["kind"] == "escalate"
    # one retry with the keywords; a second would repeat that search, so it escalated
    assert len(run["replans"]) == 1
    assert {r["trigger"] for r in run["replans"]} == {"low_confidence"}
    assert "would only repeat searches already run" in run["pending"]["reason"]
    searches = [s["description"] for s in run["plan"]["steps"] if s["action"] == "rag_search"]
    assert searches == ["Search the knowledge base for: capital mongolia"]


async def test_failed_json_when_the_model_returns_garbage(env: dict[str, str]) -> None:
    async with FakeGemini() as fake:
        fake.reply_json("this is not a plan", times=4)
        gemini_env = env | fake.grace_env()
        code, out, err = await grace_here_async(
            gemini_env, "ask", "How many vacation days?", "--json"
        )
    assert code == 1, err
    run = json.loads(out)
    check_contract(run, "failed")
    assert run["error"].startswith("Planning failed")
    assert run["model"] == "gemini-2.5-flash"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["ask", ""], "The question is empty"),
        (["ask", "x" * 40_000], "40,000 characters long"),
        (["ask", "hi", "--collection", "nope"], "Unknown collection 'nope'"),
        (["ingest", "/nonexistent/file.md"], "/nonexistent/file.md"),
        (["ingest", "pyproject.toml"], "unsupported file type"),
        (["resume", "nope", "--action", "proceed"], "No run 'nope'"),
        (["show", "nope"], "No run 'nope'"),
    ],
)
def test_bad_input_gets_a_clear_message_and_exit_2(
    env: dict[str, str], args: list[str], message: str
) -> None:
    result = grace_here(env, *args)
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


def test_interactive_prompts_on_a_terminal_and_the_single_process_lock(
    env: dict[str, str],
) -> None:
    # plan approval, then a weak part to confirm
    question = (
        "Why do multiple teams share an office day and how do I claim the remote work stipend?"
    )
    child = pexpect.spawn(
        GRACE[0], [*GRACE[1:], "ask", question], env=env, encoding="utf-8", timeout=60
    )
    try:
        child.expect(r"Run this plan\?")
        child.expect(r"\[r\]un / \[m\]odify / \[c\]ancel > ")
        # While this process holds the local knowledge base, a second one is told why it
        # cannot open it and what to do, instead of crashing.
        second = grace_here(env, "runs")
        assert second.returncode == 1
        assert "already" in second.stderr.lower() and "QDRANT_URL" in second.stderr
        assert "Traceback" not in second.stderr
        child.sendline("r")
        while True:
            index = child.expect([r"\[p\]roceed / \[m\]odify / \[c\]ancel > ", r"— answered"])
            if index == 1:
                break
            child.sendline("p")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0
    assert "[Source:" in (child.before or "")


LATEST = "What is the latest version?"
BEACON = "What is the latest version of Beacon Server?"


def test_options_are_numbered_from_1_in_resume_and_0_is_refused(env: dict[str, str]) -> None:
    paused = json.loads(grace_here(env, "ask", LATEST, "--json").stdout)
    assert paused["status"] == "paused"
    options = paused["pending"]["options"]
    assert BEACON in options
    run_id = paused["run_id"]
    shown = grace_here(env, "show", run_id).stdout
    assert f"[1] {options[0]}" in shown and "[0]" not in shown

    zero = grace_here(env, "resume", run_id, "--action", "input", "--option", "0")
    assert zero.returncode == 2
    assert "numbered from 1" in zero.stderr
    too_far = grace_here(
        env, "resume", run_id, "--action", "input", "--option", str(len(options) + 1)
    )
    assert too_far.returncode == 2
    assert f"between 1 and {len(options)}" in too_far.stderr

    number = options.index(BEACON) + 1
    done = grace_here(env, "resume", run_id, "--action", "input", "--option", str(number), "--json")
    answered = json.loads(done.stdout)
    assert answered["status"] == "answered", done.stderr
    assert "4.2" in answered["answer"]  # Beacon Server's version: option N is the Nth shown


def test_the_terminal_prompt_numbers_options_from_1(env: dict[str, str]) -> None:
    child = pexpect.spawn(GRACE[0], [*GRACE[1:], "ask", LATEST], env=env, encoding="utf-8")
    child.timeout = 60
    try:
        child.expect(r"your answer \(1–(\d+) picks an option")
        listed = child.before or ""
        assert "[0]" not in listed
        numbered = [line.strip() for line in listed.splitlines() if line.strip().startswith("[")]
        number = next(i for i, line in enumerate(numbered, start=1) if BEACON in line)
        assert numbered[number - 1].startswith(f"[{number}] ")
        child.sendline(str(number))
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0
    assert "4.2" in (child.before or "")


def test_show_takes_the_short_id_the_cards_show(env: dict[str, str]) -> None:
    """Slack's cards name a run by `short_id` (six characters): `grace show` takes it."""
    from blocks.common import short_id

    run = json.loads(grace_here(env, "ask", "How many vacation days?", "--json").stdout)
    shown = grace_here(env, "show", short_id(run["run_id"]))
    assert shown.returncode == 0, shown.stderr
    assert run["run_id"] in shown.stdout
    too_short = grace_here(env, "show", run["run_id"][:3])
    assert too_short.returncode == 2 and "No run" in too_short.stderr


def test_a_short_id_two_runs_share_is_refused_as_ambiguous(env: dict[str, str]) -> None:
    """Never one of them picked at random: exit 2, asking for more characters."""
    import asyncio

    from storage.db import make_engine
    from storage.run_store import SqlRunStore
    from tests.samples import make_state

    async def two_runs_sharing_a_prefix() -> None:
        engine = make_engine(f"sqlite+aiosqlite:///{env['GRACE_DATA_DIR']}/grace.db")
        store = SqlRunStore(engine)
        for n, run_id in enumerate(("abcd12345678", "abcd98765432")):
            state = make_state(thread_ts=f"1700000000.00010{n}")
            state.run_id = run_id
            await store.save(state)
        await engine.dispose()

    grace_here(env, "runs")  # the database exists, migrated
    asyncio.run(two_runs_sharing_a_prefix())
    one = grace_here(env, "show", "abcd12")
    assert one.returncode == 0, one.stderr  # six characters name one of them
    ambiguous = grace_here(env, "show", "abcd")
    assert ambiguous.returncode == 2
    assert "More than one run starts with 'abcd'" in ambiguous.stderr
