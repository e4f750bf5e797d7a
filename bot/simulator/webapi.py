"""The Web API half of the fake Slack: an aiohttp server over a `SlackWorkspace`.

It records every call and can fail on purpose (429 with Retry-After, `ok: false`), so
tests can check what the bot sent and how it copes. Point the real client at it:
`AsyncWebClient(token="xoxb-test", base_url=fake.base_url)`. The simulator
(`server.py`) is this same server with Socket Mode and the web page added.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from bot.simulator.assistant import AssistantPane
from bot.simulator.home import HomeTabs
from bot.simulator.oauth import FakeOAuth
from bot.simulator.sessions import AgentSessions
from bot.simulator.workspace import SlackWorkspace, StoredMessage, WorkspaceError

_JSON_PARAMS = ("blocks", "attachments", "view", "metadata", "chunks")
APP_TOKEN_METHODS = frozenset({"apps.connections.open"})
"""Methods that take an app-level token (`xapp-…`) instead of a bot token."""
CLIENT_METHODS = frozenset({"oauth.v2.access"})
"""Methods authenticated by the app's client id and secret, not a token."""


@dataclass
class RecordedCall:
    """One Web API request as the fake received it."""

    method: str
    params: dict[str, Any]
    headers: dict[str, str]
    http_method: str
    time: float  # time.monotonic() when received
    status: int = 200
    response: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Failure:
    status: int
    retry_after: int
    remaining: int
    error: str | None


@dataclass
class _Outage:
    method: str  # "*": every method
    until: float  # time.monotonic()
    status: int
    retry_after: int
    plain_text: bool


Handler = Callable[[dict[str, Any], RecordedCall], dict[str, Any] | Awaitable[dict[str, Any]]]
"""A Web API method: request params (and the recorded call) → the fields of an ok answer.

Raise `WorkspaceError` for Slack's `{"ok": false, "error": ...}`; may be async."""


