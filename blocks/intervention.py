"""Messages for a paused run: confirm, escalate/ask, the decision, expiry, and the modal."""

from __future__ import annotations

from datetime import datetime

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    InputBlock,
    PlainTextInputElement,
    PlainTextObject,
    SectionBlock,
)
from slack_sdk.models.views import View

from agent.schemas import (
    InterventionAction,
    InterventionKind,
    InterventionRequest,
    RunState,
    Source,
)
from blocks import ids
from blocks.common import (
    button,
    cancel_button,
    context,
    mention,
    mentions,
    one_line,
    pack_lines,
    safe,
    section,
    slack_date,
)
from blocks.explain import (
    disagreeing_documents,
    disagreement_alert,
    found_sentence,
    why_unsure,
)
from blocks.limits import MAX_ACTIONS_ELEMENTS, MAX_BUTTON_TEXT, truncate

QUESTION_LIMIT = 2500
REASON_LIMIT = 1500
MAX_OPTION_BUTTONS = 20
MAX_LISTED_OPTIONS = 40
MODIFY_TEXT_MAX = 3000

_DECISIONS: dict[InterventionAction, tuple[str, str]] = {
    InterventionAction.PROCEED: ("✅", "Approved"),
    InterventionAction.MODIFY: ("✏️", "Modified"),
    InterventionAction.CANCEL: ("🛑", "Cancelled"),
    InterventionAction.INPUT: ("💬", "Answered"),
    InterventionAction.RETRY: ("🔁", "Retry requested"),
    InterventionAction.SKIP: ("⏭️", "Skipped"),
}

_KIND_TITLE: dict[InterventionKind, str] = {
    InterventionKind.PLAN_APPROVAL: "Plan approval",
    InterventionKind.CONFIRM: "Before I go on",
    InterventionKind.ESCALATE: "I need your help to answer this",
    InterventionKind.ASK_USER: "A quick question before I go on",
}
"""A pause's title, in GRACE's own voice: the live message and its edited form once
answered or expired use the same words (the edit must not turn "I" into "GRACE")."""


def _value(request: InterventionRequest, option: int | None = None) -> str:
    return ids.ButtonValue(
        run_id=request.run_id, intervention_id=request.intervention_id, option=option
    ).encode()


def _who_and_when(request: InterventionRequest) -> list[str]:
    parts: list[str] = []
    if request.allowed_responders:
        names = ", ".join(mention(u) for u in request.allowed_responders[:10])
        more = len(request.allowed_responders) - 10
        parts.append(f"Can answer: {names}" + (f" and {more} more" if more > 0 else ""))
    if request.expires_at is not None:
        parts.append(f"Expires {slack_date(request.expires_at)}")
    if request.urgency == "optional":
        parts.append("optional")
    return parts


def _step_label(state: RunState, request: InterventionRequest) -> str:
    """`step 2 of 3 (Search the knowledge base for: …)`, no action names or numbers."""
    if request.step_id is None:
        return ""
    label = f"step {request.step_id}"
    if state.plan is not None:
        label += f" of {len(state.plan.steps)}"
        try:
            step = state.plan.step(request.step_id)
        except KeyError:
            return label
        what = one_line(step.description) or one_line(step.query)
        if what:
            label += f" ({safe(what, 300)})"
    return label


def _step_sources(state: RunState, request: InterventionRequest) -> list[Source]:
    """What the paused step found (or, with no step, what the run has found so far)."""
    if request.step_id is not None:
        result = state.step_results.get(request.step_id)
        if result is not None:
            return result.sources
    return state.sources


def details_button(request: InterventionRequest) -> ButtonElement:
    """ "Details": opens the factor names, numbers and penalties behind a card."""
    return button("Details", ids.DETAILS, _value(request))


def _why_section(text: str, request: InterventionRequest) -> SectionBlock:
    """The "why" sentence with the Details button beside it (Slack's accessory slot)."""
    block = section(text)
    block.accessory = details_button(request)
    return block


CONFIRM_CHOICES = (
    "*Proceed* goes on with what I found and writes the answer · "
    "*Modify…* tells me how to change the plan · *Cancel* stops here without an answer."
)
ESCALATE_CHOICES = (
    "*Reply in this thread* with a detail or a document to look at and I will search again · "
    "*Proceed anyway* answers with what I have · *Cancel* stops here without an answer."
)
ASK_CHOICES = "Pick an option below or reply in this thread; I will search with your answer."
ASK_REPLY = "Reply in this thread; I will search with your answer."


