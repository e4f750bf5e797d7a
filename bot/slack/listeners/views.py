"""Modal submissions: the Modify… / Edit… form replans the run with the user's words."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp

from agent.schemas import InterventionAction, InterventionAnswer
from blocks import ids
from bot.slack.acting import of_acting_team
from bot.slack.conversation import REFUSAL, UNREADABLE, already_handled, readable
from bot.slack.deps import BotDeps
from bot.slack.intake import Intake, Received
from bot.slack.items import ModifySubmission, stored


async def submit_modify(deps: BotDeps, metadata: ids.ModalMetadata, user: str, text: str) -> None:
    async def tell(message: str) -> None:
        await deps.publisher.ephemeral(
            metadata.channel, user, message, thread_ts=metadata.thread_ts
        )

    state = await deps.store.load(metadata.run_id)
    if state is None or metadata.intervention_id is None or not of_acting_team(state):
        await tell("That run is gone; nothing was changed.")
        return
    request = state.pending
    if request is None or request.intervention_id != metadata.intervention_id:
        fresh = await deps.store.get_intervention(metadata.intervention_id)
        await tell(already_handled(fresh.answered_by if fresh else None, "no longer pending"))
        return
    member_of = await deps.answering_as(request, user, team_id=state.thread.team_id)
    if member_of is None:
        await tell(REFUSAL)
        return
    outcome = await deps.orchestrator.answer(
        state.run_id,
        request.intervention_id,
        InterventionAnswer(
            action=InterventionAction.MODIFY, text=text, user=user, member_of=member_of
        ),
    )
    if not outcome.claimed:
        await tell(already_handled(outcome.answered_by, outcome.reason))


def typed_text(view: dict[str, Any]) -> str:
    """What the user typed into the modal's input (empty when the view has none)."""
    node: Any = view.get("state")
    for key in ("values", ids.MODIFY_INPUT_BLOCK, ids.MODIFY_INPUT_ACTION, "value"):
        node = node.get(key) if isinstance(node, dict) else None
    return node.strip() if isinstance(node, str) else ""


async def process_modify(deps: BotDeps, received: Received[ModifySubmission]) -> None:
    """A stored form submission, after the ack."""
    item = received.item
    await submit_modify(deps, ids.ModalMetadata.decode(item.metadata), item.user, item.text)


def register(app: AsyncApp, intake: Intake) -> None:
    @app.view(ids.MODIFY_MODAL_CALLBACK)
    async def handle_modify(ack: AsyncAck, body: dict[str, Any], view: dict[str, Any]) -> None:
        text = typed_text(view)
        if not text or not readable(text):
            problem = "Tell GRACE how the plan should change." if not text else UNREADABLE
            await ack(response_action="errors", errors={ids.MODIFY_INPUT_BLOCK: problem})
            return
        try:
            metadata = ids.ModalMetadata.decode(str(view.get("private_metadata") or ""))
        except ValueError:
            await ack(
                response_action="errors",
                errors={ids.MODIFY_INPUT_BLOCK: "This form is damaged; close it and retry."},
            )
            return
        await ack()
        user = str((body.get("user") or {}).get("id", ""))
        view_id = str(view.get("id") or "")
        submission = f"{view_id}:{view.get('hash') or ''}" if view_id else metadata.encode()
        item = ModifySubmission(
            metadata=metadata.encode(),
            user=user,
            text=text,
            team=(body.get("team") or {}).get("id") or None,
            enterprise=(body.get("enterprise") or {}).get("id") or None,
        )
        # stored before the ack goes out; handled after it
        await intake.accept(stored(item, event_id=f"modal:{user}:{submission}"))