class FakeSlack:
    """A fake Slack Web API on 127.0.0.1 (random port), as an async context manager.

    ```
    async with FakeSlack() as fake:
        client = AsyncWebClient(token="xoxb-test", base_url=fake.base_url)
        await client.chat_postMessage(channel="C1", text="hi")
        assert fake.calls_to("chat.postMessage")
    ```
    """

    def __init__(
        self,
        workspace: SlackWorkspace | None = None,
        *,
        require_token: bool = True,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.workspace = workspace or SlackWorkspace()
        self.require_token = require_token
        self.host = host
        self.calls: list[RecordedCall] = []
        self._failures: dict[str, list[_Failure]] = defaultdict(list)
        self._delays: dict[str, float] = {}
        self._outages: list[_Outage] = []
        self._slow_answers: dict[str, list[float]] = defaultdict(list)
        self._runner: web.AppRunner | None = None
        self._wanted_port = port
        self.port: int = 0
        self._handlers: dict[str, Handler] = {
            "auth.test": self._auth_test,
            "chat.postMessage": self._chat_post_message,
            "chat.update": self._chat_update,
            "chat.startStream": self._chat_start_stream,
            "chat.appendStream": self._chat_append_stream,
            "chat.stopStream": self._chat_stop_stream,
            "chat.postEphemeral": self._chat_post_ephemeral,
            "chat.getPermalink": self._chat_get_permalink,
            "conversations.replies": self._conversations_replies,
            "views.open": self._views_open,
            "views.update": self._views_update,
            "reactions.add": self._reactions_add,
            "users.info": self._users_info,
            "conversations.history": self._conversations_history,
            "conversations.info": self._conversations_info,
            "conversations.members": self._conversations_members,
            "usergroups.users.list": self._usergroups_users_list,
        }
        # ---- the App Home tab (views.publish): see bot/simulator/home.py
        self.home = HomeTabs(self.workspace)
        self._handlers.update(self.home.handlers())
        # ---- the assistant pane (assistant.threads.*): see bot/simulator/assistant.py
        self.assistant = AssistantPane(self.workspace)
        self._handlers.update(self.assistant.handlers())
        # ---- agent sessions (agents.sessions.*): see bot/simulator/sessions.py
        self.sessions = AgentSessions(self.workspace)
        self._handlers.update(self.sessions.handlers())
        self.oauth: FakeOAuth | None = None

    def enable_oauth(self, oauth: FakeOAuth) -> FakeOAuth:
        """Installs through OAuth (issue 21): `oauth.v2.access` answers, and bot tokens
        are the ones `oauth` issued — each acts for its own workspace (`auth.test`
        answers with it); an unknown, revoked or expired one is refused."""
        self.oauth = oauth
        self._handlers.update(oauth.handlers())
        return oauth

    def tokens_used(self, method: str) -> list[str]:
        """The bearer token of each recorded call to `method`, in order."""
        return [
            c.headers.get("Authorization", "").removeprefix("Bearer ").strip()
            for c in self.calls_to(method)
        ]

    # ------------------------------------------------------------------ lifecycle

    @property
    def origin(self) -> str:
        """`http://127.0.0.1:PORT` of the running server."""
        if not self.port:
            raise RuntimeError("FakeSlack is not running: use `async with FakeSlack() as fake`")
        host = "127.0.0.1" if self.host in ("0.0.0.0", "") else self.host
        return f"http://{host}:{self.port}"

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:PORT/api/` — the trailing slash is what AsyncWebClient needs."""
        return f"{self.origin}/api/"

    def add_method(self, method: str, handler: Handler) -> None:
        """Answer (or override) a Web API method, e.g. `apps.connections.open`."""
        self._handlers[method] = handler

    def handler(self, method: str) -> Handler:
        """What answers `method` now: an override added with `add_method` can wrap it."""
        return self._handlers[method]

    def add_routes(self, app: web.Application) -> None:
        """Mount the Web API (`/api/{method}`) on an aiohttp application."""
        app.router.add_route("*", "/api/{method}", self._dispatch)

    def build_app(self) -> web.Application:
        """The aiohttp application (routes only; state lives in `self.workspace`)."""
        app = web.Application()
        self.add_routes(app)
        return app

    async def start(self) -> None:
        """Listen on `host`:`port` (port 0: a free one, see `self.port`)."""
        self._runner = web.AppRunner(self.build_app(), access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self._wanted_port)
        await site.start()
        self.port = int(self._runner.addresses[0][1])

    async def stop(self) -> None:
        """Close the listening socket and every open connection."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeSlack:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # ------------------------------------------------------------------ scripting

    def fail_next(
        self,
        method: str,
        status: int = 429,
        *,
        retry_after: int = 1,
        times: int = 1,
        error: str | None = None,
    ) -> None:
        """Make the next `times` calls to `method` fail.

        With `error`, Slack's usual HTTP 200 `{"ok": false, "error": error}`; otherwise
        HTTP `status` — for 429 with a `Retry-After: retry_after` header and `ratelimited`.
        """
        self._failures[method].append(
            _Failure(status=status, retry_after=retry_after, remaining=times, error=error)
        )

    def fail_for(
        self,
        method: str,
        seconds: float,
        status: int = 500,
        *,
        retry_after: int = 1,
        plain_text: bool = False,
    ) -> None:
        """Fail every call to `method` ("*": to any method) for the next `seconds`: HTTP
        `status` with a JSON body, or a plain-text one (as a proxy in front of Slack
        answers); a 429 carries `Retry-After: retry_after`."""
        self._outages.append(
            _Outage(
                method=method,
                until=time.monotonic() + seconds,
                status=status,
                retry_after=retry_after,
                plain_text=plain_text,
            )
        )

    def clear_faults(self) -> None:
        """End every outage, queued failure and late answer now."""
        self._outages.clear()
        self._failures.clear()
        self._slow_answers.clear()

    def answer_late(self, method: str, seconds: float, *, times: int = 1) -> None:
        """Do the next `times` calls to `method`, but answer each only after `seconds`:
        the client times out although Slack took the call (an ambiguous failure)."""
        self._slow_answers[method].extend([seconds] * times)

    def _outage(self, method: str) -> _Outage | None:
        now = time.monotonic()
        self._outages = [o for o in self._outages if o.until > now]
        return next((o for o in self._outages if o.method in ("*", method)), None)

    def set_delay(self, method: str, seconds: float) -> None:
        """Answer `method` only after `seconds` (to test timeouts and coalescing)."""
        self._delays[method] = seconds

    def calls_to(self, method: str) -> list[RecordedCall]:
        """The recorded calls to one API method, in order (failed ones included)."""
        return [c for c in self.calls if c.method == method]

    def reset_calls(self) -> None:
        """Forget the recorded calls (the workspace is kept)."""
        self.calls.clear()

    # convenience pass-throughs to the store
    def messages(self, channel: str) -> list[StoredMessage]:
        """Top-level messages of a channel (see `SlackWorkspace.messages`)."""
        return self.workspace.messages(channel)

    def thread(self, channel: str, ts: str) -> list[StoredMessage]:
        """A thread's parent and replies (see `SlackWorkspace.thread`)."""
        return self.workspace.thread(channel, ts)

    def message(self, channel: str, ts: str) -> StoredMessage:
        """One message's current state (see `SlackWorkspace.message`)."""
        return self.workspace.message(channel, ts)

    # ------------------------------------------------------------------ dispatch

    @staticmethod
    async def _params(request: web.Request) -> dict[str, Any]:
        params: dict[str, Any] = dict(request.query)
        if request.can_read_body:
            if request.content_type == "application/json":
                body = await request.json()
                if isinstance(body, dict):
                    params.update(body)
            else:
                form = await request.post()
                params.update({k: v for k, v in form.items() if isinstance(v, str)})
        for key in _JSON_PARAMS:
            value = params.get(key)
            if isinstance(value, str) and value.strip()[:1] in {"[", "{"}:
                try:
                    params[key] = json.loads(value)
                except json.JSONDecodeError:
                    pass
        return params

    def _take_failure(self, method: str) -> _Failure | None:
        queue = self._failures.get(method)
        if not queue:
            return None
        failure = queue[0]
        failure.remaining -= 1
        if failure.remaining <= 0:
            queue.pop(0)
        return failure

    def _auth_error(self, call: RecordedCall) -> str | None:
        if not self.require_token or call.method in CLIENT_METHODS:
            return None
        auth = call.headers.get("Authorization", "")
        token = auth.removeprefix("Bearer ").strip() if auth else str(call.params.get("token", ""))
        if not token:
            return "not_authed"
        if not token.startswith(("xox", "xapp-")):
            return "invalid_auth"
        if token.startswith("xapp-") != (call.method in APP_TOKEN_METHODS):
            return "not_allowed_token_type"
        if self.oauth is not None and not token.startswith("xapp-"):
            return self.oauth.token_error(token) or self._foreign_channel(token, call.params)
        return None

    def _foreign_channel(self, token: str, params: dict[str, Any]) -> str | None:
        """`channel_not_found` for a token of one workspace naming another's channel, as
        Slack answers: a reply must go out with the token of the channel's own team."""
        assert self.oauth is not None
        team = self.oauth.team_of(token)
        info = self.workspace.channels.get(str(params.get("channel") or "")) or {}
        owner = info.get("context_team_id")  # set only where one fake holds several teams
        if team is None or owner is None:
            return None
        return None if owner == team.team_id else "channel_not_found"

    async def _dispatch(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        call = RecordedCall(
            method=method,
            params=await self._params(request),
            headers=dict(request.headers),
            http_method=request.method,
            time=time.monotonic(),
        )
        self.calls.append(call)
        delay = self._delays.get(method)
        if delay:
            await asyncio.sleep(delay)

        headers: dict[str, str] = {}
        outage = self._outage(method) if method != "auth.test" else None
        if outage is not None:
            call.status = outage.status
            if outage.status == 429:
                headers["Retry-After"] = str(outage.retry_after)
            if outage.plain_text:
                call.response = {"ok": False, "error": "plain_text"}
                return web.Response(
                    text="Internal Server Error", status=outage.status, headers=headers
                )
            error = "ratelimited" if outage.status == 429 else f"http_{outage.status}"
            call.response = {"ok": False, "error": error}
            return web.json_response(call.response, status=outage.status, headers=headers)
        failure = self._take_failure(method)
        if failure is not None and failure.error is not None:
            body: dict[str, Any] = {"ok": False, "error": failure.error}
        elif failure is not None:
            call.status = failure.status
            error = "ratelimited" if failure.status == 429 else f"http_{failure.status}"
            body = {"ok": False, "error": error}
            if failure.status == 429:
                headers["Retry-After"] = str(failure.retry_after)
        elif (auth_error := self._auth_error(call)) is not None:
            body = {"ok": False, "error": auth_error}
        elif (handler := self._handlers.get(method)) is None:
            body = {"ok": False, "error": "unknown_method"}
        else:
            try:
                result = handler(call.params, call)
                if inspect.isawaitable(result):
                    result = await result
                body = {"ok": True, **result}
            except WorkspaceError as exc:
                body = {"ok": False, "error": exc.error}
                if exc.detail:
                    body["response_metadata"] = {"messages": [f"[ERROR] {exc.detail}"]}
        call.response = body
        late = self._slow_answers.get(method)
        if late:
            await asyncio.sleep(late.pop(0))
        return web.json_response(body, status=call.status, headers=headers)

    # ------------------------------------------------------------------ methods

    def _auth_test(self, params: dict[str, Any], call: RecordedCall) -> dict[str, Any]:
        if self.oauth is not None:
            token = call.headers.get("Authorization", "").removeprefix("Bearer ").strip()
            answer = self.oauth.auth_test(token or str(params.get("token", "")))
            if answer is not None:
                return answer
        ws = self.workspace
        return {
            "url": "https://fake-slack.local/",
            "team": ws.team_name,
            "user": ws.bot_name,
            "team_id": ws.team_id,
            "user_id": ws.bot_user_id,
            "bot_id": ws.bot_id,
            "app_id": ws.app_id,
            "is_enterprise_install": False,
        }

    def _chat_post_message(self, params: dict[str, Any], call: RecordedCall) -> dict[str, Any]:
        message = self.workspace.post_message(
            str(params.get("channel", "")),
            text=str(params.get("text") or ""),
            blocks=params.get("blocks") or None,
            thread_ts=params.get("thread_ts") or None,
            metadata=params.get("metadata") if isinstance(params.get("metadata"), dict) else None,
        )
        return {"channel": message.channel, "ts": message.ts, "message": message.to_api()}

    def _chat_update(self, params: dict[str, Any], call: RecordedCall) -> dict[str, Any]:
        channel = str(params.get("channel", ""))
        message = self.workspace.update_message(
            channel,
            str(params.get("ts", "")),
            text=params.get("text") if "text" in params else None,
            blocks=params.get("blocks") if "blocks" in params else None,
        )
        return {
            "channel": channel,
            "ts": message.ts,
            "text": message.text,
            "message": message.to_api(),
        }

    def _chat_start_stream(self, params: dict[str, Any], call: RecordedCall) -> dict[str, Any]:
        message = self.workspace.start_stream(
            str(params.get("channel", "")),
            thread_ts=params.get("thread_ts") or None,
            recipient_user_id=params.get("recipient_user_id") or None,
            recipient_team_id=params.get("recipient_team_id") or None,
            task_display_mode=params.get("task_display_mode") or None,
            chunks=params.get("chunks"),
            markdown_text=str(params.get("markdown_text") or ""),
        )
        return {"channel": message.channel, "ts": message.ts}

    def _chat_append_stream(self, params: dict[str, Any], call: RecordedCall) -> dict[str, Any]:
        channel = str(params.get("channel", ""))
        message = self.workspace.append_stream(
            channel,
            str(params.get("ts", "")),
            chunks=params.get("chunks"),
            markdown_text=str(params.get("markdown_text") or ""),
        )
        return {"channel": channel, "ts": message.ts}

    def _chat_stop_stream(self, params: dict[str, Any], call: RecordedCall) -> dict[str, Any]:
        channel = str(params.get("channel", ""))
        metadata = params.get("metadata")
        message = self.workspace.stop_stream(
            channel,
            str(params.get("ts", "")),
            chunks=params.get("chunks"),
            markdown_text=str(params.get("markdown_text") or ""),
            blocks=params.get("blocks") or None,
            metadata=metadata if isinstance(metadata, dict) else None,
        )
        return {"channel": channel, "ts": message.ts, "message": message.to_api()}

    def _chat_post_ephemeral(self, params: dict[str, Any], call: RecordedCall) -> dict[str, Any]:
        message = self.workspace.post_ephemeral(
            str(params.get("channel", "")),
            str(params.get("user", "")),
            text=str(params.get("text") or ""),
            blocks=params.get("blocks") or None,
            thread_ts=params.get("thread_ts") or None,
        )
        return {"message_ts": message.ts}

    def _chat_get_permalink(self, params: dict[str, Any], call: RecordedCall) -> dict[str, Any]:
        channel = str(params.get("channel", ""))
        link = self.workspace.permalink(channel, str(params.get("message_ts", "")))
        return {"channel": channel, "permalink": link}

    def _conversations_replies(self, params: dict[str, Any], call: RecordedCall) -> dict[str, Any]:
        channel = str(params.get("channel", ""))
        thread = self.workspace.thread(channel, str(params.get("ts", "")))
        if not thread:
            raise WorkspaceError("thread_not_found")
        return {"messages": [m.to_api() for m in thread], "has_more": False}

    def _views_open(self, params: dict[str, Any], call: RecordedCall) -> dict[str, Any]:
        ws = self.workspace
        view = ws.open_view(str(params.get("trigger_id", "")), params.get("view") or {})
        return {"view": view.to_api(ws.team_id, ws.app_id, ws.bot_id)}

    def _views_update(self, params: dict[str, Any], call: RecordedCall) -> dict[str, Any]:
        ws = self.workspace
        view = ws.update_view(
            params.get("view") or {},
            view_id=params.get("view_id"),
            external_id=params.get("external_id"),
            hash=params.get("hash"),
        )
        return {"view": view.to_api(ws.team_id, ws.app_id, ws.bot_id)}

    def _reactions_add(self, params: dict[str, Any], call: RecordedCall) -> dict[str, Any]:
        self.workspace.add_reaction(
            str(params.get("channel", "")),
            str(params.get("timestamp", "")),
            str(params.get("name", "")),
        )
        return {}

    def _users_info(self, params: dict[str, Any], call: RecordedCall) -> dict[str, Any]:
        return {"user": self.workspace.user_info(str(params.get("user", "")))}

    def _conversations_history(self, params: dict[str, Any], call: RecordedCall) -> dict[str, Any]:
        channel = str(params.get("channel", ""))
        self.workspace.channel_info(channel)
        limit = int(params.get("limit") or 100)
        newest_first = list(reversed(self.workspace.messages(channel)))
        return {
            "messages": [m.to_api() for m in newest_first[:limit]],
            "has_more": len(newest_first) > limit,
        }

    def _conversations_members(self, params: dict[str, Any], call: RecordedCall) -> dict[str, Any]:
        """Paged as Slack pages it: `limit` (default 100) and an opaque `cursor`."""
        members = self.workspace.channel_members(str(params.get("channel", "")))
        limit = max(1, min(int(params.get("limit") or 100), 1000))
        cursor = str(params.get("cursor") or "")
        start = int(cursor) if cursor.isdigit() else 0
        page = members[start : start + limit]
        more = str(start + limit) if start + limit < len(members) else ""
        return {"members": page, "response_metadata": {"next_cursor": more}}

    def _usergroups_users_list(self, params: dict[str, Any], call: RecordedCall) -> dict[str, Any]:
        return {"users": self.workspace.usergroup_members(str(params.get("usergroup", "")))}

    def _conversations_info(self, params: dict[str, Any], call: RecordedCall) -> dict[str, Any]:
        return {"channel": self.workspace.channel_info(str(params.get("channel", "")))}
