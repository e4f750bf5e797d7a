"""The Details modal: the numbers behind a card (factors, penalties, the scorer's own
reason), for whoever wants them. Cards themselves stay in plain words."""

from __future__ import annotations

from slack_sdk.models.blocks import Block, DividerBlock, PlainTextObject
from slack_sdk.models.views import View

from agent.schemas import InterventionKind, InterventionRequest, RunState
from blocks.common import LEVEL_WORDS, context, one_line, safe, section, short_id
from blocks.limits import MAX_BLOCKS_PER_MESSAGE
from blocks.status import run_detail_blocks, score_lines

DETAILS_MODAL_CALLBACK = "grace_details_modal"
MAX_MODAL_BLOCKS = 100


def pause_blocks(request: InterventionRequest) -> list[Block]:
    """A pause as the scorer sees it: its kind, level, own question and reason, numbers."""
    where = f" at step {request.step_id}" if request.step_id is not None else ""
    lines = [
        f"*Pause{where}:* {request.kind.value.replace('_', ' ')} ({LEVEL_WORDS[request.level]})"
    ]
    if request.question.strip():
        lines.append(f"*Question:* {safe(one_line(request.question), 1000)}")
    # A Confirm's own reason only repeats its weakest factors: the factors follow anyway.
    if request.reason.strip() and request.kind is not InterventionKind.CONFIRM:
        lines.append(f"*Reason:* {safe(one_line(request.reason), 1000)}")
    if request.confidence is not None:
        lines.extend(score_lines(request.confidence))
    return [section("\n".join(lines)), DividerBlock()]


def details_modal(state: RunState, request: InterventionRequest | None = None) -> View:
    """A read-only modal (no submit) with the pause's numbers and the run in detail."""
    blocks: list[Block] = pause_blocks(request) if request is not None else []
    blocks.extend(run_detail_blocks(state))
    if len(blocks) > MAX_MODAL_BLOCKS:
        blocks = [*blocks[: MAX_MODAL_BLOCKS - 1], context("_…more in `/grace status`_")]
    assert MAX_MODAL_BLOCKS >= MAX_BLOCKS_PER_MESSAGE
    return View(
        type="modal",
        callback_id=DETAILS_MODAL_CALLBACK,
        title=PlainTextObject(text=f"Details · {short_id(state.run_id)}"),
        close=PlainTextObject(text="Close"),
        blocks=blocks,
    )
