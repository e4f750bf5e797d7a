"""Agent sessions: a run's thread as a Slack agent session with a lifecycle and a Stop
button (`agents.sessions.setStatus`, `agents.sessions.rename`).

The session's status is part of what a run's thread should show, so it is brought in
step by the outbox's delivery pass (`SlackPublisher`, after the run's messages): never
on the ack path, never lost (the outbox row stays due until the pass succeeds), retried
on 429 / 5xx / timeouts like every other run message. What the pass wants:

- `processing` while the run is planning or running — titled with its question when the
  call creates the session (Slack ignores a title for an existing session; a thread
  GRACE has never titled whose session Slack already named otherwise is renamed once);
- `suspended` while it waits for a person (paused);
- `closed` once it is answered, cancelled (the Stop button too), expired or failed.

The status last set is stored as the run's message ref of kind `session` (its digest is
the status), so a repeated pass calls nothing. A thread's older run never overwrites the
session of a newer one.

Where Slack has no agent sessions — `unknown_method` (an older Slack, a simulator), or
`not_allowed` (the app is not an agent there, e.g. it still uses the legacy assistant
pane) — the calls are skipped cleanly and that is remembered in this process (for every
workspace after `unknown_method`, for that workspace after `not_allowed`), so it is not
asked again for every run. Any other refusal is logged and that status is not retried.

python-slack-sdk has no wrapper for these methods: they are `api_call`s with a JSON body
(the methods take `application/json` or a form).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Awaitable
from enum import StrEnum
from typing import Any, Protocol

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.web.async_slack_response import AsyncSlackResponse

from agent.schemas import RunOrigin, RunState, RunStatus, ThreadKey
from blocks.limits import truncate
from bot.slack.delivery.web_api import classify_failure, slack_error

log = logging.getLogger(__name__)

SET_STATUS = "agents.sessions.setStatus"
RENAME = "agents.sessions.rename"
SESSION = "session"
"""Message-ref kind of a run's session: (channel, thread_ts, the status last set)."""
SESSION_TITLE = "session_title"
"""Message-ref kind (owner: `thread_owner`) of a thread GRACE has titled."""
TITLE_CHARS = 200
UNAVAILABLE = frozenset({"unknown_method", "not_allowed"})
"""Errors that mean "no agent sessions here": skipped and remembered in this process."""
STOP_WARNING = "missing_agent_session_stopped_event_subscription"


class SessionStatus(StrEnum):
    PROCESSING = "processing"
    ACTIVE = "active"
    SUSPENDED = "suspended"
    CLOSED = "closed"


def wanted_status(state: RunState) -> SessionStatus | None:
    """The session status a run's thread should show; None for a command-line run."""
    if state.origin is RunOrigin.COMMAND_LINE or not state.thread.thread_ts:
        return None
    if state.status is RunStatus.PAUSED:
        return SessionStatus.SUSPENDED
    if state.status.is_final:
        return SessionStatus.CLOSED
    return SessionStatus.PROCESSING


def session_title(state: RunState) -> str:
    """The question, on one line, within Slack's 200 characters."""
    return truncate(" ".join(state.query.split()), TITLE_CHARS) or "Question"


def thread_owner(key: ThreadKey) -> str:
    """The message-ref owner of a thread's session title (an id no run ever has)."""
    thread = f"{key.team_id}:{key.channel_id}:{key.thread_ts}"
    return "session:" + hashlib.sha256(thread.encode()).hexdigest()[:16]


def api_error(exc: BaseException) -> str | None:
    """Slack's `error` of an `ok: false` answer, if that is what `exc` is."""
    if isinstance(exc, SlackApiError):
        data = getattr(exc.response, "data", None)
        if isinstance(data, dict) and isinstance(data.get("error"), str):
            return str(data["error"])
    return None


class SessionRefs(Protocol):
    """The pass's view of the run's stored message refs (`thread_sync.ThreadSync`)."""

    def ref(self, kind: str) -> tuple[str, str, str | None] | None: ...

    async def remember(self, kind: str, channel: str, ts: str, digest: str | None) -> None: ...


class SessionStore(Protocol):
    """The part of the run store this needs (`storage.run_store.SqlRunStore`)."""

    async def get_message_ref(self, *, run_id: str, kind: str) -> tuple[str, str] | None: ...

    async def set_message_ref(
        self, *, run_id: str, kind: str, channel_id: str, ts: str, digest: str | None = None
    ) -> None: ...

    async def latest_run_in_thread(self, key: ThreadKey) -> RunState | None: ...


