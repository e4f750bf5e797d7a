"""Stopping and restarting `grace dev` keeps the channel history (the simulator's JSON
file) and the paused runs (SQLite): a run paused before the restart is answered after it,
from the same message with the same button values."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from pathlib import Path

import aiohttp
import pytest

from agent.schemas import RunStatus, ThreadKey
from blocks import ids
from bot.simulator.workspace import AutoSaver, SlackWorkspace
from tests.bot.conftest import message_text
from tests.durable.helpers import clean_env, free_port

from .conftest import ALICE, CHANNEL, COMPARE_Q, Page, settle, start_dev, until
from .test_grace_dev import buttons


async def test_history_and_a_paused_run_survive_a_restart(
    tmp_path: Path, http: aiohttp.ClientSession
) -> None:
    data_dir = tmp_path / "grace"
    async with start_dev(data_dir) as env:
        page = Page(env.simulator.origin, http)
        question_ts = (await page.say(ALICE, f"@grace {COMPARE_Q}"))["message"]["ts"]
        await settle(env)
        [plan] = env.simulator.workspace.thread(CHANNEL, question_ts)[1:]
        value = buttons(plan)[ids.PLAN_RUN]
        before = await page.state(ALICE)
    assert (data_dir / "simulator.json").exists()

    async with start_dev(data_dir) as env:
        assert env.ingested == 0  # the knowledge base was kept too
        page = Page(env.simulator.origin, http)
        after = await page.state(ALICE)
        assert after["messages"] == before["messages"]
        plan = env.simulator.workspace.message(CHANNEL, plan.ts)
        assert buttons(plan)[ids.PLAN_RUN] == value

        clicked = await page.click(ALICE, plan, ids.PLAN_RUN)
        assert clicked["acked"]
        await settle(env)
        key = ThreadKey(
            team_id=env.simulator.workspace.team_id, channel_id=CHANNEL, thread_ts=question_ts
        )
        state = await env.bot.services.store.latest_run_in_thread(key)
        assert state is not None and state.status in (RunStatus.ANSWERED, RunStatus.PAUSED)
        edited = env.simulator.workspace.message(CHANNEL, plan.ts)
        assert f"approved by <@{ALICE}>" in message_text(edited)
        # new messages sort after the old ones: timestamps keep increasing
        newest = env.simulator.workspace.all_messages(CHANNEL)[-1]
        assert newest.ts > plan.ts


async def test_the_workspace_round_trips_through_json(tmp_path: Path) -> None:
    path = tmp_path / "sim.json"
    workspace = SlackWorkspace()
    parent = workspace.post_user_message(CHANNEL, ALICE, "hello & <world>")
    reply = workspace.post_message(
        CHANNEL, text="hi", blocks=[{"type": "divider"}], thread_ts=parent.ts
    )
    workspace.update_message(CHANNEL, reply.ts, text="hi again")
    workspace.add_reaction(CHANNEL, parent.ts, "eyes")
    workspace.post_ephemeral(CHANNEL, ALICE, text="psst", thread_ts=parent.ts)
    workspace.save(path)

    loaded = SlackWorkspace()
    assert loaded.load(path)
    assert loaded.all_messages() == workspace.all_messages()
    assert loaded.ephemerals() == []  # Slack drops ephemeral messages on a restart
    assert loaded.users[ALICE]["id"] == ALICE
    assert loaded.next_ts() > max(m.ts for m in workspace.all_messages())
    assert not SlackWorkspace().load(tmp_path / "missing.json")


async def test_autosaver_debounces_and_writes_on_close(tmp_path: Path) -> None:
    path = tmp_path / "sim.json"
    workspace = SlackWorkspace()
    saver = AutoSaver(workspace, path, delay=0.05)
    for n in range(20):
        workspace.post_user_message(CHANNEL, ALICE, f"message {n}")
    await until(lambda: path.exists(), what="the debounced save")
    assert saver.saves == 1
    assert len(json.loads(path.read_text())["messages"]) == 20
    workspace.post_user_message(CHANNEL, ALICE, "the last one")
    saver.close()
    assert len(json.loads(path.read_text())["messages"]) == 21


async def test_grace_dev_command_serves_the_page_and_stops_on_ctrl_c(
    tmp_path: Path, http: aiohttp.ClientSession
) -> None:
    port = free_port()
    env = clean_env(GRACE_DATA_DIR=str(tmp_path / "grace"), GRACE_LLM__PROVIDER="offline")
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot.cli",
        "dev",
        "--port",
        str(port),
        "--pace",
        "0.5",
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert process.stdout is not None
        # A loaded machine may take a while to start it (the sample KB is ingested first).
        first = await asyncio.wait_for(process.stdout.readline(), 120)
        assert first.decode().strip() == f"GRACE dev: open http://127.0.0.1:{port}/"
        banner = [(await asyncio.wait_for(process.stdout.readline(), 60)).decode() for _ in "abc"]
        assert any("paced: 0.5 s per call" in line for line in banner), banner
        async with http.get(f"http://127.0.0.1:{port}/sim/state") as response:
            state = await response.json()
        assert state["connections"] == 1  # the bot is connected over Socket Mode
        async with http.get(f"http://127.0.0.1:{port}/") as response:
            assert response.status == 200
            assert 'data-testid="composer"' in await response.text()
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGINT)
        try:
            out, err = await asyncio.wait_for(process.communicate(), 60)
        except TimeoutError:
            process.kill()
            out, err = await process.communicate()
            pytest.fail(f"grace dev ignored Ctrl-C for 60 s; its stderr: {err.decode()[-3000:]}")
    assert process.returncode == 0, err.decode()[-2000:]
    assert "stopping" in out.decode()
    assert (tmp_path / "grace" / "simulator.json").exists()
