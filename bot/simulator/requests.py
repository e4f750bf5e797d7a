"""What Slack sends *to* an app: signed headers, Events API envelopes, interactivity
payloads and slash commands, each shaped and encoded the way Slack does it.

Used by the HTTP-mode tests (signed requests to `/slack/events`) and by the simulator,
which wraps the same payloads in Socket Mode envelopes.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
import uuid
from typing import Any
from urllib.parse import urlencode

from bot.simulator.workspace import (
    DEFAULT_APP_ID,
    DEFAULT_BOT_USER_ID,
    DEFAULT_CHANNEL_ID,
    DEFAULT_TEAM_ID,
    DEFAULT_USER_ID,
)

# --------------------------------------------------------------------------- requests to the app


def sign_request(signing_secret: str, body: str, timestamp: int | None = None) -> dict[str, str]:
    """Slack's v0 signature headers for `body` (HMAC-SHA256 of `v0:{ts}:{body}`)."""
    ts = int(time.time()) if timestamp is None else timestamp
    base = f"v0:{ts}:{body}".encode()
    digest = hmac.new(signing_secret.encode(), base, hashlib.sha256).hexdigest()
    return {"X-Slack-Signature": f"v0={digest}", "X-Slack-Request-Timestamp": str(ts)}


def signed_headers(
    signing_secret: str,
    body: str,
    *,
    content_type: str,
    timestamp: int | None = None,
    retry_num: int | None = None,
) -> dict[str, str]:
    """Signature headers plus Content-Type (and `X-Slack-Retry-Num` for a Slack retry)."""
    headers = {"Content-Type": content_type, **sign_request(signing_secret, body, timestamp)}
    if retry_num is not None:
        headers["X-Slack-Retry-Num"] = str(retry_num)
        headers["X-Slack-Retry-Reason"] = "http_timeout"
    return headers


JSON_CONTENT_TYPE = "application/json"
FORM_CONTENT_TYPE = "application/x-www-form-urlencoded"


def json_body(payload: dict[str, Any]) -> str:
    """An Events API body (`application/json`)."""
    return json.dumps(payload)


def form_body(fields: dict[str, str]) -> str:
    """A slash command body (`application/x-www-form-urlencoded`)."""
    return urlencode(fields)


def interactive_body(payload: dict[str, Any]) -> str:
    """An interactivity body: `payload=<url-encoded JSON>`, form-encoded as Slack does."""
    return urlencode({"payload": json.dumps(payload)})


def _event_id() -> str:
    return f"Ev{uuid.uuid4().hex[:10].upper()}"


def event_envelope(
    event: dict[str, Any],
    *,
    team_id: str = DEFAULT_TEAM_ID,
    api_app_id: str = DEFAULT_APP_ID,
    bot_user_id: str = DEFAULT_BOT_USER_ID,
    event_id: str | None = None,
) -> dict[str, Any]:
    """Wrap an event in Slack's `event_callback` envelope."""
    return {
        "token": "verification-token-unused",
        "team_id": team_id,
        "api_app_id": api_app_id,
        "event": event,
        "type": "event_callback",
        "event_id": event_id or _event_id(),
        "event_time": int(time.time()),
        "authorizations": [
            {
                "enterprise_id": None,
                "team_id": team_id,
                "user_id": bot_user_id,
                "is_bot": True,
                "is_enterprise_install": False,
            }
        ],
        "is_ext_shared_channel": False,
    }


def _user_event(
    kind: str, *, user: str, text: str, channel: str, ts: str | None, team: str, **more: str
) -> dict[str, Any]:
    """The event a person's post makes (`ts` now unless given), with `more` fields."""
    stamp = ts or f"{time.time():.6f}"
    return {
        "type": kind,
        "user": user,
        "text": text,
        "ts": stamp,
        "channel": channel,
        **more,
        "team": team,
        "event_ts": stamp,
    }


