"""Button clicks. Ack first; check the button, the request and the clicker; then resume
the run in a tracked task. The store's atomic claim makes double clicks harmless.

A click that opens a view is handled at once (its trigger id lasts 3 s); any other is
stored in the inbox before the ack and handled after it (`process_click`).
"""

from __future__ import annotations

import logging
import re
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from agent.schemas import (
    InterventionAction,
    InterventionAnswer,
    InterventionRequest,
    InterventionStatus,
    RunState,
)
from blocks import ids
from blocks.answer import feedback_ack
from blocks.details import details_modal
from blocks.intervention import modify_modal
from bot.service.feedback import record_feedback
from bot.slack.acting import of_acting_team
from bot.slack.conversation import REFUSAL, already_handled
from bot.slack.deps import BotDeps
from bot.slack.intake import Intake, Received
from bot.slack.items import Click, stored
from bot.slack.listeners.verified import save_clicked

log = logging.getLogger(__name__)

_ACTIONS: dict[str, InterventionAction] = {
    ids.PLAN_RUN: InterventionAction.PROCEED,
    ids.PLAN_CANCEL: InterventionAction.CANCEL,
    ids.CONFIRM_PROCEED: InterventionAction.PROCEED,
    ids.CONFIRM_CANCEL: InterventionAction.CANCEL,
    ids.ESCALATE_PROCEED: InterventionAction.PROCEED,
    ids.ESCALATE_CANCEL: InterventionAction.CANCEL,
}
_MODALS = {ids.PLAN_EDIT, ids.CONFIRM_MODIFY}
_OPENS_A_VIEW = {*_MODALS, ids.DETAILS}
_FEEDBACK = {ids.FEEDBACK_UP: True, ids.FEEDBACK_DOWN: False}
"""Older messages' separate buttons; `ids.FEEDBACK` carries the vote in its value."""


class ClickData:
    """The parts of a block_actions payload a handler needs."""

    def __init__(self, body: dict[str, Any]) -> None:
        action = (body.get("actions") or [{}])[0]
        self.action_id = str(action.get("action_id", ""))
        self.raw_value = str(action.get("value", ""))
        self.user = str((body.get("user") or {}).get("id", ""))
        self.channel = str((body.get("channel") or {}).get("id", ""))
        message = body.get("message") or {}
        self.thread_ts = str(message.get("thread_ts") or message.get("ts") or "")
        self.message_ts = str(message.get("ts") or "")
        self.trigger_id = str(body.get("trigger_id", ""))


def pending_request(state: RunState, intervention_id: str | None) -> InterventionRequest | None:
    if intervention_id is None:
        return None
    if state.pending and state.pending.intervention_id == intervention_id:
        return state.pending
    return next((i for i in state.interventions if i.intervention_id == intervention_id), None)


def closed_reason(request: InterventionRequest) -> str:
    if request.status is InterventionStatus.ANSWERED:
        return already_handled(request.answered_by, "answered")
    return f"This request is no longer open: it was {request.status.value}."


