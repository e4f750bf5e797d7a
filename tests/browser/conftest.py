"""Browser acceptance tests: `grace dev` as a person runs it, driven in headless Chromium.

- `GraceDev` — `grace dev` as a subprocess (the real CLI, the real bot, the simulator)
  on a free port with its own `GRACE_DATA_DIR`; it can be stopped and started again on
  the same port and data dir.
- `browser` — Debian's Chromium (`/usr/bin/chromium`, or `$GRACE_CHROMIUM`) driven by
  Playwright. Playwright's own browser download is never used; `scripts/test.sh`
  installs Chromium when it is missing, and without it these tests fail (never skip).
- `SimPage` — the simulator's page in that browser, through its `data-testid` hooks,
  with a screenshot of every stage in `test-artifacts/browser/`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import sqlite3
import sys
import time
from collections.abc import AsyncIterator, Generator, Sequence
from pathlib import Path

import pytest
from playwright.async_api import (
    Browser,
    BrowserContext,
    Locator,
    Page,
    async_playwright,
    expect,
)

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "browser"
CHROMIUM = Path(os.environ.get("GRACE_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT = {"width": 1440, "height": 900}
TIMEOUT_MS = 20_000
START_LIMIT = 60.0
STOP_LIMIT = 30.0

ALICE = "U0ALICE"
BOB = "U0BOB"
BOT = "U0GRACEBOT"
GENERAL = "C0GENERAL1"

COMPARE_Q = "Why do multiple teams share an office day and how do I claim the remote work stipend?"
"""A complex question (plan approval) with one weak part (a confirmation), then answered."""
MONGOLIA_Q = "What is the capital of Mongolia?"
REFUSAL = "Only the person who asked, or an approver configured for GRACE, can answer this."

PLAN_RUN = "grace_plan_run"
PLAN_EDIT = "grace_plan_edit"
PLAN_CANCEL = "grace_plan_cancel"
PROCEED = ("grace_confirm_proceed", "grace_escalate_proceed")
FEEDBACK = "grace_feedback"
DETAILS = "grace_details"
CONFIRM_PROCEED = "grace_confirm_proceed"

expect.set_options(timeout=TIMEOUT_MS)


# --------------------------------------------------------------------------- grace dev


def grace_command() -> list[str]:
    """The `grace` console script next to this Python (what `pip install` puts on PATH)."""
    script = Path(sys.executable).with_name("grace")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "bot.cli"]


class GraceDev:
    """`grace dev` in a subprocess, on its own data dir; its output goes to `log_path`."""

    BANNER = re.compile(r"GRACE dev: open (http://127\.0\.0\.1:(\d+)/)")

    def __init__(
        self, data_dir: Path, log_path: Path, *, cwd: Path, options: Sequence[str] = ()
    ) -> None:
        self.data_dir = data_dir
        self.options = list(options)  # more `grace dev` options: `--pace 0.8`…
        self.log_path = log_path
        self.cwd = cwd
        self.port = 0  # the first start picks a free port; restarts reuse it
        self.url = ""
        self.process: asyncio.subprocess.Process | None = None
        self.starts = 0

    def env(self) -> dict[str, str]:
        """The caller's environment without GRACE/Slack/Gemini settings, plus ours."""
        prefixes = ("GRACE_", "GOOGLE_", "SLACK_", "QDRANT_", "GEMINI_")
        env = {k: v for k, v in os.environ.items() if not k.startswith(prefixes)}
        env.update(
            GRACE_DATA_DIR=str(self.data_dir),
            GRACE_LLM__PROVIDER="offline",
            GRACE_LOG_LEVEL="INFO",
            PYTHONUNBUFFERED="1",
        )
        return env

    async def start(self) -> None:
        """Start `grace dev --port PORT` and wait for its banner (Socket Mode connected)."""
        assert self.process is None, "already running"
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        self.starts += 1
        with self.log_path.open("a", encoding="utf-8") as log:
            log.write(f"\n===== grace dev start #{self.starts} (port {self.port}) =====\n")
            log.flush()
            self.process = await asyncio.create_subprocess_exec(
                *grace_command(),
                "dev",
                "--port",
                str(self.port),
                *self.options,
                cwd=self.cwd,  # no stray .env is read
                env=self.env(),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=log,
                stderr=asyncio.subprocess.STDOUT,
            )
        deadline = time.monotonic() + START_LIMIT
        while True:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")[offset:]
            match = self.BANNER.search(text)
            if match:
                self.url, self.port = match.group(1), int(match.group(2))
                return
            if self.process.returncode is not None:
                self.process = None
                pytest.fail(f"`grace dev` exited before it was ready:\n{text[-4000:]}")
            if time.monotonic() > deadline:
                await self.stop()
                pytest.fail(f"`grace dev` not ready after {START_LIMIT:.0f} s:\n{text[-4000:]}")
            await asyncio.sleep(0.1)

    async def stop(self) -> int:
        """Ctrl-C, as a person stops it; its exit code (killed if it hangs)."""
        process, self.process = self.process, None
        if process is None:
            return 0
        if process.returncode is None:
            process.send_signal(signal.SIGINT)
            try:
                await asyncio.wait_for(process.wait(), STOP_LIMIT)
            except TimeoutError:
                process.kill()
                await process.wait()
                pytest.fail(f"`grace dev` did not stop within {STOP_LIMIT:.0f} s of Ctrl-C")
        return int(process.returncode or 0)

    def runs(self, thread_ts: str) -> list[tuple[str, int]]:
        """(status, version) of every run in a #general thread, straight from the SQLite DB."""
        db = self.data_dir.resolve() / "grace.db"
        with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
            rows = conn.execute(
                "SELECT status, version FROM runs WHERE channel_id = ? AND thread_ts = ? "
                "ORDER BY created_at",
                (GENERAL, thread_ts),
            ).fetchall()
        return [(str(status), int(version)) for status, version in rows]


