"""Agent sessions in the fake Slack (the Agent messaging experience).

- `agents.sessions.setStatus` / `agents.sessions.rename`, validated as Slack documents
  them: a session is created by its first `setStatus` (its `title` and
  `initiator_user_id` are used only then), one per thread; every status change is kept
  in `history`, so tests can read the sequence a thread went through.
- `refuse`: answer every call with this error (`unknown_method`, `not_allowed`), as a
  workspace without agent sessions does.
- `stop(...)`: a person clicks the Stop button Slack shows while a session is
  `processing`: the thread's open streams are stopped and the app gets
  `agent_session_stopped` (with their ts in `streaming_message_ts`).
- `open_messages(user)`: a person opens the app's Messages tab: `app_home_opened` with
  `tab: "messages"` (what replaces `assistant_thread_started`).
- For the page: `GET /sim/sessions/state`, `POST /sim/sessions/stop {user, channel,
  thread_ts}`, `POST /sim/sessions/messages_opened {user}`; each change is a workspace
  event of kind `session_updated`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from aiohttp import web

from bot.simulator.home import app_home_opened_envelope
from bot.simulator.panes import body_of, no_person, person
from bot.simulator.requests import event_envelope
from bot.simulator.workspace import SlackWorkspace, WorkspaceError

STATUSES = ("processing", "active", "suspended", "closed")
MAX_TITLE = 200
UPDATED = "session_updated"


@dataclass
class AgentSession:
    """One thread's agent session as Slack shows it."""

    channel: str
    thread_ts: str
    status: str
    title: str = ""
    initiator: str = ""
    history: list[str] = field(default_factory=list)
    """Every status set, in order (the first one created the session)."""

    @property
    def stoppable(self) -> bool:
        """Slack shows the Stop button while the session is processing."""
        return self.status == "processing"


def agent_session_stopped_envelope(
    *,
    user: str,
    channel: str,
    thread_ts: str,
    streaming_message_ts: list[str] | None = None,
    team_id: str,
    api_app_id: str,
    bot_user_id: str,
    event_id: str | None = None,
) -> dict[str, Any]:
    """The `agent_session_stopped` event_callback (team_id on the envelope only)."""
    event = {
        "type": "agent_session_stopped",
        "channel": channel,
        "thread_ts": thread_ts,
        "user": user,
        "streaming_message_ts": list(streaming_message_ts or []),
        "event_ts": f"{time.time():.6f}",
    }
    return event_envelope(
        event, team_id=team_id, api_app_id=api_app_id, bot_user_id=bot_user_id, event_id=event_id
    )


def _text(params: dict[str, Any], name: str) -> str:
    value = params.get(name)
    return value if isinstance(value, str) else ""


