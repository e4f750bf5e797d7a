"""Checks on what arrives at `/slack/events` before Bolt sees it.

Bolt dereferences parts of a request (`body["event"]["type"]`, `body["actions"][0]`,
`body["view"]["callback_id"]`…) without checking their shape, so a malformed body
would surface as a 500. Slack never sends such bodies; anything else that does gets a
400 with the reason (unsigned ones never get this far: see `bot/http_guard.py`).
"""

from __future__ import annotations

from typing import Any

from slack_bolt.context.async_context import AsyncBoltContext
from slack_bolt.request.async_internals import build_async_context
from slack_bolt.request.async_request import AsyncBoltRequest

from bot.slack.http_guard import Accepted

_INTERACTIVE_OBJECTS = ("user", "team", "channel", "message", "container", "view", "state")


def parse(raw: str | Accepted, *, query: str, headers: Any) -> tuple[AsyncBoltRequest | None, str]:
    """The Bolt request, or None and why the body could not be read. Given what the guard
    accepted, a JSON body is not parsed again: the request carries the guard's value."""
    try:
        if isinstance(raw, Accepted) and raw.parsed:
            request = with_parsed_body(raw.text, raw.json, query=query, headers=headers)
        else:
            text = raw.text if isinstance(raw, Accepted) else raw
            request = AsyncBoltRequest(body=text, query=query, headers=headers)
    except (ValueError, TypeError, AttributeError, KeyError) as exc:
        # JSONDecodeError is a ValueError; a JSON array or scalar fails building the context
        return None, f"the body is not a Slack request ({type(exc).__name__})"
    reason = malformed_reason(request.body)
    return (None, reason) if reason else (request, "")


def request_problem(body: dict[str, Any]) -> str | None:
    """Why a JSON object is not a request Bolt could take — what `parse` finds for it,
    building Bolt's context (which raises on ids of the wrong type) but no request — or
    None. For `grace serve`'s front, which takes mentions without Bolt
    (bot/slack/mentions.py): a malformed one is a 400 there too, not a crash."""
    try:
        build_async_context(AsyncBoltContext({}), body)
    except (ValueError, TypeError, AttributeError, KeyError) as exc:
        return f"the body is not a Slack request ({type(exc).__name__})"
    return malformed_reason(body)


def with_parsed_body(raw: str, body: Any, *, query: str, headers: Any) -> AsyncBoltRequest:
    """`AsyncBoltRequest(body=raw, …)` for a JSON body already parsed into `body`: the
    same request (raw body, body, context) without a second `json.loads` on the ack
    path. Raises as Bolt's own constructor would for a body that is not an object."""
    request = AsyncBoltRequest(body="", query=query, headers=headers)  # nothing to parse
    request.raw_body = raw
    request.body = body
    request.context = build_async_context(AsyncBoltContext({}), body)
    return request


def malformed_reason(body: Any) -> str | None:
    """Why `body` is not a well-formed Slack request, or None when it is."""
    if not isinstance(body, dict):
        return "the body is not a JSON object"
    kind = body.get("type")
    if kind is not None and not isinstance(kind, str):
        return "`type` is not a string"
    if kind == "event_callback":
        event = body.get("event")
        if not isinstance(event, dict) or not isinstance(event.get("type"), str):
            return "`event` is not an object with a `type`"
        return None
    if kind in ("block_actions", "view_submission", "view_closed"):
        for name in _INTERACTIVE_OBJECTS:
            if name in body and body[name] is not None and not isinstance(body[name], dict):
                return f"`{name}` is not an object"
        if not isinstance(body.get("user"), dict):
            return "`user` is missing"
    if kind == "block_actions":
        actions = body.get("actions")
        if not isinstance(actions, list) or not actions:
            return "`actions` is not a non-empty list"
        for action in actions:
            if not isinstance(action, dict) or not isinstance(action.get("action_id"), str):
                return "an action has no `action_id`"
    if kind in ("view_submission", "view_closed"):
        view = body.get("view")
        if not isinstance(view, dict):
            return "`view` is missing"
        if not isinstance(view.get("callback_id"), str) or not isinstance(view.get("type"), str):
            return "`view` has no `callback_id` or `type`"
    return None