class AgentSessions:
    """Keeps a run's thread session in step with the run (see the module doc); one per
    process, given to `SlackPublisher` as its `sessions`."""

    def __init__(self, *, client: AsyncWebClient, store: SessionStore) -> None:
        self._client = client
        self._store = store
        self._unavailable: str | None = None
        """Set after `unknown_method`: no agent sessions in this process at all."""
        self._refused: dict[str, str] = {}
        """team → the error after which its sessions are skipped (`not_allowed`)."""
        self._warned: set[str] = set()

    def available(self, team_id: str) -> bool:
        return self._unavailable is None and team_id not in self._refused

    async def sync(self, state: RunState, refs: SessionRefs) -> None:
        """Set the thread's session to what the run wants, once. Raises `RetryLater`
        when another try may succeed."""
        wanted = wanted_status(state)
        if wanted is None:
            return
        key = state.thread
        shown = refs.ref(SESSION)
        if shown is not None and shown[2] == wanted.value:
            return
        if not self.available(key.team_id):
            return
        latest = await self._store.latest_run_in_thread(key)
        if latest is not None and latest.run_id != state.run_id:
            return  # a newer run owns the thread's session now
        args: dict[str, Any] = {
            "channel_id": key.channel_id,
            "thread_ts": key.thread_ts,
            "status": wanted.value,
        }
        title = session_title(state)
        if wanted is SessionStatus.PROCESSING:
            args["title"] = title  # used by Slack only when this call creates the session
            if state.asker[:1] in ("U", "W"):
                args["initiator_user_id"] = state.asker
        call = self._client.api_call("agents.sessions.setStatus", json=args)
        response = await self._call(SET_STATUS, call, key)
        if response is None:
            await refs.remember(SESSION, key.channel_id, key.thread_ts, wanted.value)
            return  # refused for good: logged, not tried again for this status
        if response is False:
            return  # no agent sessions here (remembered)
        self._warn(response)
        if wanted is SessionStatus.PROCESSING:
            await self._title(key, title, response.get("title"))
        await refs.remember(SESSION, key.channel_id, key.thread_ts, wanted.value)

    async def _title(self, key: ThreadKey, title: str, shown: Any) -> None:
        """The first time GRACE works in a thread: if Slack's session already had another
        title (it existed before), rename it to the question."""
        owner = thread_owner(key)
        if await self._store.get_message_ref(run_id=owner, kind=SESSION_TITLE) is not None:
            return
        if isinstance(shown, str) and shown and shown != title:
            args = {"channel_id": key.channel_id, "thread_ts": key.thread_ts, "title": title}
            await self._call(
                RENAME, self._client.api_call("agents.sessions.rename", json=args), key
            )
        await self._store.set_message_ref(
            run_id=owner, kind=SESSION_TITLE, channel_id=key.channel_id, ts=key.thread_ts
        )

    async def _call(
        self, method: str, call: Awaitable[AsyncSlackResponse], key: ThreadKey
    ) -> dict[str, Any] | bool | None:
        """Slack's answer; False when the method is unavailable here (now remembered);
        None for any other permanent refusal (logged). Raises `RetryLater`."""
        try:
            response = await call
        except Exception as exc:
            error = api_error(exc)
            if error in UNAVAILABLE:
                self._skip(key.team_id, str(error))
                return False
            retry = classify_failure(exc, method)
            if retry is not None:
                raise retry from exc
            log.error("%s refused: %s", method, slack_error(exc))
            return None
        data = response.data
        return data if isinstance(data, dict) else {}

    def _skip(self, team_id: str, error: str) -> None:
        if error == "unknown_method":
            if self._unavailable is None:
                log.warning("Slack has no agent sessions here (%s): not setting them", error)
            self._unavailable = error
            return
        if team_id not in self._refused:
            log.warning(
                "this workspace does not allow agent sessions (%s): not setting them", error
            )
        self._refused[team_id] = error

    def _warn(self, response: dict[str, Any]) -> None:
        warning = response.get("warning")
        if not isinstance(warning, str) or not warning:
            return
        for item in warning.split(","):
            if item not in self._warned:
                self._warned.add(item)
                hint = " (subscribe to agent_session_stopped)" if item == STOP_WARNING else ""
                log.warning("%s warned: %s%s", SET_STATUS, item, hint)
