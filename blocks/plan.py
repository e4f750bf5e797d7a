"""The plan message: one message per run, edited in place as the steps progress."""

from __future__ import annotations

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
)

from agent.schemas import (
    ActionType,
    InterventionAction,
    InterventionKind,
    InterventionRequest,
    InterventionStatus,
    PlanStep,
    RunState,
    RunStatus,
    StepResult,
    StepStatus,
)
from blocks import ids
from blocks.common import (
    LEVEL_WORDS,
    RUN_STATUS_LABEL,
    STEP_EMOJI,
    button,
    cancel_button,
    context,
    header,
    level_for,
    mention,
    one_line,
    pack_lines,
    safe,
    section,
    short_id,
    with_mentions,
)
from blocks.explain import needs_a_look, step_outcome
from blocks.limits import MAX_BLOCKS_PER_MESSAGE, MAX_MESSAGE_TEXT, truncate

PLAN_APPROVAL_TEXT = (
    "🙋 *Run this plan?* The question looks involved, so I check the plan with you first. "
    "*Run plan* starts it · *Edit…* tells me what to change · *Cancel* stops here."
)
STEP_DESCRIPTION_LIMIT = 600
STEP_ERROR_LIMIT = 300
QUESTION_LIMIT = 1500
NOTIFICATION_QUESTION_LIMIT = 200


def step_icon(result: StepResult | None) -> str:
    """The step's emoji: a search that found nothing is not a ✅."""
    if result is None:
        return STEP_EMOJI[StepStatus.PENDING]
    if result.status is StepStatus.SUCCESS and needs_a_look(result):
        return STEP_EMOJI[StepStatus.PARTIAL]
    return STEP_EMOJI[result.status]


def step_line(
    step: PlanStep, result: StepResult | None, *, detailed: bool = False, clarified: str = ""
) -> str:
    """`✅ *1.* Find the policy — found 2 passages in *a.md*` (plain words, the default),
    or with `detailed` the action, score and level (for `/grace status RUN`).

    `clarified` is what the person answered to an earlier question: the step searches with
    it, so the line says so instead of showing only the original question.
    """
    status = result.status if result else StepStatus.PENDING
    what = one_line(step.description) or one_line(step.query) or "(no description)"
    if clarified:
        what = f"{what} (with your answer “{one_line(clarified)}”)"
    if not detailed:
        line = f"{step_icon(result)} *{step.step_id}.* {safe(what, STEP_DESCRIPTION_LIMIT)}"
        if result is not None and status not in (StepStatus.PENDING, StepStatus.RUNNING):
            line += f" — {step_outcome(result)}"
        return line
    line = (
        f"{step_icon(result)} *{step.step_id}.* `{step.action.value}` — "
        f"{safe(what, STEP_DESCRIPTION_LIMIT)}"
    )
    if result is not None and status not in (StepStatus.PENDING, StepStatus.RUNNING):
        if status is not StepStatus.SKIPPED:
            level = result.level or level_for(result.confidence)
            line += f" · *{result.confidence:.2f}* {LEVEL_WORDS[level]}"
        if result.used_fallback is not None:
            line += f" · via fallback `{result.used_fallback.value}`"
        if result.error and status in (StepStatus.FAILED, StepStatus.PARTIAL, StepStatus.SKIPPED):
            line += f"\n      ↳ _{safe(one_line(result.error), STEP_ERROR_LIMIT)}_"
    return line


def clarification_for(state: RunState, step: PlanStep) -> str:
    """The person's answers a search step uses, when it comes after an answered question."""
    if step.action not in (ActionType.RAG_SEARCH, ActionType.WEB_SEARCH) or not state.user_inputs:
        return ""
    asked = [
        r.step_id
        for r in state.step_results.values()
        if r.action is ActionType.ASK_USER and r.output.strip()
    ]
    if not asked or step.step_id < min(asked):
        return ""
    return " ".join(text.strip() for text in state.user_inputs if text.strip())


def step_lines(state: RunState, *, detailed: bool = False) -> list[str]:
    """One line per plan step, in plan order, with its current status."""
    if state.plan is None:
        return []
    return [
        step_line(
            step,
            state.step_results.get(step.step_id),
            detailed=detailed,
            clarified=clarification_for(state, step),
        )
        for step in state.plan.steps
    ]


def step_sections(lines: list[str], max_blocks: int) -> list[Block]:
    """Step lines packed into at most `max_blocks` sections, the overflow summarised."""
    if max_blocks < 1 or not lines:
        return []
    packed = pack_lines(lines)
    if len(packed) <= max_blocks:
        return [section(text) for text in packed]
    kept = packed[: max_blocks - 1]
    shown = sum(text.count("\n") + 1 - text.count("\n      ↳") for text in kept)
    more = len(lines) - shown
    return [section(text) for text in kept] + [section(f"_…and {more} more steps_")]


def _done_count(state: RunState) -> int:
    finished = {StepStatus.SUCCESS, StepStatus.PARTIAL, StepStatus.FAILED, StepStatus.SKIPPED}
    return sum(1 for r in state.step_results.values() if r.status in finished)


def _last_plan_decision(state: RunState) -> InterventionRequest | None:
    for request in reversed(state.interventions):
        if request.kind is InterventionKind.PLAN_APPROVAL and request.answered_by:
            return request
    return None