class AgentSessions:
    """The agent sessions of a workspace and the Web API methods that change them."""

    def __init__(self, workspace: SlackWorkspace) -> None:
        self.workspace = workspace
        self.sessions: dict[tuple[str, str], AgentSession] = {}
        self.refuse: str | None = None
        """Answer every `agents.sessions.*` call with this error (None: serve them)."""

    def handlers(self) -> dict[str, Any]:
        """Web API method → handler (see `webapi.Handler`)."""
        return {
            "agents.sessions.setStatus": self._set_status,
            "agents.sessions.rename": self._rename,
        }

    # ------------------------------------------------------------------ state

    def session(self, channel: str, thread_ts: str) -> AgentSession | None:
        return self.sessions.get((channel, thread_ts))

    def history(self, channel: str, thread_ts: str) -> list[str]:
        """The statuses a thread's session went through (empty: no session)."""
        found = self.session(channel, thread_ts)
        return list(found.history) if found else []

    def _changed(self, session: AgentSession) -> None:
        data = {**asdict(session), "stoppable": session.stoppable}
        self.workspace._emit(UPDATED, session.channel, session.thread_ts, thread=data)

    def to_json(self) -> list[dict[str, Any]]:
        return [{**asdict(s), "stoppable": s.stoppable} for s in self.sessions.values()]

    # ------------------------------------------------------------------ Web API

    def _thread(self, params: dict[str, Any]) -> tuple[str, str]:
        if self.refuse:
            raise WorkspaceError(self.refuse)
        channel, thread_ts = _text(params, "channel_id"), _text(params, "thread_ts")
        if not channel:
            raise WorkspaceError("invalid_arguments", "channel_id is required")
        if not thread_ts:
            raise WorkspaceError("invalid_arguments", "thread_ts is required for a thread")
        self.workspace.channel_info(channel)  # channel_not_found
        return channel, thread_ts

    def _set_status(self, params: dict[str, Any], call: object) -> dict[str, Any]:
        status = _text(params, "status")
        channel, thread_ts = self._thread(params)
        if status not in STATUSES:
            raise WorkspaceError("invalid_status", f"one of {', '.join(STATUSES)}")
        title = _text(params, "title")
        if len(title) > MAX_TITLE:
            raise WorkspaceError("invalid_title", f"at most {MAX_TITLE} characters")
        session = self.session(channel, thread_ts)
        if session is None:  # created now: title and initiator count only here
            session = AgentSession(
                channel=channel,
                thread_ts=thread_ts,
                status=status,
                title=title,
                initiator=_text(params, "initiator_user_id"),
            )
            self.sessions[(channel, thread_ts)] = session
        session.status = status
        session.history.append(status)
        self._changed(session)
        return {"status": status, "title": session.title}

    def _rename(self, params: dict[str, Any], call: object) -> dict[str, Any]:
        title = _text(params, "title")
        channel, thread_ts = self._thread(params)
        if not 1 <= len(title) <= MAX_TITLE:
            raise WorkspaceError("invalid_title", f"1 to {MAX_TITLE} characters")
        session = self.session(channel, thread_ts)
        if session is None:
            raise WorkspaceError("session_not_found", f"{channel}/{thread_ts}")
        session.title = title
        self._changed(session)
        return {"title": title}

    # ------------------------------------------------------------------ people

    def stop(self, channel: str, thread_ts: str, user: str) -> dict[str, Any]:
        """`user` clicks Stop: the thread's open streams end, and this returns the
        `agent_session_stopped` envelope to deliver. The status is left to the app."""
        session = self.session(channel, thread_ts)
        if session is None or not session.stoppable:
            raise WorkspaceError("not_processing", f"{channel}/{thread_ts}")
        stopped = []
        for message in self.workspace.thread(channel, thread_ts):
            if message.streaming:
                self.workspace.stop_stream(channel, message.ts)
                stopped.append(message.ts)
        ws = self.workspace
        return agent_session_stopped_envelope(
            user=user,
            channel=channel,
            thread_ts=thread_ts,
            streaming_message_ts=stopped,
            team_id=ws.team_of(channel),
            api_app_id=ws.app_id,
            bot_user_id=ws.bot_user_id,
        )

    def open_messages(self, user: str, channel: str) -> dict[str, Any]:
        """`user` opens the app's Messages tab (their DM `channel` with the app)."""
        ws = self.workspace
        return app_home_opened_envelope(
            user=user,
            channel=channel,
            tab="messages",
            event_ts=f"{time.time():.6f}",
            team_id=ws.team_of(channel),
            api_app_id=ws.app_id,
            bot_user_id=ws.bot_user_id,
        )

    # ------------------------------------------------------------------ the page

    def add_routes(
        self,
        app: web.Application,
        send_event: Callable[[dict[str, Any]], object],
        dm_of: Callable[[str], str],
    ) -> None:
        """`GET /sim/sessions/state`, `POST /sim/sessions/stop`,
        `POST /sim/sessions/messages_opened`; `send_event` delivers an Events API
        envelope to the app, `dm_of` names a person's DM with it."""

        async def state(request: web.Request) -> web.Response:
            return web.json_response({"sessions": self.to_json()})

        async def stop(request: web.Request) -> web.Response:
            body = await body_of(request)
            user = person(self.workspace, body)
            if user is None:
                return no_person()
            channel, thread_ts = str(body.get("channel") or ""), str(body.get("thread_ts") or "")
            try:
                envelope = self.stop(channel, thread_ts, user)
            except WorkspaceError as exc:
                return web.json_response({"ok": False, "error": exc.error}, status=400)
            send_event(envelope)
            return web.json_response({"ok": True, "event": envelope["event"]})

        async def messages_opened(request: web.Request) -> web.Response:
            user = person(self.workspace, await body_of(request))
            if user is None:
                return no_person()
            envelope = self.open_messages(user, dm_of(user))
            send_event(envelope)
            return web.json_response({"ok": True, "event": envelope["event"]})

        app.router.add_get("/sim/sessions/state", state)
        app.router.add_post("/sim/sessions/stop", stop)
        app.router.add_post("/sim/sessions/messages_opened", messages_opened)
