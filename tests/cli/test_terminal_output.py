"""What a person sees on a terminal, and what a machine reads from a file.

Every command the README lists runs twice at default settings: under a pseudo-terminal
(no JSON log line, no library chatter, the plan printed once), and with stderr
redirected to a file (JSON lines only, one of them saying how the command ended).
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import os
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pexpect
import pytest

from bot.service.logs import configure_logging
from tests.durable.helpers import GRACE, grace_here_async
from tests.fakes.fake_gemini import FakeGemini

ANSWERED_Q = "How many vacation days do new employees get?"
AMBIGUOUS_Q = "What is the latest version?"
CHATTER = ("Context impl", "Will assume", "AFC is enabled", "HTTP Request:", "alembic")
TEXT_LOG = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ (DEBUG|INFO) ", re.M)
RUN_ID = re.compile(r"Run ([0-9a-f]{12}) — ")


def default_env(data_dir: Path) -> dict[str, str]:
    """The caller's environment without any GRACE setting: the defaults a newcomer has."""
    prefixes = ("GRACE_", "GOOGLE_", "SLACK_", "QDRANT_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(prefixes)}
    env["GRACE_DATA_DIR"] = str(data_dir)
    return env


def walk_readme(run: Callable[[list[str]], str]) -> list[list[str]]:
    """Run the README's commands in the order a newcomer tries them (`run` returns what
    the command printed); the argument lists run."""
    done: list[list[str]] = []

    def step(*args: str) -> str:
        done.append(list(args))
        return run(list(args))

    step("ingest", "--sample")
    step("ask", ANSWERED_Q)
    paused = RUN_ID.search(step("ask", AMBIGUOUS_Q, "--no-input"))
    assert paused, "the ambiguous question did not print its run id"
    run_id = paused.group(1)
    step("runs")
    step("runs", "--status", "paused")
    step("show", run_id)
    step("resume", run_id, "--action", "input", "--option", "1")
    step("feedback", run_id, "up")
    step("thresholds")
    step("recover")
    step("sweep")
    return done


def is_json_log(line: str) -> bool:
    try:
        value = json.loads(line)
    except ValueError:
        return False
    return isinstance(value, dict) and "level" in value


def test_a_terminal_shows_no_log_lines_and_the_plan_once(tmp_path: Path) -> None:
    env = default_env(tmp_path / "data")
    screens: dict[str, str] = {}

    def on_terminal(args: list[str]) -> str:
        child = pexpect.spawn(
            GRACE[0], [*GRACE[1:], *args], env=env, encoding="utf-8", timeout=120,
            dimensions=(60, 250),
        )  # fmt: skip
        child.expect(pexpect.EOF)
        child.close()
        screen = (child.before or "").replace("\r\n", "\n")
        assert child.exitstatus == 0, f"grace {' '.join(args)}:\n{screen}"
        screens[" ".join(args)] = screen
        return screen

    walked = walk_readme(on_terminal)
    assert len(walked) == len(screens) == 11
    for command, screen in screens.items():
        assert not [line for line in screen.splitlines() if is_json_log(line)], command
        assert not any(noise in screen for noise in CHATTER), f"{command}:\n{screen}"
        assert not TEXT_LOG.search(screen), f"{command}:\n{screen}"
    asked = screens[f"ask {ANSWERED_Q}"]
    assert asked.count("Plan (complexity") == 1, asked
    assert "✅ step 1" in asked and "15 days" in asked
    assert "into 'grace_docs'" in screens["ingest --sample"]
    assert "now holds 61 chunks" in screens["ingest --sample"]
    assert "silent 0.90" in screens["thresholds"]


def test_stderr_to_a_file_gets_json_lines(tmp_path: Path) -> None:
    env = default_env(tmp_path / "data")
    logs: dict[str, list[dict[str, object]]] = {}

    def to_file(args: list[str]) -> str:
        log_path = tmp_path / f"stderr-{len(logs)}.log"
        with log_path.open("w", encoding="utf-8") as stderr:
            result = subprocess.run(
                [*GRACE, *args], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=stderr, text=True, timeout=120, check=False,
            )  # fmt: skip
        lines = log_path.read_text(encoding="utf-8").splitlines()
        assert result.returncode == 0, lines
        assert all(is_json_log(line) for line in lines), lines
        logs[" ".join(args)] = [json.loads(line) for line in lines]
        return result.stdout

    walk_readme(to_file)
    assert len(logs) == 11
    for command, records in logs.items():
        finished = [r for r in records if r.get("event") == "command_finished"]
        assert len(finished) == 1, command
        assert finished[0]["command"] == command.split()[0]
        assert finished[0]["exit_code"] == 0
        assert not any(str(r["logger"]).startswith("alembic") for r in records), command
    events = [r.get("event") for r in logs[f"ask {ANSWERED_Q}"]]
    summaries = [r for r in logs[f"ask {ANSWERED_Q}"] if r.get("event") == "run_summary"]
    assert len(summaries) == 1 and "answered" in str(summaries[0]["msg"]), events
    run_records = [r for r in logs[f"ask {ANSWERED_Q}"] if r.get("event") != "command_finished"]
    assert run_records and all(r.get("run_id") for r in run_records)


@pytest.mark.parametrize(
    ("tty", "level", "fmt", "shown"),
    [
        (True, "auto", "auto", ["agent.orchestrator WARNING"]),
        (False, "auto", "auto", ["agent.orchestrator INFO", "agent.orchestrator WARNING"]),
        (False, "DEBUG", "auto", None),  # DEBUG shows everything, libraries included
    ],
)
def test_library_chatter_stays_below_the_threshold(
    tty: bool, level: str, fmt: str, shown: list[str] | None
) -> None:
    class Stream(io.StringIO):
        def isatty(self) -> bool:
            return tty

    stream = Stream()
    root = logging.getLogger()
    handlers, root_level = root.handlers[:], root.level
    try:
        configure_logging(level, fmt, stream=stream)
        for name in ("alembic.runtime.migration", "google_genai.models", "httpx", "aiosqlite"):
            logging.getLogger(name).info("library chatter")
            logging.getLogger(name).debug("library chatter")
        logging.getLogger("agent.orchestrator").info("agent.orchestrator INFO")
        logging.getLogger("agent.orchestrator").warning("agent.orchestrator WARNING")
    finally:
        root.handlers[:] = handlers
        root.setLevel(root_level)
    text = stream.getvalue()
    if shown is None:
        assert '"logger": "alembic.runtime.migration"' in text
        assert "library chatter" in text
        assert all(is_json_log(line) for line in text.splitlines())
        return
    assert "library chatter" not in text
    lines = text.splitlines()
    assert [line for line in lines if "agent.orchestrator" in line] == lines
    assert len(lines) == len(shown)
    for line, message in zip(lines, shown, strict=True):
        assert message in line
        assert is_json_log(line) is (not tty)


async def test_google_genai_chatter_shows_only_at_debug(tmp_path: Path) -> None:
    """google-genai logged "AFC is enabled …" at INFO on every call; GRACE turns automatic
    function calling off, so the line is gone at every level, DEBUG included."""
    async with FakeGemini() as fake:
        fake.reply_json("this is not a plan", times=12)
        env = default_env(tmp_path / "data") | fake.grace_env()
        args = [*GRACE, "ask", "How many vacation days?"]

        def on_terminal() -> str:
            child = pexpect.spawn(args[0], args[1:], env=env, encoding="utf-8", timeout=120)
            child.expect(pexpect.EOF)
            child.close()
            assert child.exitstatus == 1  # the model's garbage plan fails the run
            return child.before or ""

        screen = await asyncio.to_thread(on_terminal)
        outputs: dict[str, str] = {}
        for level in ("auto", "DEBUG"):  # stderr not a terminal: in this process will do
            code, _, err = await grace_here_async(
                {**env, "GRACE_LOG_LEVEL": level}, "ask", "How many vacation days?"
            )
            assert code == 1
            outputs[level] = err
    assert "Planning failed" in screen
    assert "AFC" not in screen and not TEXT_LOG.search(screen), screen
    assert "AFC" not in outputs["auto"]
    assert all(is_json_log(line) for line in outputs["auto"].splitlines())
    # automatic function calling is off, so the SDK has nothing to announce even at DEBUG
    assert "AFC is enabled" not in outputs["DEBUG"]
    assert any('"level": "debug"' in line for line in outputs["DEBUG"].splitlines())