def _plan_buttons(request: InterventionRequest) -> ActionsBlock:
    value = ids.ButtonValue(run_id=request.run_id, intervention_id=request.intervention_id).encode()
    return ActionsBlock(
        block_id=ids.PLAN_ACTIONS_BLOCK,
        elements=[
            button("▶️ Run plan", ids.PLAN_RUN, value, style="primary"),
            button("✏️ Edit…", ids.PLAN_EDIT, value),
            cancel_button(ids.PLAN_CANCEL, value),
        ],
    )


def waiting_text(pending: InterventionRequest) -> str:
    """What the plan message says while a pause below it waits for a person."""
    step = f" step {pending.step_id}" if pending.step_id is not None else " what I found"
    if pending.kind is InterventionKind.CONFIRM:
        return f"⏸️ Waiting for you to check{step} (below)"
    if pending.kind is InterventionKind.ASK_USER:
        return f"⏸️ Waiting for your answer below: {safe(one_line(pending.question), 300)}"
    return "⏸️ Waiting for your help (below)"


def _replan_line(state: RunState) -> str | None:
    if not state.replan_history:
        return None
    count = len(state.replan_history)
    times = "once" if count == 1 else f"{count} times"
    return (
        f"🔁 I changed the plan {times} along the way "
        f"(why: `/grace status {short_id(state.run_id)}`)"
    )


def plan_head(state: RunState) -> list[Block]:
    """The plan message's top: the question as its header, status, progress, run id."""
    head: list[Block] = [header(f"🧭 {state.query}")]
    flat_question = one_line(state.query)
    if len(flat_question) > 140 or "\n" in state.query.strip():
        head.append(section(f">{safe(flat_question, QUESTION_LIMIT)}"))

    facts = [f"*Status:* {RUN_STATUS_LABEL[state.status]}"]
    if state.plan is not None:
        facts.append(f"{_done_count(state)} of {len(state.plan.steps)} steps done")
    facts.append(f"run `{short_id(state.run_id)}`")
    head.append(context(*facts))
    return head


def plan_tail(state: RunState) -> list[Block]:
    """The plan message's bottom: replans, who decided on the plan, why it stopped, and
    Run / Edit / Cancel while the plan waits for approval."""
    tail: list[Block] = []
    replans = _replan_line(state)
    if replans:
        tail.append(context(replans))
    decision = _last_plan_decision(state)
    if decision is not None and decision.answer is not None:
        verb = {
            InterventionAction.PROCEED: "approved",
            InterventionAction.MODIFY: "edited",
            InterventionAction.CANCEL: "cancelled",
        }.get(decision.answer.action, "answered")
        tail.append(context(f"Plan {verb} by {mention(decision.answered_by or '')}"))
    if state.status.is_final and state.error:
        emoji = "🛑" if state.status is RunStatus.CANCELLED else "❌"
        tail.append(section(f"{emoji} {with_mentions(one_line(state.error), 1500)}"))

    pending = state.pending
    if pending is not None and pending.status is InterventionStatus.PENDING:
        if pending.kind is InterventionKind.PLAN_APPROVAL:
            tail.append(section(PLAN_APPROVAL_TEXT))
            tail.append(_plan_buttons(pending))
        else:
            tail.append(context(waiting_text(pending)))
    return tail


def plan_message(state: RunState) -> list[Block]:
    """The plan as Block Kit: question, steps with status and confidence, replans, status.

    Shows Run / Edit / Cancel only while the run waits for plan approval. Always within
    Slack's limits: long plans are packed into few sections, and past the block budget the
    remaining steps are summarised as "…and N more steps".
    """
    head, tail = plan_head(state), plan_tail(state)
    if state.plan is None:
        body: list[Block] = [section("_Planning…_" if not state.status.is_final else "_No plan._")]
    else:
        budget = MAX_BLOCKS_PER_MESSAGE - len(head) - len(tail)
        body = step_sections(step_lines(state), budget) or [section("_The plan has no steps._")]
    return head + body + tail


def fallback_text(state: RunState) -> str:
    """The notification text of the plan message (shown in notifications and old clients)."""
    question = safe(one_line(state.query), NOTIFICATION_QUESTION_LIMIT)
    text = f"GRACE plan for “{question}” — {RUN_STATUS_LABEL[state.status]}"
    if state.plan is not None:
        text += f" ({_done_count(state)}/{len(state.plan.steps)} steps done)"
    pending = state.pending
    if pending is not None and pending.kind is InterventionKind.PLAN_APPROVAL:
        text += " — needs approval"
    return truncate(text, MAX_MESSAGE_TEXT)


def outcome_text(state: RunState) -> str:
    """The thread's note when a run stops without an answer, with its short id for
    `/grace status|retry` (people are mentioned, not shown as raw ids)."""
    reason = with_mentions(one_line(state.error or ""), 2000)
    short = short_id(state.run_id)
    if state.status is RunStatus.CANCELLED:
        text = f"🛑 Stopped: {reason or 'cancelled'}"
    else:
        text = f"❌ I could not answer this: {reason or 'the run failed'}"
    return f"{text}\nrun `{short}` · `/grace retry {short}` asks again"