@contextlib.asynccontextmanager
async def running_dev(
    tmp_path: Path, name: str, *options: str, kind: type[GraceDev] = GraceDev
) -> AsyncIterator[GraceDev]:
    """A running `grace dev` (with these options) on a fresh data dir; its log is
    `NAME-grace-dev.log` under the artifacts."""
    log_path = ARTIFACTS / f"{name}-grace-dev.log"
    log_path.unlink(missing_ok=True)
    dev = kind(tmp_path / "grace-data", log_path, cwd=tmp_path, options=options)
    await dev.start()
    try:
        yield dev
    finally:
        await dev.stop()


@pytest.fixture
async def grace_dev(tmp_path: Path, request: pytest.FixtureRequest) -> AsyncIterator[GraceDev]:
    """A running `grace dev` with the sample knowledge base on a fresh data dir."""
    async with running_dev(tmp_path, request.node.name.removeprefix("test_")) as dev:
        yield dev


# --------------------------------------------------------------------------- browser


def require_chromium() -> Path:
    """Debian's Chromium, or a clear failure (these tests never skip)."""
    if not CHROMIUM.is_file():
        pytest.fail(
            f"Chromium not found at {CHROMIUM}: the browser tests need Debian's chromium "
            "(`apt-get install chromium fonts-noto-color-emoji fonts-noto-cjk`, which "
            "scripts/test.sh does when it can), or GRACE_CHROMIUM pointing at a Chromium binary. "
            "Playwright's own browser download is not used.",
            pytrace=False,
        )
    return CHROMIUM


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    """Headless Debian Chromium under Playwright (no Playwright browser download)."""
    chromium = require_chromium()
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(
            executable_path=str(chromium), headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield launched
        finally:
            await launched.close()


class SimPage:
    """The simulator's page in the browser, as a person uses it."""

    def __init__(self, page: Page, name: str) -> None:
        self.page = page
        self.name = name
        self.shots: list[Path] = []
        self.errors: list[str] = []
        page.on("pageerror", lambda error: self.errors.append(str(error)))

    # ------------------------------------------------------------ locators

    def testid(self, testid: str, root: Locator | None = None) -> Locator:
        """Elements with `data-testid=testid` (inside `root` if given)."""
        selector = f'[data-testid="{testid}"]'
        return root.locator(selector) if root is not None else self.page.locator(selector)

    @property
    def thread(self) -> Locator:
        """The thread pane."""
        return self.testid("thread-pane")

    @property
    def thread_messages(self) -> Locator:
        """The messages in the open thread (parent and replies)."""
        return self.testid("message", self.testid("thread-messages"))

    @property
    def thread_ephemerals(self) -> Locator:
        """The current person's ephemeral messages in the open thread."""
        return self.testid("ephemeral", self.testid("thread-messages"))

    @property
    def channel_messages(self) -> Locator:
        """The top-level messages in the channel view (not ephemerals)."""
        return self.testid("message", self.testid("message-list"))

    def channel_message(self, ts: str) -> Locator:
        """A top-level message in the channel view."""
        return self.channel_messages.and_(self.page.locator(f'[data-ts="{ts}"]'))

    def button(self, action_id: str, root: Locator | None = None) -> Locator:
        """Block Kit buttons with that action id (in the open thread unless `root`)."""
        scope = root if root is not None else self.testid("thread-messages")
        return scope.locator(f'button[data-testid="button"][data-action-id="{action_id}"]')

    def thumbs_up(self, root: Locator | None = None) -> Locator:
        """The 👍 of an answer's `feedback_buttons`."""
        return self.button(FEEDBACK, root).and_(self.page.locator('[data-feedback="positive"]'))

    def bot_message_with(self, action_id: str) -> Locator:
        """grace's messages in the open thread that carry a button `action_id`."""
        return self.thread_messages.filter(
            has=self.page.locator(f'button[data-action-id="{action_id}"]')
        ).and_(self.page.locator(f'[data-user="{BOT}"]'))

    # ------------------------------------------------------------ actions

    async def open(self, url: str, user: str = ALICE) -> None:
        """Open the page as `user` in #general and wait until it is live."""
        await self.page.goto(f"{url}?user={user}&channel={GENERAL}")
        await self.ready()

    async def ready(self) -> None:
        """The page has loaded the workspace and grace is connected over Socket Mode."""
        await expect(self.page.locator('[data-testid="app"][data-ready="true"]')).to_be_attached()
        await expect(self.testid("connection-status")).to_have_attribute("data-connected", "true")

    async def shot(self, stage: str) -> Path:
        """Save a screenshot of this stage: test-artifacts/browser/<test>-NN-<stage>.png."""
        await self.page.evaluate("() => window.graceSim && window.graceSim.render()")
        path = ARTIFACTS / f"{self.name}-{len(self.shots) + 1:02d}-{stage}.png"
        await self.page.screenshot(path=str(path))
        self.shots.append(path)
        return path

    async def ask(self, text: str) -> str:
        """Type `text` in the channel composer and press Enter; the new message's ts."""
        before = await self.channel_messages.count()
        box = self.testid("composer-input")
        await box.fill(text)
        await box.press("Enter")
        await expect(self.channel_messages).to_have_count(before + 1)
        ts = await self.channel_messages.last.get_attribute("data-ts")
        assert ts, "the question has no ts"
        return ts

    async def command(self, text: str) -> None:
        """Type a slash command in the channel composer and press Enter."""
        box = self.testid("composer-input")
        await box.fill(text)
        await box.press("Enter")

    async def open_thread(self, ts: str) -> None:
        """Open a message's thread from the channel view ("Reply in thread")."""
        message = self.channel_message(ts)
        await message.hover()
        await message.locator('[data-testid="reply-button"]').click()
        await expect(self.thread).to_have_attribute("data-thread-ts", ts)

    async def reply_in_thread(self, text: str) -> None:
        """Type a reply in the thread composer and send it."""
        box = self.testid("thread-composer-input")
        await box.fill(text)
        await self.testid("thread-composer-send").click()
        await expect(box).to_have_value("")

    async def click(self, button: Locator) -> None:
        """Click a Block Kit button, accepting its confirmation dialog if it has one."""
        confirm = await button.get_attribute("data-confirm")  # read first: a click may remove it
        await button.click()
        if confirm:
            await expect(self.testid("confirm-dialog")).to_be_visible()
            await self.testid("confirm-ok").click()

    async def switch_user(self, user: str) -> None:
        """Pick another person in the "You are" switcher."""
        await self.testid("user-switcher").select_option(user)
        await expect(self.testid("user-switcher")).to_have_value(user)
        await self.ready()

    async def proceed_until_answered(self, *, limit: float = 90.0) -> Locator:
        """Click Proceed on every confirm/escalation in the open thread until grace answers
        (its answer carries 👍/👎); the answer message."""
        answer = self.bot_message_with(FEEDBACK)
        clicked: set[str] = set()
        deadline = time.monotonic() + limit
        while not await answer.count():
            for action in PROCEED:
                enabled = await self.button(action).evaluate_all(
                    "buttons => buttons.filter(b => !b.disabled).map(b => b.dataset.messageTs)"
                )
                for ts in enabled:
                    if ts in clicked:
                        continue
                    clicked.add(ts)
                    kind = "confirm" if action == PROCEED[0] else "escalation"
                    await self.shot(f"{kind}-before-proceed")
                    message = self.thread_messages.and_(self.page.locator(f'[data-ts="{ts}"]'))
                    await self.click(self.button(action, message))
            assert time.monotonic() < deadline, "grace never answered"
            await asyncio.sleep(0.2)
        await expect(answer.last).to_be_visible()
        return answer.last


@pytest.fixture
async def context(browser: Browser) -> AsyncIterator[BrowserContext]:
    """A fresh browser profile (no localStorage from other tests)."""
    ctx = await browser.new_context(viewport=VIEWPORT)  # type: ignore[arg-type]
    ctx.set_default_timeout(TIMEOUT_MS)
    try:
        yield ctx
    finally:
        await ctx.close()


@pytest.fixture
async def sim(context: BrowserContext, request: pytest.FixtureRequest) -> AsyncIterator[SimPage]:
    """The simulator page; a screenshot is saved if the test fails, and page errors fail it."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    name = request.node.name.removeprefix("test_")
    for old in ARTIFACTS.glob(f"{name}-*.png"):
        old.unlink()
    page = SimPage(await context.new_page(), name)
    yield page
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:
        with contextlib.suppress(Exception):
            await page.page.screenshot(path=str(ARTIFACTS / f"{name}-FAILED.png"))
    assert not page.errors, f"JavaScript errors on the page: {page.errors}"


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Keep each phase's report on the test item (for the failure screenshot)."""
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report