def confirm_message(state: RunState, request: InterventionRequest) -> list[Block]:
    """A CONFIRM pause in plain words: what was found and where, why GRACE is unsure, and
    what each button does. The numbers are behind "Details"."""
    where = _step_label(state, request)
    title = f"🤔 *Before I go on: please check {where or 'what I found'}*"
    found = _step_sources(state, request)
    blocks: list[Block] = [section(title), section(found_sentence(found))]
    pair = disagreeing_documents(request.confidence, found)
    why = why_unsure(request.confidence, found, alerted=True)
    blocks.append(_why_section(f"*Why I am unsure:* {why}", request))
    if pair:
        blocks.append(disagreement_alert(pair))
    blocks.append(context(CONFIRM_CHOICES))
    value = _value(request)
    blocks.append(
        ActionsBlock(
            block_id=ids.CONFIRM_ACTIONS_BLOCK,
            elements=[
                button("✅ Proceed", ids.CONFIRM_PROCEED, value, style="primary"),
                button("✏️ Modify…", ids.CONFIRM_MODIFY, value),
                cancel_button(ids.CONFIRM_CANCEL, value),
            ],
        )
    )
    extra = _who_and_when(request)
    if extra:
        blocks.append(context(" · ".join(extra)))
    return blocks


def option_label(index: int, option: str) -> str:
    """`2. Tokyo office` cut to Slack's 75-character button text (options count from 1)."""
    return truncate(f"{index + 1}. {one_line(option) or '(empty)'}", MAX_BUTTON_TEXT)


def _escalate_head(state: RunState, request: InterventionRequest) -> list[Block]:
    where = _step_label(state, request)
    if request.kind is InterventionKind.ASK_USER:
        question = safe(request.question or "Could you tell me more?", QUESTION_LIMIT)
        return [section(f"❓ *{_KIND_TITLE[request.kind]}*\n{question}")]
    if request.kind is InterventionKind.ESCALATE:
        found = _step_sources(state, request)
        title = f"🙋 *{_KIND_TITLE[request.kind]}*" + (f" — {where}" if where else "")
        pair = disagreeing_documents(request.confidence, found)
        why = why_unsure(request.confidence, found, alerted=True)
        blocks: list[Block] = [section(title)]
        if state.policy.experts:
            blocks.append(section(f"🔔 {mentions(state.policy.experts)}: could you help?"))
        blocks += [
            section(found_sentence(found)),
            _why_section(f"*Why I am unsure:* {why}", request),
        ]
        if pair:
            blocks.append(disagreement_alert(pair))
        return blocks
    title = _KIND_TITLE.get(request.kind, "I need your help")
    return [section(f"🙋 *{title}*\n{safe(request.question or '…', QUESTION_LIMIT)}")]


def escalate_message(state: RunState, request: InterventionRequest) -> list[Block]:
    """An ESCALATE or ask_user pause: what GRACE needs, why, and one button per option.

    ESCALATE also gets Proceed anyway / Cancel; both kinds can be answered by replying in
    the thread. Options past the 20th get no button (they are listed; reply to pick one).
    A clarifying question is a question, not an alarm: no red, no internal field notes.
    """
    blocks = _escalate_head(state, request)
    options = request.options
    if request.kind is InterventionKind.ESCALATE:
        blocks.append(context(ESCALATE_CHOICES))
    else:
        blocks.append(context(ASK_CHOICES if options else ASK_REPLY))

    labels = [option_label(i, o) for i, o in enumerate(options[:MAX_OPTION_BUTTONS])]
    cut = any(label.endswith("…") for label in labels) or len(options) > MAX_OPTION_BUTTONS
    if options and cut:
        shown = options[:MAX_LISTED_OPTIONS]
        listed = [f"*{i + 1}.* {safe(one_line(o), 500)}" for i, o in enumerate(shown)]
        if len(options) > MAX_LISTED_OPTIONS:
            listed.append(f"_…and {len(options) - MAX_LISTED_OPTIONS} more options_")
        blocks.extend(section(text) for text in pack_lines(listed)[:4])
    for chunk_start in range(0, len(labels), MAX_ACTIONS_ELEMENTS):
        chunk = labels[chunk_start : chunk_start + MAX_ACTIONS_ELEMENTS]
        blocks.append(
            ActionsBlock(
                block_id=f"{ids.ESCALATE_OPTIONS_BLOCK}:{chunk_start // MAX_ACTIONS_ELEMENTS}",
                elements=[
                    button(label, ids.option_action_id(index), _value(request, index))
                    for index, label in enumerate(chunk, start=chunk_start)
                ],
            )
        )
    if request.kind is InterventionKind.ESCALATE:
        value = _value(request)
        blocks.append(
            ActionsBlock(
                block_id=ids.ESCALATE_ACTIONS_BLOCK,
                elements=[
                    button("⏩ Proceed anyway", ids.ESCALATE_PROCEED, value),
                    cancel_button(ids.ESCALATE_CANCEL, value),
                ],
            )
        )
    hint = "💬 Reply in this thread to answer"
    if len(options) > MAX_OPTION_BUTTONS:
        hint += f" (options {MAX_OPTION_BUTTONS + 1}–{len(options)} have no button)"
    blocks.append(context(hint, *_who_and_when(request)))
    return blocks


