"""Fixtures for driving the real Bolt app over real HTTP against the fake Slack.

- The sample knowledge base is ingested once per session into a template data dir;
  every test gets its own copy (a Qdrant local directory takes one client at a time).
- `BotHarness` owns one bot process-equivalent: `create_bot(Settings(...))`, the real
  aiohttp server from `http_app(bot)` on 127.0.0.1:0, and helpers that send correctly
  signed requests and then wait for the work after the ack (`tasks.idle()`,
  `publisher.drain()`). `restart()` closes the bot and starts a new one on the same data
  dir and database, as a new process would.
- Every Block Kit payload the bot sent during a test is checked in the `fake` fixture's
  finalizer (`assert_valid_block_kit`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import aiohttp
import pytest
from aiohttp import web
from slack_sdk.models.blocks import Block
from slack_sdk.models.views import View

from agent.knowledge.ingest import SAMPLE_KB_DIR, ingest_paths
from agent.knowledge.qdrant_kb import open_knowledge_base
from agent.ports import LanguageModel
from agent.schemas import InterventionKind, InterventionLevel, RunState, RunStatus, ThreadKey
from blocks import ids
from blocks.limits import (
    MAX_BUTTON_TEXT,
    MAX_BUTTON_VALUE,
    MAX_SECTION_TEXT,
    validate_message,
    validate_view,
)
from bot.service.settings import LLMSettings, Settings, SlackSettings
from bot.service.wiring import build_services
from bot.service.worker_process import WorkerProcess
from bot.simulator.home import app_home_opened_envelope
from bot.simulator.requests import (
    FORM_CONTENT_TYPE,
    JSON_CONTENT_TYPE,
    app_mention_envelope,
    block_actions_payload,
    form_body,
    interactive_body,
    json_body,
    message_envelope,
    signed_headers,
    slash_command_form,
    view_submission_payload,
)
from bot.simulator.sessions import agent_session_stopped_envelope
from bot.simulator.webapi import FakeSlack, RecordedCall
from bot.simulator.workspace import (
    DEFAULT_APP_ID,
    DEFAULT_BOT_USER_ID,
    DEFAULT_CHANNEL_ID,
    DEFAULT_TEAM_ID,
    DEFAULT_USER_ID,
    StoredMessage,
)
from bot.slack.compose import Bot, create_bot
from bot.slack.delivery.plan_stream import PlanDisplay
from bot.slack.front import Front, create_front
from bot.slack.runners import http_app
from storage.run_store import SqlRunStore
from tests.shared_dirs import built_once

SECRET = "test-signing-secret-0123456789"
CHANNEL = DEFAULT_CHANNEL_ID
TEAM = DEFAULT_TEAM_ID
ASKER = DEFAULT_USER_ID
OTHER = "U0OTHER0002"
APPROVER = "U0APPROVER3"

VACATION_Q = "How many vacation days do new employees get?"
COMPARE_Q = "Why do multiple teams share an office day and how do I claim the remote work stipend?"
"""A complex question (plan approval) with one weak part (a confirmation), then answered."""
MONGOLIA_Q = "What is the capital of Mongolia?"
LATEST_Q = "What is the latest version?"

MESSAGE_METHODS = ("chat.postMessage", "chat.update", "chat.postEphemeral", "chat.stopStream")
EDIT_INTERVAL = 0.02
"""The publisher's plan-edit coalescing interval in tests (1 s in production)."""


# --------------------------------------------------------------------------- Block Kit checks


