"""The simulator behaves like Slack where a newcomer notices: ephemeral messages do not
survive a restart (and the page drops older ones on a reload), the tab icon exists,
the newer blocks (feedback buttons, Details) work from the page, and `--pace` slows the
offline model down without changing its answers."""

from __future__ import annotations

import time
from pathlib import Path

import aiohttp

from agent.llm.offline import OfflineModel
from agent.ports import PlanRequest
from blocks import ids
from bot.simulator.server import SlackSimulator
from bot.simulator.workspace import SlackWorkspace
from bot.slack.dev import DevEnvironment, PacedModel, banner, dev_environment

from .conftest import ALICE, CHANNEL, VACATION_Q, Page, dev_test_settings, settle


async def test_ephemeral_messages_do_not_survive_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "sim.json"
    workspace = SlackWorkspace()
    parent = workspace.post_user_message(CHANNEL, ALICE, "hello")
    told = workspace.post_ephemeral(CHANNEL, ALICE, text="only you", thread_ts=parent.ts)
    assert workspace.latest_ts == told.ts
    workspace.save(path)

    loaded = SlackWorkspace()
    assert loaded.load(path)
    assert loaded.all_messages() == workspace.all_messages()
    assert loaded.ephemerals() == []
    assert loaded.next_ts() > told.ts  # no ts is handed out twice


async def test_the_page_learns_which_ephemerals_are_older_than_itself(
    simulator: SlackSimulator, http: aiohttp.ClientSession
) -> None:
    page = Page(simulator.origin, http)
    old = simulator.workspace.post_ephemeral(CHANNEL, ALICE, text="before the reload")
    state = await page.state(ALICE)
    assert state["latest_ts"] == old.ts  # the page shows only ephemerals newer than this
    new = simulator.workspace.post_ephemeral(CHANNEL, ALICE, text="after")
    assert new.ts > state["latest_ts"]
    status, script = await page.get("/static/simulator.js")
    assert status == 200
    assert "tsAfter(e.ts, state.openedAfter)" in script and "staleViews" in script


async def test_the_tab_icon_is_served(
    simulator: SlackSimulator, http: aiohttp.ClientSession
) -> None:
    async with http.get(simulator.origin + "/favicon.ico") as response:
        assert response.status == 200
        assert response.content_type == "image/svg+xml"
        assert "<svg" in await response.text()
    async with http.get(simulator.origin + "/") as response:
        assert '<link rel="icon" href="/static/favicon.svg"' in await response.text()
    async with http.get(simulator.origin + "/static/favicon.svg") as response:
        assert response.status == 200


async def test_feedback_buttons_and_details_work_from_the_page(
    dev: DevEnvironment, page: Page
) -> None:
    question_ts = (await page.say(ALICE, f"@grace {VACATION_Q}"))["message"]["ts"]
    await settle(dev)
    answer = dev.simulator.workspace.thread(CHANNEL, question_ts)[-1]
    [feedback] = [b for b in answer.blocks if b["type"] == "context_actions"]
    element = feedback["elements"][0]
    assert element["type"] == "feedback_buttons"

    down = element["negative_button"]["value"]
    clicked = await page.click(ALICE, answer, ids.FEEDBACK, value=down)
    await settle(dev)
    assert clicked["ok"] and clicked["acked"]
    assert [ok for _, ok in await dev.bot.services.store.recent_feedback()] == [False]

    details = await page.click(ALICE, answer, ids.DETAILS)
    await settle(dev)
    assert details["ok"]
    [view] = [v for v in dev.simulator.workspace.views() if not v.closed]
    assert view.user == ALICE and "submit" not in view.view
    shown = str(view.view["blocks"])
    assert "*Factors:*" in shown and "how well the answer follows from the sources" in shown
    assert "llm_self_eval" not in shown  # factors in plain words (issue 23 g)


async def test_pace_waits_before_each_model_call_and_changes_no_answer() -> None:
    request = PlanRequest(query=VACATION_Q, collections=["default"])
    plain = await OfflineModel().plan(request)
    paced_model = PacedModel(OfflineModel(), 0.2)
    started = time.monotonic()
    paced = await paced_model.plan(request)
    assert time.monotonic() - started >= 0.2
    assert paced == plain
    assert paced_model.name == OfflineModel().name


async def test_grace_dev_with_pace_runs_the_paced_model(tmp_path: Path) -> None:
    settings = dev_test_settings(tmp_path / "grace")
    async with dev_environment(settings, port=0, ping_interval=1.0, pace=0.05) as env:
        llm = env.bot.services.llm
        assert isinstance(llm, PacedModel) and llm.pace == 0.05
        assert env.bot.services.orchestrator.llm is llm
        assert "paced: 0.05 s per call" in banner(env)