async def handle_click(deps: BotDeps, client: AsyncWebClient, click: ClickData) -> None:
    async def tell(text: str) -> None:
        await deps.publisher.ephemeral(click.channel, click.user, text, thread_ts=click.thread_ts)

    try:
        value = ids.ButtonValue.decode(click.raw_value)
    except ValueError:
        await tell("This button is not one of mine, or it is damaged; nothing was changed.")
        return
    option = ids.parse_option_action_id(click.action_id)
    known = (
        click.action_id in _ACTIONS
        or click.action_id in _OPENS_A_VIEW
        or click.action_id in _FEEDBACK
        or click.action_id == ids.FEEDBACK
        or click.action_id == ids.SAVE_VERIFIED
        or option is not None
    )
    if not known:
        await tell(
            "I don't know that button (it may be from an older version of GRACE); "
            "nothing was changed."
        )
        return
    state = await deps.store.load(value.run_id)
    unknown = f"I don't know run {value.run_id} any more; nothing was changed."
    if state is None or not of_acting_team(state):  # another team's run: not found
        await tell(unknown)
        return
    if click.action_id == ids.DETAILS:
        if not await deps.access.may_read(state, click.user):
            await tell(unknown)  # a run this person may not read does not exist for them
            return
        request = pending_request(state, value.intervention_id)
        try:
            await client.views_open(trigger_id=click.trigger_id, view=details_modal(state, request))
        except SlackApiError as exc:
            await tell(f"I couldn't open the details ({exc.response.get('error')}).")
        return
    if click.action_id == ids.SAVE_VERIFIED:
        await tell(await save_clicked(deps, client, state, click.user, click.message_ts))
        return
    up = _FEEDBACK.get(click.action_id, value.helpful)
    if click.action_id == ids.FEEDBACK and up is None:
        await tell("This feedback button is damaged; nothing was recorded.")
        return
    if up is not None and (click.action_id in _FEEDBACK or click.action_id == ids.FEEDBACK):
        reply = await record_feedback(deps, state=state, user=click.user, up=up)
        await deps.publisher.ephemeral(
            click.channel,
            click.user,
            reply.text,
            blocks=feedback_ack(click.user, up, counted=reply.counted, thresholds=reply.thresholds),
            thread_ts=click.thread_ts,
        )
        return
    request = pending_request(state, value.intervention_id)
    if request is None:
        await tell("That question is not part of this run; nothing was changed.")
        return
    if request.status is not InterventionStatus.PENDING or state.pending is None:
        fresh = await deps.store.get_intervention(request.intervention_id)
        await tell(closed_reason(fresh or request))
        return
    member_of = await deps.answering_as(request, click.user, team_id=state.thread.team_id)
    if member_of is None:
        await tell(REFUSAL)
        return
    if click.action_id in _MODALS:
        view = modify_modal(request, click.channel, click.thread_ts)
        try:
            await client.views_open(trigger_id=click.trigger_id, view=view)
        except SlackApiError as exc:
            await tell(f"I couldn't open the edit form ({exc.response.get('error')}).")
        return
    if option is not None and not 0 <= option < len(request.options):
        await tell("That choice is not one of this question's options; nothing was changed.")
        return
    if option is not None:
        answer = InterventionAnswer(
            action=InterventionAction.INPUT, option=option, user=click.user, member_of=member_of
        )
    else:
        answer = InterventionAnswer(
            action=_ACTIONS[click.action_id], user=click.user, member_of=member_of
        )
    outcome = await deps.orchestrator.answer(state.run_id, request.intervention_id, answer)
    if not outcome.claimed:
        await tell(already_handled(outcome.answered_by, outcome.reason))


def interaction_id(body: dict[str, Any]) -> str:
    """Slack's own id for one interaction (its `trigger_id`, single use), else the
    action's timestamp: what makes a repeated delivery recognisable."""
    trigger = body.get("trigger_id")
    if isinstance(trigger, str) and trigger:
        return trigger
    action = (body.get("actions") or [{}])[0]
    user = (body.get("user") or {}).get("id", "")
    return f"{user}:{action.get('action_ts', '')}:{action.get('action_id', '')}"


async def process_click(deps: BotDeps, client: AsyncWebClient, received: Received[Click]) -> None:
    """A stored click, after the ack."""
    await handle_click(deps, client, ClickData(received.item.body))


def register(app: AsyncApp, deps: BotDeps, intake: Intake) -> None:
    @app.action(re.compile(r".*"))
    async def handle_action(ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient) -> None:
        await ack()
        click = ClickData(body)
        if click.action_id in _OPENS_A_VIEW:
            # trigger_id is valid for 3 s: open the modal now, not behind other work (a
            # form that did not open changes nothing; the button is still there).
            await handle_click(deps, client, click)
            return
        # Stored before the ack goes out (Bolt answers once this returns), handled after.
        await intake.accept(stored(Click(body=body), event_id=f"click:{interaction_id(body)}"))
