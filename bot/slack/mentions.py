"""`grace serve`'s front takes a mention without Bolt: the same decision, none of the
dispatch.

A mention is most of what a burst brings, and all the front does with one is check it and
store it. Through Bolt that cost a request object (a second parse of the body), the
global middleware, the listener matching and the keyword injection — more than the rest
of the ack path together (profile in docs/benchmarks.md). So, with the bot's identity
fixed at start-up (one workspace: no per-request authorization to do), the front does
what Bolt and the listener would have done for an `app_mention` event, in order:

1. an event sent by this bot itself is acked and dropped (Bolt's `IgnoringSelfEvents`);
2. the listener's decision (`events.mention_row`): a question from a person, or nothing;
3. the row is stored through the intake (committed before the ack) — or, when it cannot
   be in time, not acknowledged (500; `app.listener_failed` logs it, as Bolt's error
   handler does);
4. the ack: the response Bolt gives (200, empty, text/plain).

In OAuth mode each request is authorized from its workspace's installation, which is
Bolt's job: mentions go through a Bolt app there.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from aiohttp import web
from slack_bolt.authorization import AuthorizeResult
from slack_bolt.request.internals import extract_user_id

from bot.slack.app import listener_failed
from bot.slack.intake import Intake
from bot.slack.listeners.events import mention_row

log = logging.getLogger(__name__)


def bolt_like_response(status: int) -> web.Response:
    """What `to_aiohttp_response` makes of Bolt's empty `BoltResponse(status)`."""
    return web.Response(status=status, body="", content_type="text/plain")


def from_this_bot(identity: AuthorizeResult, body: dict[str, Any], event: dict[str, Any]) -> bool:
    """Bolt's rule for an event this bot caused (its user or its bot id), which Bolt
    acknowledges without running a listener."""
    user = extract_user_id(body)
    bot_id = event.get("bot_id")
    return (user is not None and user == identity.bot_user_id) or (
        bot_id is not None and bot_id == identity.bot_id
    )


@dataclass(frozen=True)
class MentionTaker:
    """Stores an `app_mention` event and answers its request, as the front's Bolt app
    would, for a bot whose identity is fixed."""

    intake: Intake
    identity: AuthorizeResult
    allowed_bots: Collection[str] = ()

    async def take(self, body: dict[str, Any]) -> web.Response:
        """The response to an `app_mention` event callback (`body["event"]` is an object
        whose type is `app_mention`: the front checked)."""
        event: dict[str, Any] = body["event"]
        if from_this_bot(self.identity, body, event):
            return bolt_like_response(200)
        try:
            row = mention_row(body, event, self.allowed_bots)
            if row is not None:
                await self.intake.accept(row)
        except Exception as exc:
            listener_failed(exc)
            return bolt_like_response(500)
        return bolt_like_response(200)