def _walk_elements(block: dict[str, Any]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    if block.get("type") == "actions":
        found.extend(e for e in block.get("elements", []) if isinstance(e, dict))
    accessory = block.get("accessory")
    if isinstance(accessory, dict):
        found.append(accessory)
    return found


def check_block_kit(blocks: list[dict[str, Any]], where: str) -> None:
    """One message's blocks: parseable by slack_sdk and within Slack's limits."""
    assert isinstance(blocks, list), f"{where}: blocks is not a list"
    parsed = [Block.parse(b) for b in blocks]
    assert all(p is not None for p in parsed), f"{where}: a block slack_sdk does not know"
    validate_message(blocks)
    for block in blocks:
        if block.get("type") == "section" and isinstance(block.get("text"), dict):
            text = block["text"].get("text", "")
            assert len(text) <= MAX_SECTION_TEXT, f"{where}: section text of {len(text)} chars"
        for element in _walk_elements(block):
            if element.get("type") != "button":
                continue
            label = element.get("text", {}).get("text", "")
            value = element.get("value", "")
            assert len(label) <= MAX_BUTTON_TEXT, f"{where}: button text {label!r}"
            assert len(value) <= MAX_BUTTON_VALUE, f"{where}: button value of {len(value)}"


def assert_valid_block_kit(calls: Sequence[RecordedCall]) -> int:
    """Every message (and modal) the bot sent is valid Block Kit; returns how many."""
    checked = 0
    for n, call in enumerate(calls):
        if call.method in ("views.open", "views.publish"):
            validate_view(View(**call.params["view"]))
            checked += 1
            continue
        if call.method not in MESSAGE_METHODS:
            continue
        blocks = call.params.get("blocks")
        if blocks in (None, "", []):
            continue
        check_block_kit(blocks, f"call {n} {call.method}")
        checked += 1
    return checked


# --------------------------------------------------------------------------- data dir


async def _ingest_template(data_dir: Path) -> None:
    kb = open_knowledge_base(path=data_dir / "qdrant", url=None)
    try:
        reports = await ingest_paths(kb, [SAMPLE_KB_DIR])
        assert sum(r.chunks for r in reports) > 20
    finally:
        await kb.close()


@pytest.fixture(scope="session")
def kb_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data dir with the shipped sample KB ingested (offline: sparse vectors only)."""
    return built_once(
        tmp_path_factory, "grace_template", lambda path: asyncio.run(_ingest_template(path))
    )


@pytest.fixture
def data_dir(kb_template: Path, tmp_path: Path) -> Path:
    """This test's own data dir: a copy of the ingested template, database created later."""
    target = tmp_path / "grace"
    shutil.copytree(kb_template, target)
    return target


# --------------------------------------------------------------------------- the harness


@dataclass
class Reply:
    status: int
    text: str

    def json(self) -> Any:
        return json.loads(self.text)


class PausedQuestion(NamedTuple):
    """A run paused on a question to a person (`BotHarness.paused_question`)."""

    state: RunState
    message: StoredMessage
    """The message asking it."""


class PlanToApprove(NamedTuple):
    """A run paused on its plan (`BotHarness.plan_to_approve`)."""

    state: RunState
    plan: StoredMessage
    run_value: str
    """The Run button's value, to click it with."""


class BotHarness:
    """One running bot behind its real HTTP endpoint, and a signed-request client."""

    def __init__(
        self, fake: FakeSlack, settings: Settings, *, llm: LanguageModel | None = None
    ) -> None:
        self.fake = fake
        self.settings = settings
        self.llm = llm
        self._bot: Bot | None = None
        self._runner: web.AppRunner | None = None
        self._http: aiohttp.ClientSession | None = None
        self.base = ""

    # ---------------------------------------------------------------- lifecycle

    @property
    def bot(self) -> Bot:
        assert self._bot is not None, "the bot is not running"
        return self._bot

    @property
    def store(self) -> SqlRunStore:
        return self.bot.services.store

    @property
    def url(self) -> str:
        return f"{self.base}/slack/events"

    async def start(self) -> None:
        services = await build_services(self.settings, llm=self.llm) if self.llm else None
        bot = await create_bot(self.settings, services=services)
        bot.deps.publisher._min_interval = EDIT_INTERVAL
        runner = web.AppRunner(http_app(bot), access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = int(runner.addresses[0][1])
        self._bot, self._runner = bot, runner
        self.base = f"http://127.0.0.1:{port}"
        if self._http is None:
            self._http = aiohttp.ClientSession()

    async def stop(self, grace: float | None = None) -> None:
        """Close the bot as a shutting-down process would: waits for in-flight work (at
        most `grace` seconds when given, as `grace serve` on SIGTERM)."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self._bot is not None:
            await self._bot.close(grace)
            self._bot = None

    async def restart(self) -> None:
        """A new bot process on the same data dir and database."""
        await self.stop()
        await self.start()

    async def close(self) -> None:
        await self.stop()
        if self._http is not None:
            await self._http.close()
            self._http = None

    # ---------------------------------------------------------------- requests

    async def post(self, body: str, headers: dict[str, str], *, settle: bool = True) -> Reply:
        assert self._http is not None
        async with self._http.post(self.url, data=body.encode(), headers=headers) as response:
            reply = Reply(response.status, await response.text())
        if settle:
            await self.settle()
        return reply

    async def signed(
        self,
        body: str,
        content_type: str,
        *,
        retry_num: int | None = None,
        timestamp: int | None = None,
        settle: bool = True,
    ) -> Reply:
        headers = signed_headers(
            SECRET, body, content_type=content_type, retry_num=retry_num, timestamp=timestamp
        )
        return await self.post(body, headers, settle=settle)

    async def event(
        self, envelope: dict[str, Any], *, retry_num: int | None = None, settle: bool = True
    ) -> Reply:
        return await self.signed(
            json_body(envelope), JSON_CONTENT_TYPE, retry_num=retry_num, settle=settle
        )

    async def mention(
        self,
        text: str,
        *,
        ts: str,
        user: str = ASKER,
        thread_ts: str | None = None,
        settle: bool = True,
    ) -> Reply:
        envelope = app_mention_envelope(text=text, ts=ts, user=user, thread_ts=thread_ts)
        return await self.event(envelope, settle=settle)

    async def ask(self, text: str, *, ts: str, user: str = ASKER) -> RunState:
        """Mention GRACE with `text` at `ts` (a new thread in CHANNEL): the run it started."""
        await self.mention(text, ts=ts, user=user)
        return await self.run_in(ts)

    async def thread_reply(self, text: str, *, thread_ts: str, ts: str, user: str = ASKER) -> Reply:
        return await self.event(message_envelope(text=text, ts=ts, thread_ts=thread_ts, user=user))

    async def open_app(
        self,
        user: str,
        *,
        tab: str = "home",
        channel: str = "",
        team_id: str = TEAM,
        bot_user_id: str = DEFAULT_BOT_USER_ID,
        event_ts: str = "",
    ) -> None:
        """`user` opens the app's `tab` (Slack's `app_home_opened`); returns once the work
        after the ack is done."""
        envelope = app_home_opened_envelope(
            user=user,
            tab=tab,
            channel=channel,
            team_id=team_id,
            api_app_id=DEFAULT_APP_ID,
            bot_user_id=bot_user_id,
            event_ts=event_ts,
        )
        assert (await self.event(envelope)).status == 200

    async def interactive(self, payload: dict[str, Any], *, settle: bool = True) -> Reply:
        return await self.signed(interactive_body(payload), FORM_CONTENT_TYPE, settle=settle)

    async def click(
        self,
        action_id: str,
        value: str,
        *,
        message: StoredMessage | None = None,
        user: str = ASKER,
        thread_ts: str | None = None,
        settle: bool = True,
        element_type: str = "button",
        team_id: str = TEAM,
    ) -> Reply:
        """Click a button on `message` (as Slack sends it: the message is in the payload),
        from workspace `team_id`."""
        if message is not None:
            payload = block_actions_payload(
                action_id=action_id,
                value=value,
                user=user,
                channel=message.channel,
                message_ts=message.ts,
                message=message.to_api(),
                element_type=element_type,
                team_id=team_id,
            )
        else:
            payload = block_actions_payload(
                action_id=action_id,
                value=value,
                user=user,
                message_ts=thread_ts or "1700000000.999999",
                thread_ts=thread_ts,
                team_id=team_id,
            )
        return await self.interactive(payload, settle=settle)

    async def vote(self, message: StoredMessage, *, up: bool, user: str = ASKER) -> Reply:
        """Click 👍 or 👎 of the message's `feedback_buttons`, as Slack sends it."""
        value = feedback_values(message)[up]
        return await self.click(
            ids.FEEDBACK, value, message=message, user=user, element_type="feedback_buttons"
        )

    async def submit_modal(
        self, view: dict[str, Any], text: str, *, user: str = ASKER, settle: bool = True
    ) -> Reply:
        payload = view_submission_payload(
            callback_id=str(view["callback_id"]),
            values={ids.MODIFY_INPUT_BLOCK: {ids.MODIFY_INPUT_ACTION: text}},
            private_metadata=str(view.get("private_metadata", "")),
            user=user,
        )
        return await self.interactive(payload, settle=settle)

    async def command(self, text: str, *, user: str = ASKER, channel: str = CHANNEL) -> Reply:
        form = slash_command_form(text=text, user=user, channel=channel)
        return await self.signed(form_body(form), FORM_CONTENT_TYPE)

    async def get(self, path: str) -> Reply:
        assert self._http is not None
        async with self._http.get(self.base + path) as response:
            return Reply(response.status, await response.text())

    async def settle(self) -> None:
        """Wait for all work after the ack: runs, clicks, and coalesced plan edits."""
        bot = self.bot
        for _ in range(100):
            await bot.deps.tasks.idle()
            await bot.deps.publisher.drain()
            if len(bot.deps.tasks) == 0:
                return
        raise AssertionError("the bot never became idle")

    # ---------------------------------------------------------------- queries

    def key(self, thread_ts: str, channel: str = CHANNEL) -> ThreadKey:
        return ThreadKey(team_id=TEAM, channel_id=channel, thread_ts=thread_ts)

    async def run_in(self, thread_ts: str, channel: str = CHANNEL) -> RunState:
        state = await self.store.latest_run_in_thread(self.key(thread_ts, channel))
        assert state is not None, f"no run in thread {thread_ts}"
        return state

    async def runs_in(self, thread_ts: str, channel: str = CHANNEL) -> list[RunState]:
        runs = await self.store.runs.list_runs(channel_id=channel, limit=500)
        return [r for r in runs if r.thread.thread_ts == thread_ts]

    async def plan_message(self, state: RunState) -> StoredMessage:
        ref = await self.store.get_message_ref(run_id=state.run_id, kind="plan")
        assert ref is not None, f"run {state.run_id} has no plan message"
        return self.fake.message(*ref)

    async def intervention_message(self, state: RunState, intervention_id: str) -> StoredMessage:
        ref = await self.store.get_message_ref(
            run_id=state.run_id, kind=f"intervention:{intervention_id}"
        )
        assert ref is not None, f"no message for intervention {intervention_id}"
        return self.fake.message(*ref)

    async def answer_message(self, state: RunState) -> StoredMessage:
        ref = await self.store.get_message_ref(run_id=state.run_id, kind="answer")
        assert ref is not None, f"run {state.run_id} has no answer message"
        return self.fake.message(*ref)

    async def paused_question(
        self, text: str, *, ts: str, kind: InterventionKind | None = None
    ) -> PausedQuestion:
        """Ask `text` in a new thread at `ts`, a question GRACE pauses on to ask a person
        (a question of `kind`, when given): the paused run and the message asking."""
        state = await self.ask(text, ts=ts)
        assert state.pending is not None, f"run {state.run_id} is {state.status}, not paused"
        assert kind is None or state.pending.kind is kind, state.pending.kind
        return PausedQuestion(
            state, await self.intervention_message(state, state.pending.intervention_id)
        )

    async def plan_to_approve(self, *, ts: str) -> PlanToApprove:
        """Ask COMPARE_Q (GRACE plans it and asks whether to run the plan) in a new thread
        at `ts`: the paused run, its plan message and the value of its Run button."""
        state = await self.ask(COMPARE_Q, ts=ts)
        assert state.pending is not None, f"run {state.run_id} is {state.status}, not paused"
        plan = await self.plan_message(state)
        return PlanToApprove(state, plan, button_values(plan)[ids.PLAN_RUN])

    def thread(self, thread_ts: str, channel: str = CHANNEL) -> list[StoredMessage]:
        return self.fake.thread(channel, thread_ts)

    def ephemerals(self, user: str = ASKER) -> list[str]:
        return [e.text for e in self.fake.workspace.ephemerals(user=user)]


def session_stopped(thread_ts: str, user: str = ASKER) -> dict[str, Any]:
    """Slack's `agent_session_stopped`: `user` clicked Stop on thread `thread_ts`'s session."""
    return agent_session_stopped_envelope(
        user=user,
        channel=CHANNEL,
        thread_ts=thread_ts,
        team_id=TEAM,
        api_app_id=DEFAULT_APP_ID,
        bot_user_id=DEFAULT_BOT_USER_ID,
    )


def make_settings(
    data_dir: Path,
    fake: FakeSlack,
    approvers: Sequence[str] = (),
    *,
    plan_display: PlanDisplay = "message",
) -> Settings:
    """Settings for a bot on the fake Slack. The plan is the edited message unless a test
    asks for the stream (`plan_display="auto"`; tests/bot/test_plan_stream.py)."""
    return Settings(
        data_dir=data_dir,
        database_url=None,
        slack_bot_token="xoxb-test",
        slack_signing_secret=SECRET,
        slack_app_token=None,
        slack_api_url=fake.base_url,
        google_api_key=None,
        approvers=list(approvers),
        log_format="text",
        llm=LLMSettings(provider="offline"),
        slack=SlackSettings(plan_display=plan_display),
    )


@pytest.fixture
async def fake() -> AsyncIterator[FakeSlack]:
    """The fake Slack Web API; on teardown, every message the bot sent must be valid."""
    async with FakeSlack() as server:
        yield server
        assert_valid_block_kit(server.calls)


HarnessFactory = Callable[..., Awaitable[BotHarness]]


@pytest.fixture
async def started() -> AsyncIterator[list[BotHarness]]:
    """The bots a factory fixture started, each closed when the test ends. A factory asks
    for it after the fake Slack it uses, so the bots close before that fake stops."""
    running: list[BotHarness] = []
    yield running
    async with contextlib.AsyncExitStack() as stack:  # each closed even if one fails
        for harness in reversed(running):  # the stack unwinds last in, first out
            stack.push_async_callback(harness.close)


@pytest.fixture
def make_harness(fake: FakeSlack, data_dir: Path, started: list[BotHarness]) -> HarnessFactory:
    """`await make_harness(approvers=[...], plan_display=..., llm=..., settings=...)`: a
    started bot (closed after the test)."""

    async def factory(
        *,
        approvers: Sequence[str] = (),
        plan_display: PlanDisplay = "message",
        llm: LanguageModel | None = None,
        settings: Settings | None = None,
    ) -> BotHarness:
        """`settings`, when given, replace those `approvers` and `plan_display` make."""
        settings = settings or make_settings(data_dir, fake, approvers, plan_display=plan_display)
        harness = BotHarness(fake, settings, llm=llm)
        await harness.start()
        started.append(harness)
        return harness

    return factory


@pytest.fixture
async def harness(make_harness: HarnessFactory) -> BotHarness:
    """A running bot with no approvers configured."""
    return await make_harness()


# --------------------------------------------------------------------------- message helpers


def button_values(message: StoredMessage) -> dict[str, str]:
    """action_id → value of every button on a message."""
    found: dict[str, str] = {}
    for block in message.blocks:
        for element in _walk_elements(block):
            if element.get("type") == "button":
                found[str(element["action_id"])] = str(element.get("value", ""))
    return found


def message_text(message: StoredMessage) -> str:
    """Everything a reader sees in a message: fallback text and all block texts."""
    parts = [message.text]

    def visit(node: Any) -> None:
        if isinstance(node, dict):
            text = node.get("text")
            if isinstance(text, str):
                parts.append(text)
            title = node.get("title")  # a plan's or task_card's title is plain text
            if isinstance(title, str):
                parts.append(title)
            for value in node.values():
                if isinstance(value, dict | list):
                    visit(value)
        elif isinstance(node, list):
            for item in node:
                visit(item)

    visit(message.blocks)
    return "\n".join(parts)


def is_plan_message(message: StoredMessage) -> bool:
    return any(
        b.get("type") == "header" and "🧭" in str(b.get("text", {}).get("text", ""))
        for b in message.blocks
    )


def feedback_values(message: StoredMessage) -> dict[bool, str]:
    """The 👍 (True) / 👎 (False) values of the message's `feedback_buttons`, if any."""
    found: dict[bool, str] = {}
    for block in message.blocks:
        if block.get("type") != "context_actions":
            continue
        for element in block.get("elements", []):
            if element.get("type") == "feedback_buttons" and element.get("action_id") == (
                ids.FEEDBACK
            ):
                found[True] = str(element["positive_button"]["value"])
                found[False] = str(element["negative_button"]["value"])
    return found


def has_feedback_buttons(message: StoredMessage) -> bool:
    return set(feedback_values(message)) == {True, False}


async def proceed_through_confirms(h: BotHarness, thread_ts: str, *, limit: int = 5) -> RunState:
    """Click Proceed on every CONFIRM / ESCALATE pause of the thread's run until it ends."""
    state = await h.run_in(thread_ts)
    for _ in range(limit):
        pending = state.pending
        if pending is None:
            return state
        message = await h.intervention_message(state, pending.intervention_id)
        buttons = button_values(message)
        action = next(a for a in (ids.CONFIRM_PROCEED, ids.ESCALATE_PROCEED) if a in buttons)
        reply = await h.click(action, buttons[action], message=message)
        assert reply.status == 200
        state = await h.run_in(thread_ts)
    raise AssertionError(f"run still paused after {limit} Proceed clicks")


async def stored_answers(
    h: BotHarness, count: int, *, prefix: str, asker: str, confidence: float, ts_prefix: str
) -> list[RunState]:
    """`count` confident answers to VACATION_Q by `asker`, stored as finished runs in
    threads `{ts_prefix}000.0`, `{ts_prefix}001.0`, …: a 👎 on each is a "confident but
    wrong" vote."""
    runs = []
    for n in range(count):
        state = RunState(
            run_id=f"{prefix}{n:08d}",
            query=VACATION_Q,
            asker=asker,
            thread=ThreadKey(team_id=TEAM, channel_id=CHANNEL, thread_ts=f"{ts_prefix}{n:03d}.0"),
            status=RunStatus.ANSWERED,
            final_answer="Twenty days.",
            overall_confidence=confidence,
            level=InterventionLevel.SILENT,
        )
        await h.store.save(state)
        runs.append(state)
    return runs


FACILITIES = "facilities"
"""A second collection beside the sample knowledge base (`with_facilities`)."""


@pytest.fixture
async def with_facilities(data_dir: Path, tmp_path: Path) -> None:
    """A second collection, `facilities`, beside the sample knowledge base."""
    docs = tmp_path / "facilities"
    docs.mkdir()
    (docs / "bike-room.md").write_text(
        "# Bike room\n\nThe door code of the bike room is 4721. The bike room is in the "
        "basement, next to the showers, and is open from 7:00 to 21:00.\n",
        encoding="utf-8",
    )
    kb = open_knowledge_base(path=data_dir / "qdrant", url=None)
    try:
        reports = await ingest_paths(kb, [docs], collection=FACILITIES)
        assert sum(r.chunks for r in reports) >= 1
    finally:
        await kb.close()


FRONT_SECRET = "front-signing-secret-0123456789abcdef"
"""The signing secret of the `front` fixture's app."""


@pytest.fixture
async def front(tmp_path: Path) -> AsyncIterator[Front]:
    """The front as `grace serve` builds it (one workspace: its identity from
    `auth.test`), its worker not started: what it stores waits in the inbox."""
    async with FakeSlack() as fake:
        settings = Settings(
            _env_file=None,  # type: ignore[call-arg]
            data_dir=tmp_path / "grace",
            slack_bot_token="xoxb-front",
            slack_signing_secret=FRONT_SECRET,
            slack_api_url=fake.base_url,
            llm=LLMSettings(provider="offline"),
        )
        built = await create_front(settings, WorkerProcess())
        try:
            yield built
        finally:
            await built.close()