def app_mention_envelope(
    *,
    text: str,
    user: str = DEFAULT_USER_ID,
    channel: str = DEFAULT_CHANNEL_ID,
    ts: str | None = None,
    thread_ts: str | None = None,
    team_id: str = DEFAULT_TEAM_ID,
    bot_user_id: str = DEFAULT_BOT_USER_ID,
    api_app_id: str = DEFAULT_APP_ID,
    event_id: str | None = None,
) -> dict[str, Any]:
    """An `app_mention` event_callback; `<@bot>` is prepended unless `text` mentions it."""
    mention = f"<@{bot_user_id}>"
    full_text = text if mention in text else f"{mention} {text}"
    event = _user_event(
        "app_mention", user=user, text=full_text, channel=channel, ts=ts, team=team_id
    )
    if thread_ts:
        event["thread_ts"] = thread_ts
    return event_envelope(
        event, team_id=team_id, api_app_id=api_app_id, bot_user_id=bot_user_id, event_id=event_id
    )


def message_envelope(
    *,
    text: str,
    user: str = DEFAULT_USER_ID,
    channel: str = DEFAULT_CHANNEL_ID,
    ts: str | None = None,
    thread_ts: str | None = None,
    channel_type: str = "channel",
    team_id: str = DEFAULT_TEAM_ID,
    bot_user_id: str = DEFAULT_BOT_USER_ID,
    api_app_id: str = DEFAULT_APP_ID,
    event_id: str | None = None,
    parent_user_id: str | None = None,
) -> dict[str, Any]:
    """A `message` event_callback: a thread reply when `thread_ts` is set, else a DM/post.

    A reply's `parent_user_id` (who wrote the thread's first message) defaults to the bot.
    """
    event = _user_event(
        "message",
        user=user,
        text=text,
        channel=channel,
        ts=ts,
        team=team_id,
        channel_type=channel_type,
    )
    if thread_ts:
        event["thread_ts"] = thread_ts
        event["parent_user_id"] = parent_user_id or bot_user_id
    return event_envelope(
        event, team_id=team_id, api_app_id=api_app_id, bot_user_id=bot_user_id, event_id=event_id
    )


def block_actions_payload(
    *,
    action_id: str,
    value: str,
    user: str = DEFAULT_USER_ID,
    channel: str = DEFAULT_CHANNEL_ID,
    message_ts: str,
    thread_ts: str | None = None,
    block_id: str = "grace_block",
    text: str = "Button",
    message: dict[str, Any] | None = None,
    team_id: str = DEFAULT_TEAM_ID,
    api_app_id: str = DEFAULT_APP_ID,
    trigger_id: str | None = None,
    response_url: str | None = None,
    is_ephemeral: bool = False,
    style: str | None = None,
    element_type: str = "button",
    user_name: str | None = None,
    channel_name: str = "general",
) -> dict[str, Any]:
    """A `block_actions` payload for one button click on the message at `message_ts`
    (`element_type="feedback_buttons"` for a 👍 / 👎 of a `feedback_buttons` element).

    A click on an ephemeral message carries no `message`, as in Slack.
    """
    msg = dict(message or {"type": "message", "ts": message_ts, "text": "", "blocks": []})
    msg.setdefault("ts", message_ts)
    if thread_ts:
        msg.setdefault("thread_ts", thread_ts)
    action: dict[str, Any] = {
        "type": element_type,
        "action_id": action_id,
        "block_id": block_id,
        "text": {"type": "plain_text", "text": text, "emoji": True},
        "value": value,
        "action_ts": f"{time.time():.6f}",
    }
    if style:
        action["style"] = style
    payload: dict[str, Any] = {
        "type": "block_actions",
        "user": {
            "id": user,
            "username": user_name or f"user-{user.lower()}",
            "name": user_name or f"user-{user.lower()}",
            "team_id": team_id,
        },
        "api_app_id": api_app_id,
        "token": "verification-token-unused",
        "container": {
            "type": "message",
            "message_ts": message_ts,
            "channel_id": channel,
            "is_ephemeral": is_ephemeral,
            **({"thread_ts": thread_ts} if thread_ts else {}),
        },
        "trigger_id": trigger_id or f"{uuid.uuid4().int % 10**12}.trigger",
        "team": {"id": team_id, "domain": "fake"},
        "channel": {"id": channel, "name": channel_name},
        "message": msg,
        "response_url": response_url
        or f"https://hooks.fake-slack.local/actions/{team_id}/{uuid.uuid4().hex}",
        "actions": [action],
        "state": {"values": {}},
    }
    if is_ephemeral:
        del payload["message"]
    return payload