def expert_call(state: RunState, request: InterventionRequest) -> str:
    """The mentions an escalation opens with (its experts'), or "" — so the message's
    notification text calls them, not only its blocks."""
    if request.kind is not InterventionKind.ESCALATE or not state.policy.experts:
        return ""
    return mentions(state.policy.experts) + " "


def plain_question(request: InterventionRequest) -> str:
    """What a pause asked, in words (a CONFIRM's own question carries a score)."""
    step = f"step {request.step_id}" if request.step_id is not None else "what I found"
    if request.kind is InterventionKind.CONFIRM:
        return f"Should I go on with {step}?"
    if request.kind is InterventionKind.ESCALATE:
        return "I could not find enough to answer this and asked for help."
    if request.kind is InterventionKind.PLAN_APPROVAL:
        return "Should I run this plan?"
    return safe(request.question or "…", 1500)


def decision_text(action: InterventionAction | str, user_id: str, detail: str | None = None) -> str:
    """`✅ Approved by <@U123>` / `✏️ Modified by <@U123>: use 2024 data`."""
    if isinstance(action, InterventionAction):
        emoji, label = _DECISIONS[action]
        label = f"{emoji} {label}"
    else:
        label = one_line(action) or "Handled"
    text = f"{label} by {mention(user_id)}"
    if detail and detail.strip():
        text += f": {safe(one_line(detail), 2000)}"
    return text


def _answer_detail(request: InterventionRequest) -> str | None:
    answer = request.answer
    if answer is None:
        return None
    if answer.option is not None and 0 <= answer.option < len(request.options):
        return request.options[answer.option]
    return answer.text


def decided_message(
    request: InterventionRequest,
    user_id: str,
    action_label: InterventionAction | str,
    *,
    detail: str | None = None,
) -> list[Block]:
    """The pause message once answered: the question kept, the buttons replaced by who did what.

    `action_label` is an `InterventionAction` (rendered as e.g. "✅ Approved") or free text.
    `detail` defaults to the chosen option or the typed text of `request.answer`.
    """
    title = _KIND_TITLE.get(request.kind, "GRACE")
    where = f" — step {request.step_id}" if request.step_id is not None else ""
    blocks: list[Block] = [section(f"*{title}*{where}\n{plain_question(request)}")]
    shown = detail if detail is not None else _answer_detail(request)
    blocks.append(context(decision_text(action_label, user_id, shown)))
    return blocks


def expired_message(request: InterventionRequest, outcome: InterventionAction) -> list[Block]:
    """The pause message once nobody answered in time, saying what GRACE did about it."""
    title = _KIND_TITLE.get(request.kind, "GRACE")
    when = f" before {slack_date(request.expires_at)}" if request.expires_at else " in time"
    if outcome is InterventionAction.PROCEED:
        what = "I went ahead without it."
    elif outcome is InterventionAction.CANCEL:
        what = "the run was cancelled."
    else:
        what = f"I chose to {outcome.value}."
    return [
        section(f"*{title}*\n{plain_question(request)}"),
        context(f"⌛ No answer{when} — {what}"),
    ]


def modify_modal(request: InterventionRequest, channel: str, thread_ts: str) -> View:
    """The "Modify…" / "Edit…" modal: free text telling GRACE how to change the plan.

    `private_metadata` carries run, intervention, channel and thread so the submission
    handler knows where to resume without any lookup.
    """
    metadata = ids.ModalMetadata(
        run_id=request.run_id,
        intervention_id=request.intervention_id,
        channel=channel,
        thread_ts=thread_ts,
    ).encode()
    is_plan = request.kind is InterventionKind.PLAN_APPROVAL
    blocks: list[Block] = [
        section(f"*{'Plan for' if is_plan else 'Paused at'}:* {safe(request.question, 1500)}"),
        InputBlock(
            block_id=ids.MODIFY_INPUT_BLOCK,
            label=PlainTextObject(text="How should the plan change?"),
            element=PlainTextInputElement(
                action_id=ids.MODIFY_INPUT_ACTION,
                multiline=True,
                max_length=MODIFY_TEXT_MAX,
                placeholder=PlainTextObject(text="e.g. Only use the 2024 handbook"),
            ),
        ),
    ]
    return View(
        type="modal",
        callback_id=ids.MODIFY_MODAL_CALLBACK,
        title=PlainTextObject(text="Edit plan" if is_plan else "Modify plan"),
        submit=PlainTextObject(text="Replan"),
        close=PlainTextObject(text="Back"),
        private_metadata=metadata,
        blocks=blocks,
    )


def reminder_text(experts: list[str], asked_at: datetime) -> str:
    """The one reminder an unanswered escalation sends its experts, in its thread."""
    return (
        f"⏰ {mentions(experts)}: the question above is still waiting for an answer "
        f"(asked {slack_date(asked_at)}). Reply in this thread to answer it."
    )
