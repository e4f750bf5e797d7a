"""Prompt texts for the LLM-backed agent (SPEC §2.2, §2.4, §2.5).

Kept apart from the Gemini client so the wording can be reviewed and tested without any
network, and so another provider could reuse it. User-supplied text is always wrapped in
tags: the model must treat it as data, never as instructions.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent.ports import EvaluationRequest, PlanRequest, ReasoningRequest
from agent.schemas import ActionType, Source

MAX_PASSAGES = 12
"""More passages than this rarely improve an answer and only cost tokens."""
MAX_PASSAGE_CHARS = 1500
"""One passage is cut to this many characters (about one knowledge-base chunk)."""
MAX_PASSAGES_TOTAL_CHARS = 12_000
"""All passages together stay under this budget, best (earliest) passages first."""
MAX_CONTEXT_CHARS = 4000
MAX_ANSWER_CHARS = 6000
ELLIPSIS = " …[truncated]"

PLAN_PROMPT = """\
You are the planning agent of GRACE, a question-answering assistant for a team's Slack.
Analyse the user's question and produce an execution plan as JSON.

## Your responsibilities
1. Decompose the question into small, executable steps.
2. Estimate the complexity of the task from 0.0 to 1.0.
3. Choose the action (tool) for every step.
4. Make the order of the steps explicit with dependencies.

## Available actions
- `rag_search`: search the internal knowledge base (documents, manuals, FAQs). Set
  `query` to the search terms and `collection` to one of the known collections.
- `web_search`: search the internet (recent information, news). May be unavailable.
- `reasoning`: analyse the information gathered by earlier steps and write the answer.
- `ask_user`: ask the user an additional question. Put the question in `query` and, when
  the possible answers are few and known, list them in `options` (they become buttons).

## Known knowledge-base collections
{collections}

## Complexity guide
| complexity | when |
|---|---|
| 0.0-0.3 | one source answers it; a simple fact check |
| 0.3-0.6 | several sources needed; light analysis |
| 0.6-0.8 | several viewpoints to combine; comparison |
| 0.8-1.0 | conflicting information to reconcile; advanced reasoning |

## Rules
1. Use 2 to 5 steps. Too fine is hard to manage; too coarse loses context.
2. The first step always gathers information (normally `rag_search`). Never start with
   `reasoning`.
3. `ask_user` is a last resort: use it only when the question is too ambiguous to
   answer at all (for example "the latest X" where X is never named). Try the other
   actions first; never ask for something the knowledge base could tell.
4. Set `fallback` (an action name, e.g. `web_search` for a `rag_search` step) on the
   important steps, so a failed step can be retried another way; otherwise null.
5. `step_id` runs 1, 2, 3, ... in order. `depends_on` lists only ids of EARLIER steps
   whose output this step needs; the final `reasoning` step depends on the steps that
   gathered its information.
6. Normally end with one `reasoning` step that writes the answer.
7. Write `description` and `expected_output` in the language of the question. Write
   `query` in the language most likely to match the documents (the question's
   language unless it is obviously otherwise).
8. `success_criteria`: one sentence saying what a complete answer must contain.

## Output
Only JSON, no prose, matching this shape:
{{"complexity": 0.3,
  "steps": [{{"step_id": 1, "action": "rag_search", "description": "...",
              "query": "...", "collection": "...", "depends_on": [],
              "expected_output": "...", "fallback": "web_search"}},
            {{"step_id": 2, "action": "reasoning", "description": "...", "query": "...",
              "collection": null, "depends_on": [1], "expected_output": "...",
              "fallback": null}}],
  "success_criteria": "..."}}
"""

PLAN_FEEDBACK_SECTION = """\
## This is a replan
The previous plan must be changed. Reason / the user's modification request:
<feedback>
{feedback}
</feedback>
{completed}Plan only the work that is still needed, honouring the request above. If the
request asks for something specific (another source, a narrower scope, a different
angle), the new steps must do exactly that.
"""

REASONING_PROMPT = """\
You are GRACE, a careful assistant answering a colleague's question in Slack.

