"""The simulator's assistant pane: `assistant.threads.*` validated and kept as Slack does,
and in `grace dev` opening the pane greets with prompts, a question is titled, worked on
(status shown, then cleared) and answered in the pane's thread."""

from __future__ import annotations

from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from bot.simulator.server import SlackSimulator
from bot.slack.dev import DevEnvironment

from .conftest import ALICE, VACATION_Q, Page, refusals, settle, until


async def test_assistant_methods_are_checked_and_kept(simulator: SlackSimulator) -> None:
    client = AsyncWebClient(token="xoxb-test", base_url=simulator.base_url)
    thread = simulator.assistant.open_thread(ALICE)
    where = {"channel_id": thread.channel, "thread_ts": thread.thread_ts}

    await client.assistant_threads_setTitle(**where, title="Parking")
    await client.assistant_threads_setSuggestedPrompts(
        **where, prompts=[{"title": "Parking", "message": "Where do bikes go?"}], title="Try"
    )
    await client.assistant_threads_setStatus(**where, status="is searching…")
    kept = simulator.assistant.thread(thread.channel, thread.thread_ts)
    assert (kept.title, kept.status, kept.prompts_title) == ("Parking", "is searching…", "Try")
    assert kept.prompts == [{"title": "Parking", "message": "Where do bikes go?"}]

    # the app replies in the thread: Slack hides the status line
    await client.chat_postMessage(channel=thread.channel, thread_ts=thread.thread_ts, text="Hi")
    assert kept.status == ""

    refused = await refusals(
        (
            client.assistant_threads_setStatus(
                channel_id="C0GENERAL1", thread_ts=thread.thread_ts, status="x"
            ),
            client.assistant_threads_setStatus(
                channel_id=thread.channel, thread_ts="1.2", status="x"
            ),
            client.assistant_threads_setSuggestedPrompts(
                **where, prompts=[{"title": str(n), "message": "m"} for n in range(5)]
            ),
            client.assistant_threads_setTitle(**where, title=""),
        )
    )
    assert refused == [
        "invalid_channel",
        "thread_not_found",
        "invalid_arguments",
        "invalid_arguments",
    ]


async def pane_of(page: Page, channel: str, thread_ts: str) -> dict[str, Any]:
    status, data = await page.get("/sim/assistant/state")
    assert status == 200
    found = [t for t in data["threads"] if (t["channel"], t["thread_ts"]) == (channel, thread_ts)]
    assert len(found) == 1
    return found[0]


async def test_grace_dev_answers_in_the_assistant_pane(dev: DevEnvironment, page: Page) -> None:
    status, opened = await page.post("/sim/assistant/open", {"user": ALICE})
    assert status == 200 and opened["ok"], opened
    channel, root = opened["thread"]["channel"], opened["thread"]["thread_ts"]
    assert channel.startswith("D") and opened["message"]["ts"] == root

    await settle(dev)
    pane = await until(
        _with_prompts(page, channel, root), what="suggested prompts from the knowledge base"
    )
    assert 1 <= len(pane["prompts"]) <= 3

    await page.say(ALICE, VACATION_Q, thread_ts=root, channel=channel)
    await settle(dev)

    pane = await pane_of(page, channel, root)
    assert pane["title"] == VACATION_Q
    assert pane["status"] == ""
    sim = dev.simulator
    statuses = [c.params["status"] for c in sim.calls_to("assistant.threads.setStatus")]
    assert statuses[0] and statuses[-1] == "", statuses
    replies = [m for m in sim.thread(channel, root) if m.is_reply and m.bot_id]
    assert len(replies) >= 2, "the greeting, then the plan and the answer"
    assert any("feedback" in str(m.blocks) for m in replies), "the answer, in the pane's thread"


def _with_prompts(page: Page, channel: str, root: str) -> Any:
    async def check() -> dict[str, Any] | None:
        pane = await pane_of(page, channel, root)
        return pane if pane["prompts"] else None

    return check