def element_types(blocks: list[Any]) -> dict[tuple[str, str], str]:
    """(block id, action id) → the type of a modal's input element."""
    found: dict[tuple[str, str], str] = {}
    for block in blocks:
        element = block.get("element") if isinstance(block, dict) else None
        if isinstance(element, dict) and block.get("type") == "input":
            key = (str(block.get("block_id", "")), str(element.get("action_id", "")))
            found[key] = str(element.get("type", "plain_text_input"))
    return found


def typed_input(kind: str, text: str) -> dict[str, Any]:
    """What typed text becomes in `view.state`, in the shape Slack gives each element:
    selects carry their choice(s), user selects user ids (typed comma-separated)."""
    items = [part.strip() for part in text.split(",") if part.strip()]
    if kind == "static_select":
        return {"type": kind, "selected_option": {"value": text} if text else None}
    if kind == "multi_static_select":
        return {"type": kind, "selected_options": [{"value": v} for v in items]}
    if kind == "multi_users_select":
        return {"type": kind, "selected_users": items}
    if kind == "users_select":
        return {"type": kind, "selected_user": items[0] if items else None}
    return {"type": "plain_text_input", "value": text}


def view_submission_payload(
    *,
    callback_id: str,
    values: dict[str, dict[str, str]],
    private_metadata: str = "",
    user: str = DEFAULT_USER_ID,
    team_id: str = DEFAULT_TEAM_ID,
    api_app_id: str = DEFAULT_APP_ID,
    view_id: str = "V00000001",
    view: dict[str, Any] | None = None,
    trigger_id: str | None = None,
    user_name: str | None = None,
) -> dict[str, Any]:
    """A `view_submission` payload; `values` is `{block_id: {action_id: typed text}}`.

    `view` (the modal as `views.open` stored it) supplies its blocks, title and hash.
    """
    kinds = element_types((view or {}).get("blocks") or [])
    state = {
        block_id: {
            action_id: typed_input(kinds.get((block_id, action_id), "plain_text_input"), text)
            for action_id, text in actions.items()
        }
        for block_id, actions in values.items()
    }
    base: dict[str, Any] = {
        "id": view_id,
        "team_id": team_id,
        "type": "modal",
        "blocks": [],
        "hash": uuid.uuid4().hex[:16],
        "title": {"type": "plain_text", "text": "GRACE"},
        "app_id": api_app_id,
        "root_view_id": view_id,
        "previous_view_id": None,
    }
    base.update(view or {})
    base.update(
        {
            "id": view_id,
            "callback_id": callback_id,
            "private_metadata": private_metadata,
            "state": {"values": state},
        }
    )
    name = user_name or f"user-{user.lower()}"
    return {
        "type": "view_submission",
        "team": {"id": team_id, "domain": "fake"},
        "user": {"id": user, "username": name, "name": name, "team_id": team_id},
        "api_app_id": api_app_id,
        "token": "verification-token-unused",
        "trigger_id": trigger_id or f"{uuid.uuid4().int % 10**12}.trigger",
        "view": base,
        "response_urls": [],
    }


def slash_command_form(
    *,
    text: str,
    command: str = "/grace",
    user: str = DEFAULT_USER_ID,
    channel: str = DEFAULT_CHANNEL_ID,
    team_id: str = DEFAULT_TEAM_ID,
    api_app_id: str = DEFAULT_APP_ID,
    trigger_id: str | None = None,
    response_url: str | None = None,
    user_name: str | None = None,
    channel_name: str = "general",
) -> dict[str, str]:
    """The fields of a slash command request (encode with `form_body`)."""
    return {
        "token": "verification-token-unused",
        "team_id": team_id,
        "team_domain": "fake",
        "channel_id": channel,
        "channel_name": channel_name,
        "user_id": user,
        "user_name": user_name or f"user-{user.lower()}",
        "command": command,
        "text": text,
        "api_app_id": api_app_id,
        "response_url": response_url
        or f"https://hooks.fake-slack.local/commands/{team_id}/{uuid.uuid4().hex}",
        "trigger_id": trigger_id or f"{uuid.uuid4().int % 10**12}.trigger",
    }