## Rules
1. Answer ONLY from the numbered passages below (and the user's clarifications). Do not
   use outside knowledge and never invent facts, numbers, names, dates or links.
2. Cite every statement that rests on a passage with `[Source: name]`, using the source
   name exactly as shown in the passage header.
3. If the passages do not contain the answer, or contain only part of it, say so
   plainly and say what is missing instead of guessing.
4. If passages contradict each other, say so and cite both.
5. Answer in the same language as the question. Be concise: short paragraphs or a short
   list; Slack markdown (*bold*, bullet lists) is fine, no headings.
{task}{context}{clarifications}
## Question
<question>
{query}
</question>

## Passages
{passages}
"""

EVALUATION_PROMPT = """\
You are a strict reviewer of an assistant's answer. Judge the answer against the
question and the passages it was based on.

Return JSON with:
- `self_eval` (0.0-1.0): how sure you are that the answer is correct AND grounded in the
  passages. Unsupported or invented claims, wrong citations, or contradictions with the
  passages make it low. An answer that honestly says the passages lack the information
  is grounded but should not score above 0.5.
- `coverage` (0.0-1.0): how much of what the question asks the answer actually covers
  (1.0 = every part of the question is answered).
- `rationale`: one or two short sentences explaining the scores.

Only JSON, no prose, e.g. {{"self_eval": 0.8, "coverage": 0.7, "rationale": "..."}}

## Question
<question>
{query}
</question>

## Answer
<answer>
{answer}
</answer>

## Passages
{passages}
"""

NO_PASSAGES = "(no passages were found)"


def truncate(text: str, limit: int) -> str:
    """Cut `text` to `limit` characters, marking the cut so the model knows text is missing."""
    text = text.strip()
    if len(text) <= limit:
        return text
    return text[: max(0, limit - len(ELLIPSIS))].rstrip() + ELLIPSIS


def format_passages(
    passages: Sequence[Source],
    *,
    max_passages: int = MAX_PASSAGES,
    per_passage: int = MAX_PASSAGE_CHARS,
    total: int = MAX_PASSAGES_TOTAL_CHARS,
) -> str:
    """Number the passages with their source names, within a character budget.

    Earlier passages are the better-ranked ones, so the budget is spent on them first.
    """
    blocks: list[str] = []
    used = 0
    for index, passage in enumerate(passages[:max_passages], start=1):
        remaining = total - used
        if remaining < 200:
            break
        text = truncate(passage.text, min(per_passage, remaining))
        block = f"[{index}] (source: {passage.source})\n{text}"
        blocks.append(block)
        used += len(text)
    omitted = len(passages) - len(blocks)
    if omitted > 0:
        blocks.append(f"({omitted} more passage(s) omitted for length)")
    return "\n\n".join(blocks) if blocks else NO_PASSAGES


def _format_collections(req: PlanRequest) -> str:
    if not req.collections and not req.default_collection:
        return "- (none listed; leave `collection` null to use the default)"
    names = list(dict.fromkeys([*req.collections, *filter(None, [req.default_collection])]))
    lines = [
        f"- `{name}`" + (" (default)" if name == req.default_collection else "") for name in names
    ]
    return "\n".join(lines)


def build_plan_prompt(req: PlanRequest) -> str:
    """The planner prompt: rules, collections, optional conversation and replan feedback."""
    prompt = PLAN_PROMPT.format(collections=_format_collections(req))
    actions = ", ".join(f"`{a.value}`" for a in ActionType)
    prompt += f"\nValid `action` and `fallback` values: {actions}.\n"
    if req.context.strip():
        prompt += (
            "\n## Earlier conversation in this thread (context only)\n<context>\n"
            f"{truncate(req.context, MAX_CONTEXT_CHARS)}\n</context>\n"
        )
    reason = " ".join(
        part.strip()
        for part in (
            f"The previous plan did not work: {req.failure}" if req.failure else "",
            f"The user asked for this change: {req.feedback}" if req.feedback else "",
        )
        if part.strip()
    )
    if reason:
        completed = ""
        if req.completed_steps:
            done = "\n".join(f"- {truncate(s, 500)}" for s in req.completed_steps)
            completed = (
                "Steps already completed (their results are kept and given to the new "
                f"steps; do not repeat them):\n{done}\n"
            )
        prompt += "\n" + PLAN_FEEDBACK_SECTION.format(
            feedback=truncate(reason, MAX_CONTEXT_CHARS), completed=completed
        )
    prompt += f"\n## Question\n<question>\n{req.query.strip()}\n</question>\n"
    return prompt


def build_reasoning_prompt(req: ReasoningRequest) -> str:
    """The answer prompt: passages numbered with source names, clarifications included."""
    task = ""
    if req.instruction.strip():
        task = f"\n## Your task in this step\n{truncate(req.instruction, 1000)}\n"
    context = ""
    if req.context.strip():
        context = (
            "\n## Context (earlier conversation and results of earlier steps)\n<context>\n"
            f"{truncate(req.context, MAX_CONTEXT_CHARS)}\n</context>\n"
        )
    clarifications = ""
    inputs = [text.strip() for text in req.user_inputs if text.strip()]
    if inputs:
        listed = "\n".join(f"- {truncate(text, 1000)}" for text in inputs)
        clarifications = (
            "\n## Clarifications given by the user (treat as true, like a passage; cite them "
            f"as [Source: user])\n<clarifications>\n{listed}\n</clarifications>\n"
        )
    return REASONING_PROMPT.format(
        task=task,
        context=context,
        clarifications=clarifications,
        query=req.query.strip(),
        passages=format_passages(req.passages),
    )


def build_evaluation_prompt(req: EvaluationRequest) -> str:
    """The self-evaluation + coverage prompt (one call, SPEC §2.5)."""
    return EVALUATION_PROMPT.format(
        query=req.query.strip(),
        answer=truncate(req.answer, MAX_ANSWER_CHARS) or "(empty answer)",
        passages=format_passages(req.passages),
    )
