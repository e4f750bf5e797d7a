"""The fake Slack, re-exported from `bot.simulator` where it now lives.

One fake for everything: `SlackWorkspace` (the state), `FakeSlack` (the Web API over
it, recording calls and failing on purpose) and the request builders (what Slack sends
to an app). `bot.simulator.server.SlackSimulator` is the same fake with Socket Mode and
a web page added; `grace dev` runs it.
"""

from __future__ import annotations

# ---- the assistant pane (assistant.threads.*, assistant_thread_started) -------------
from bot.simulator.assistant import AssistantPane, AssistantThread
from bot.simulator.home import app_home_opened_envelope
from bot.simulator.requests import (
    FORM_CONTENT_TYPE,
    JSON_CONTENT_TYPE,
    app_mention_envelope,
    block_actions_payload,
    event_envelope,
    form_body,
    interactive_body,
    json_body,
    message_envelope,
    sign_request,
    signed_headers,
    slash_command_form,
    view_submission_payload,
)
from bot.simulator.sessions import AgentSession, AgentSessions, agent_session_stopped_envelope
from bot.simulator.webapi import FakeSlack, Handler, RecordedCall
from bot.simulator.workspace import (
    DEFAULT_APP_ID,
    DEFAULT_BOT_ID,
    DEFAULT_BOT_USER_ID,
    DEFAULT_CHANNEL_ID,
    DEFAULT_TEAM_ID,
    DEFAULT_USER_ID,
    MAX_BLOCKS,
    MAX_TEXT,
    EphemeralMessage,
    SlackWorkspace,
    StoredMessage,
    StoredView,
    WorkspaceError,
    WorkspaceEvent,
    check_blocks,
)

__all__ = [
    "DEFAULT_APP_ID",
    "DEFAULT_BOT_ID",
    "DEFAULT_BOT_USER_ID",
    "DEFAULT_CHANNEL_ID",
    "DEFAULT_TEAM_ID",
    "DEFAULT_USER_ID",
    "FORM_CONTENT_TYPE",
    "JSON_CONTENT_TYPE",
    "MAX_BLOCKS",
    "MAX_TEXT",
    "AgentSession",
    "AgentSessions",
    "AssistantPane",
    "AssistantThread",
    "EphemeralMessage",
    "FakeSlack",
    "Handler",
    "RecordedCall",
    "SlackWorkspace",
    "StoredMessage",
    "StoredView",
    "WorkspaceError",
    "WorkspaceEvent",
    "agent_session_stopped_envelope",
    "app_home_opened_envelope",
    "app_mention_envelope",
    "block_actions_payload",
    "check_blocks",
    "event_envelope",
    "form_body",
    "interactive_body",
    "json_body",
    "message_envelope",
    "sign_request",
    "signed_headers",
    "slash_command_form",
    "view_submission_payload",
]
