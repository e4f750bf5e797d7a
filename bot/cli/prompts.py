"""What `grace ask` says and asks at a pause, on a terminal: the same plain words as the
Slack cards, and the person's answer read from stdin."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agent.schemas import InterventionAnswer, InterventionRequest, RunState


def terminal_text(mrkdwn: str) -> str:
    """Slack mrkdwn from the card builders as terminal text."""
    text = mrkdwn.replace("*", "").replace("&lt;", "<").replace("&gt;", ">")
    return text.replace("&amp;", "&")


def prompt_lines(state: RunState, request: InterventionRequest) -> list[str]:
    """What the terminal says at a pause: the same plain words as the Slack cards (the
    scores are in `grace show RUN`)."""
    from agent.schemas import InterventionKind
    from blocks.explain import found_sentence, why_unsure
    from blocks.intervention import plain_question

    lines = [f"\n⏸  {terminal_text(plain_question(request))}"]
    if request.kind in (InterventionKind.CONFIRM, InterventionKind.ESCALATE):
        result = state.step_results.get(request.step_id) if request.step_id else None
        found = result.sources if result is not None else state.sources
        lines.append(f"   {terminal_text(found_sentence(found))}")
        lines.append(f"   why I am unsure: {terminal_text(why_unsure(request.confidence, found))}")
    else:  # a plan approval or a clarifying question: its own words (no internal notes)
        lines[0] = f"\n⏸  {request.question}"
    return lines


def prompt_answer(state: RunState, user: str) -> InterventionAnswer | None:
    """Ask the person at the terminal how to go on from the run's pause; None at end of input."""
    from agent.schemas import InterventionAction, InterventionAnswer, InterventionKind

    request = state.pending
    assert request is not None
    for line in prompt_lines(state, request):
        print(line, file=sys.stderr)
    try:
        if request.kind in (InterventionKind.PLAN_APPROVAL, InterventionKind.CONFIRM):
            first = "[r]un" if request.kind is InterventionKind.PLAN_APPROVAL else "[p]roceed"
            choice = input(f"   {first} / [m]odify / [c]ancel > ").strip().lower()
            if choice.startswith("c"):
                return InterventionAnswer(action=InterventionAction.CANCEL, user=user)
            if choice.startswith(("m", "e")):
                text = input("   how should the plan change? > ")
                return InterventionAnswer(action=InterventionAction.MODIFY, text=text, user=user)
            return InterventionAnswer(action=InterventionAction.PROCEED, user=user)
        for number, option in enumerate(request.options, start=1):
            print(f"   [{number}] {option}", file=sys.stderr)
        hint = f"1–{len(request.options)} picks an option, " if request.options else ""
        text = input(f"   your answer ({hint}empty = proceed, 'cancel' = stop) > ").strip()
    except EOFError:
        return None
    if text.lower() == "cancel":
        return InterventionAnswer(action=InterventionAction.CANCEL, user=user)
    if text.isdigit() and 1 <= int(text) <= len(request.options):
        # Options are numbered from 1 everywhere (Slack, this prompt, --option).
        return InterventionAnswer(action=InterventionAction.INPUT, option=int(text) - 1, user=user)
    if not text:
        return InterventionAnswer(action=InterventionAction.PROCEED, user=user)
    return InterventionAnswer(action=InterventionAction.INPUT, text=text, user=user)
