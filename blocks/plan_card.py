"""The plan as Slack's own plan: one task per step, for the stream and the plan message.

The same `PlanTask` list feeds both displays: `task_update` chunks of a streamed reply
(`task_display_mode="plan"`) and, where a workspace does not stream, the `plan` block of
today's edited plan message, holding one `task_card` per step. Titles, details and
outputs are plain text (Slack shows them as such), in plain words; numbers stay behind
`/grace status RUN`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from slack_sdk.models.blocks import (
    Block,
    PlanBlock,
    RichTextBlock,
    RichTextElementParts,
    RichTextSectionElement,
    TaskCardBlock,
)
from slack_sdk.models.blocks.block_elements import UrlSourceElement
from slack_sdk.models.messages.chunk import MarkdownTextChunk, PlanUpdateChunk, TaskUpdateChunk

from agent.evidence import focus_question
from agent.schemas import ActionType, PlanStep, RunState, RunStatus, Source, StepResult, StepStatus
from blocks.common import one_line
from blocks.explain import document_names, step_outcome
from blocks.limits import truncate
from blocks.plan import clarification_for, plan_head, plan_message, plan_tail
from blocks.sanitize import document_text

TASK_TITLE_LIMIT = 150
TASK_TEXT_LIMIT = 500
PLAN_TITLE_LIMIT = 150
MAX_TASKS = 20
"""Steps shown as tasks; a longer plan's remaining steps are summarised in one task."""
MAX_URL_SOURCES = 5
MARKDOWN_CHUNK_LIMIT = 12_000
"""Slack's limit for one `markdown_text` (a longer answer is sent in several)."""

TASK_STATUS: dict[StepStatus, str] = {
    StepStatus.PENDING: "pending",
    StepStatus.RUNNING: "in_progress",
    StepStatus.SUCCESS: "complete",
    StepStatus.PARTIAL: "complete",
    StepStatus.SKIPPED: "complete",
    StepStatus.FAILED: "error",
}

PLAN_TITLE: dict[RunStatus, str] = {
    RunStatus.PLANNING: "Working out how to answer",
    RunStatus.RUNNING: "Looking into your question",
    RunStatus.PAUSED: "Waiting for you (see below)",
    RunStatus.ANSWERED: "Done",
    RunStatus.CANCELLED: "Stopped",
    RunStatus.FAILED: "Could not finish",
}

_MARKS = re.compile(r"[*_`]")


@dataclass(frozen=True)
class PlanTask:
    """One step as a task: what both the chunk and the `task_card` block show."""

    task_id: str
    title: str
    status: str  # pending | in_progress | complete | error
    details: str = ""
    output: str = ""
    sources: tuple[tuple[str, str], ...] = ()  # (url, text)


def _plain(text: str, limit: int) -> str:
    """One line of plain text without mrkdwn marks, cut to `limit`."""
    return truncate(_MARKS.sub("", one_line(text)), limit)


def _looked_for(query: str, action: str, status: StepStatus) -> str:
    """What the step does, in the tense of where it stands: a pending step has not
    looked anywhere yet ("Will look in …"), a running one is looking, a done one looked."""
    if action in (ActionType.RAG_SEARCH.value, ActionType.WEB_SEARCH.value):
        where = "the web" if action == ActionType.WEB_SEARCH.value else "the knowledge base"
        verb = _SEARCH_VERB.get(status, "Looked")
        return f"{verb} in {where} for “{query}”" if query else f"{verb} in {where}"
    if action == ActionType.ASK_USER.value:
        verb = _ASK_VERB.get(status, "Asked")
        return f"{verb} you to make the question clearer"
    return ""


def _doing(state: RunState, step: PlanStep) -> StepStatus:
    """The step's status for its wording: a question waiting for the person's answer is
    being asked, though no result is recorded for it yet."""
    result = state.step_results.get(step.step_id)
    if result is not None:
        return result.status
    pending = state.pending
    if (
        pending is not None
        and pending.step_id == step.step_id
        and step.action is ActionType.ASK_USER
    ):
        return StepStatus.RUNNING
    return StepStatus.PENDING


_SEARCH_VERB: dict[StepStatus, str] = {
    StepStatus.PENDING: "Will look",
    StepStatus.RUNNING: "Looking",
}
_ASK_VERB: dict[StepStatus, str] = {
    StepStatus.PENDING: "Will ask",
    StepStatus.RUNNING: "Asking",
}


def _url_sources(sources: list[Source]) -> tuple[tuple[str, str], ...]:
    """Documents whose name is a web address, as (url, text) for URL sources."""
    found: dict[str, str] = {}
    for src in sources:
        name = one_line(src.source)
        if name.startswith(("https://", "http://")) and name not in found:
            found[name] = _plain(src.doc_title or name, 150)
    return tuple(found.items())[:MAX_URL_SOURCES]


def _output(result: StepResult | None) -> str:
    if result is None or result.status in (StepStatus.PENDING, StepStatus.RUNNING):
        return ""
    text = step_outcome(result)
    if result.status is StepStatus.FAILED and result.error:
        text += f": {result.error}"
    names = document_names(result.sources)
    if len(names) > 3:  # step_outcome names three; the task lists them all (capped)
        text += " (" + ", ".join(names[:10]) + ")"
    return _plain(text, TASK_TEXT_LIMIT)


