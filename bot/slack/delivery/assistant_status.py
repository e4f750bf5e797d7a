"""The assistant pane's side channel: thread titles, suggested prompts and the status line.

Slack's Agents & AI Apps pane shows, above the composer, what the app is doing
("grace is searching the handbook…") and offers suggested prompts when a thread opens.
None of it is part of a run's state: these calls are best effort (no retries, a short
timeout), so a Slack hiccup never slows a run or loses an answer — the answer itself
goes through the outbox like every other run message.

A run lives in an assistant thread when its origin says so (`RunOrigin.ASSISTANT_PANE`).
Runs stored before runs had an origin are known by a message ref of kind `ASSISTANT_REF`
(still stored when the question is taken in), so such a run, resumed by another process
after a restart, still updates its status line.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from typing import Any, Protocol

from slack_sdk.web.async_client import AsyncWebClient

from agent.ports import RunEvent, RunEventType
from agent.schemas import ActionType, RunOrigin, RunState, ThreadKey
from blocks.limits import truncate
from bot.slack.delivery.web_api import slack_error

log = logging.getLogger(__name__)

ASSISTANT_REF = "assistant_thread"
"""Message-ref kind marking a run as asked in an assistant thread (ts = the thread's)."""
TITLE_CHARS = 60
STATUS_CHARS = 80
STATUS_TIMEOUT_S = 5
CLEAR = ""

_STATIC_STATUS: dict[RunEventType, str] = {
    RunEventType.RUN_STARTED: "is working out a plan…",
    RunEventType.RUN_RECOVERED: "is picking the question up again…",
    RunEventType.REPLANNED: "is changing its plan…",
    RunEventType.STEP_FINISHED: "is checking what it found…",
    RunEventType.INTERVENTION_ANSWERED: "is carrying on with your answer…",
}
_CLEARS = frozenset(
    {
        RunEventType.INTERVENTION_REQUESTED,
        RunEventType.ANSWER_READY,
        RunEventType.RUN_CANCELLED,
        RunEventType.RUN_FAILED,
    }
)


class RefStore(Protocol):
    """The part of the run store this needs (see `storage.run_store.SqlRunStore`)."""

    async def get_message_ref(self, *, run_id: str, kind: str) -> tuple[str, str] | None: ...

    async def set_message_ref(
        self, *, run_id: str, kind: str, channel_id: str, ts: str, digest: str | None = None
    ) -> None: ...


def readable_collection(name: str) -> str:
    """`team_handbook` → "team handbook"."""
    return name.replace("_", " ").replace("-", " ").strip() or "knowledge base"


def status_for(event: RunEvent, state: RunState) -> str | None:
    """The status line for what the run is doing now; CLEAR when it stopped working
    (paused for a person, answered, ended); None when this event changes nothing."""
    if event.type in _CLEARS:
        return CLEAR
    if event.type is RunEventType.STEP_STARTED and state.plan is not None:
        wanted = event.data.get("step_ids") or [event.step_id]
        steps = [s for s in state.plan.steps if s.step_id in wanted]
        if not steps:
            return None
        actions = {s.action for s in steps}
        search = next((s for s in steps if s.action is ActionType.RAG_SEARCH), None)
        if search is not None:
            where = readable_collection(search.collection or state.collection or "")
            about = f" for “{truncate(search.query, 40)}”" if search.query else ""
            return truncate(f"is searching the {where}{about}…", STATUS_CHARS)
        if ActionType.WEB_SEARCH in actions:
            return "is searching the web…"
        if ActionType.ASK_USER in actions:
            return "is preparing a question for you…"
        return "is putting the answer together…"
    return _STATIC_STATUS.get(event.type)


def status_client(client: AsyncWebClient) -> AsyncWebClient:
    """The app's client without its retry handlers: a status line is not worth waiting
    out a rate limit inside a run."""
    return AsyncWebClient(token=client.token, base_url=client.base_url, timeout=STATUS_TIMEOUT_S)


class AssistantThreads:
    """Talks to `assistant.threads.*`, and as a `RunObserver` keeps the status line of
    assistant-thread runs in step with what they are doing."""

    def __init__(self, *, client: AsyncWebClient, store: RefStore) -> None:
        self._client = client
        self._store = store
        self._known: dict[str, ThreadKey | None] = {}
        self._shown: dict[str, str] = {}

    # ------------------------------------------------------------------ marking

    async def mark(self, run_id: str, key: ThreadKey) -> None:
        """Remember that `run_id` (not registered yet, perhaps) answers in this thread."""
        await self._store.set_message_ref(
            run_id=run_id, kind=ASSISTANT_REF, channel_id=key.channel_id, ts=key.thread_ts
        )
        self._known[run_id] = key

    async def thread_of(self, state: RunState) -> ThreadKey | None:
        """The assistant thread of a run, or None for a run asked anywhere else."""
        if state.origin is RunOrigin.ASSISTANT_PANE:
            return state.thread
        if state.origin is RunOrigin.COMMAND_LINE:
            return None
        if state.run_id not in self._known:  # a Slack thread, or a pane run of before origins
            ref = await self._store.get_message_ref(run_id=state.run_id, kind=ASSISTANT_REF)
            self._known[state.run_id] = state.thread if ref is not None else None
        return self._known[state.run_id]

    # ------------------------------------------------------------------ Web API

    async def _call(self, method: str, call: Awaitable[Any]) -> bool:
        try:
            await call
        except Exception as exc:  # a status line is never worth failing a run for
            log.warning("%s failed: %s", method, slack_error(exc))
            return False
        return True

    async def set_status(self, key: ThreadKey, status: str) -> bool:
        """Show `status` under the thread ("grace is searching…"); CLEAR hides it."""
        return await self._call(
            "assistant.threads.setStatus",
            self._client.assistant_threads_setStatus(
                channel_id=key.channel_id, thread_ts=key.thread_ts, status=status
            ),
        )

    async def show(self, run_id: str, key: ThreadKey, status: str) -> None:
        """Set the status of a run's thread (so that the run's end clears it)."""
        self._shown[run_id] = status
        await self.set_status(key, status)

    async def set_title(self, key: ThreadKey, title: str) -> bool:
        return await self._call(
            "assistant.threads.setTitle",
            self._client.assistant_threads_setTitle(
                channel_id=key.channel_id,
                thread_ts=key.thread_ts,
                title=truncate(" ".join(title.split()), TITLE_CHARS),
            ),
        )

    async def set_prompts(
        self, key: ThreadKey, prompts: list[dict[str, str]], title: str | None = None
    ) -> bool:
        return await self._call(
            "assistant.threads.setSuggestedPrompts",
            self._client.assistant_threads_setSuggestedPrompts(
                channel_id=key.channel_id, thread_ts=key.thread_ts, prompts=prompts, title=title
            ),
        )

    # ------------------------------------------------------------------ observer

    async def on_event(self, event: RunEvent, state: RunState) -> None:
        status = status_for(event, state)
        if status is None or state.origin is RunOrigin.COMMAND_LINE:
            return
        try:
            key = await self.thread_of(state)
            if key is None or self._shown.get(state.run_id) == status:
                return
            if status == CLEAR and state.run_id not in self._shown:
                return  # nothing shown by this process: nothing to clear
            await self.show(state.run_id, key, status)
        finally:
            if state.status.is_final:  # forget the run: no more events will come
                self._shown.pop(state.run_id, None)
                self._known.pop(state.run_id, None)