def plan_tasks(state: RunState) -> list[PlanTask]:
    """One task per plan step, in plan order, with its status, details, output, sources.

    After a replan the steps are renumbered: tasks the earlier plan showed beyond the new
    plan's length are closed ("no longer needed") instead of staying pending.
    """
    if state.plan is None:
        return []
    tasks: list[PlanTask] = []
    steps = state.plan.steps
    for step in steps[:MAX_TASKS]:
        result = state.step_results.get(step.step_id)
        status = result.status if result else StepStatus.PENDING
        title = one_line(step.description) or one_line(step.query) or f"Step {step.step_id}"
        clarified = clarification_for(state, step)
        query = one_line(step.query)
        if clarified:
            query = one_line(focus_question(query, [clarified]))
            title = f"{title} (with your answer “{one_line(clarified)}”)"
        tasks.append(
            PlanTask(
                task_id=str(step.step_id),
                title=_plain(title, TASK_TITLE_LIMIT),
                status=TASK_STATUS[status],
                details=_plain(_looked_for(query, step.action.value, _doing(state, step)), 500),
                output=_output(result),
                sources=_url_sources(result.sources) if result else (),
            )
        )
    if len(steps) > MAX_TASKS:
        rest = steps[MAX_TASKS:]
        done = all(
            (r := state.step_results.get(s.step_id)) is not None
            and r.status not in (StepStatus.PENDING, StepStatus.RUNNING)
            for s in rest
        )
        tasks.append(
            PlanTask(
                task_id=str(MAX_TASKS + 1),
                title=f"{len(rest)} more steps",
                status="complete" if done else "pending",
            )
        )
    shown_before = max((len(r.old_steps) for r in state.replan_history), default=0)
    for number in range(len(tasks) + 1, min(shown_before, MAX_TASKS + 1) + 1):
        tasks.append(
            PlanTask(
                task_id=str(number),
                title="Earlier step",
                status="complete",
                output="No longer needed: the plan changed",
            )
        )
    return tasks


def plan_title(state: RunState) -> str:
    """The plan's title: what GRACE is doing now, in a few words."""
    return truncate(PLAN_TITLE[state.status], PLAN_TITLE_LIMIT)


# --------------------------------------------------------------------------- stream chunks


def _source_elements(task: PlanTask) -> list[UrlSourceElement] | None:
    """The task's web sources as Slack's `url` source elements (a chunk's and a card's)."""
    return [UrlSourceElement(url=url, text=text) for url, text in task.sources] or None


def task_chunk(task: PlanTask) -> TaskUpdateChunk:
    return TaskUpdateChunk(
        id=task.task_id,
        title=task.title,
        status=task.status,
        details=task.details or None,
        output=task.output or None,
        sources=_source_elements(task),
    )


def plan_chunks(state: RunState, tasks: list[PlanTask] | None = None) -> list[TaskUpdateChunk]:
    """`task_update` chunks for `tasks` (default: every task of the run)."""
    return [task_chunk(t) for t in (plan_tasks(state) if tasks is None else tasks)]


def title_chunk(state: RunState) -> PlanUpdateChunk:
    return PlanUpdateChunk(title=plan_title(state))


def answer_markdown(state: RunState) -> list[MarkdownTextChunk]:
    """The answer as `markdown_text` chunks of at most 12,000 characters: Markdown as the
    model wrote it, with `<`, `>` and `&` escaped (no `<!channel>` from a document) and
    links shown with their address."""
    text = document_text(state.final_answer.strip(), brackets=False)
    if not text:
        text = "_No answer was produced._"
    pieces: list[str] = []
    while text:
        cut = len(text)
        if cut > MARKDOWN_CHUNK_LIMIT:
            cut = text.rfind("\n", 0, MARKDOWN_CHUNK_LIMIT)
            cut = cut if cut > MARKDOWN_CHUNK_LIMIT // 2 else MARKDOWN_CHUNK_LIMIT
        pieces.append(text[:cut])
        text = text[cut:]
    return [MarkdownTextChunk(text=p) for p in pieces]


# --------------------------------------------------------------------------- blocks


def _rich(text: str) -> RichTextBlock | None:
    if not text:
        return None
    section = RichTextSectionElement(elements=[RichTextElementParts.Text(text=text)])
    return RichTextBlock(elements=[section])


def task_card(task: PlanTask) -> TaskCardBlock:
    """A `task_card` block (details and output are one `rich_text` each, as Slack wants)."""
    return TaskCardBlock(
        task_id=task.task_id,
        title=task.title,
        status=task.status,
        details=_rich(task.details),
        output=_rich(task.output),
        sources=_source_elements(task),
    )


def plan_block(state: RunState) -> Block:
    """The `plan` block: the title and one `task_card` per step."""
    return PlanBlock(title=plan_title(state), tasks=[task_card(t) for t in plan_tasks(state)])


def plan_card_message(state: RunState) -> list[Block]:
    """The edited plan message for a workspace that does not stream: the same head and
    tail as before (question, status, approval buttons) around Slack's `plan` block."""
    if state.plan is None or not state.plan.steps:
        return plan_message(state)
    return [*plan_head(state), plan_block(state), *plan_tail(state)]
