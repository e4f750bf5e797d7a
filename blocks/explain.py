"""Plain words for a confidence score: what was found, where, and why GRACE is unsure.

Cards speak to people, not to whoever tunes the scorer: factor names and numbers stay in
the Details view. Everything here reads the score's breakdown and penalties (SPEC §2.5)
and the sources, and turns them into one short sentence each.
"""

from __future__ import annotations

import re

from slack_sdk.models.blocks import AlertBlock, MarkdownTextObject

from agent.evidence import figures
from agent.schemas import ConfidenceScore, InterventionLevel, Source, StepResult, StepStatus
from blocks.common import LEVEL_WORDS, one_line, safe

_YEAR = re.compile(r"(?<!\d)((?:19|20)\d\d)(?!\d)")
"""A year in a document's name (`employee-handbook-2022.md`): worth saying when it is the
only document."""
DISAGREEMENT_BELOW = 0.5
"""`source_agreement` under this, with two or more documents, reads as "they disagree"."""
WEAK_FACTOR_BELOW = 0.6
NAME_LIMIT = 120
SHOWN_NAMES = 3

# What a person must do, not how alarming the score is: an answer they can rely on needs
# nothing, a doubtful one asks them to check the sources.
ANSWER_CONFIDENCE: dict[InterventionLevel, str] = {
    InterventionLevel.SILENT: f"{LEVEL_WORDS[InterventionLevel.SILENT]} — the sources back "
    "this answer up.",
    InterventionLevel.NOTIFY: f"{LEVEL_WORDS[InterventionLevel.NOTIFY]} — worth a glance at "
    "the sources.",
    InterventionLevel.CONFIRM: f"{LEVEL_WORDS[InterventionLevel.CONFIRM]} — please check the "
    "sources before relying on it.",
    InterventionLevel.ESCALATE: f"{LEVEL_WORDS[InterventionLevel.ESCALATE]} — the sources "
    "barely back this up; please check them.",
}


def document_names(sources: list[Source]) -> list[str]:
    """Distinct document names in first-cited order, without the user's own replies."""
    names = [one_line(s.source) for s in sources if s.source and s.source != "user reply"]
    return list(dict.fromkeys(names))


def quoted(name: str) -> str:
    """`*handbook.md*`: a document name, escaped and cut to fit a sentence."""
    return f"*{safe(name, NAME_LIMIT)}*"


def name_list(names: list[str]) -> str:
    """`*a.md*`, `*a.md* and *b.md*`, `*a.md*, *b.md* and 2 more`."""
    shown = [quoted(n) for n in names[:SHOWN_NAMES]]
    more = len(names) - len(shown)
    if more > 0:
        return f"{', '.join(shown)} and {more} more"
    if len(shown) <= 1:
        return "".join(shown)
    return f"{', '.join(shown[:-1])} and {shown[-1]}"


def found_sentence(sources: list[Source]) -> str:
    """What a step found and where: "I found 3 passages in *a.md* and *b.md*."."""
    passages = [s for s in sources if s.source != "user reply"]
    names = document_names(passages)
    if not passages:
        return "I found nothing in the knowledge base for this."
    count = len(passages)
    noun = "passage" if count == 1 else "passages"
    return f"I found {count} {noun} in {name_list(names)}."


def disagreeing_documents(detail: ConfidenceScore | None, sources: list[Source]) -> list[str]:
    """The two documents that disagree, when the score says its sources disagree: the
    first two whose passages give different figures for the same thing, else the first
    two cited. None when the answer's evidence found no conflict (`sources_conflict` 0):
    documents about different things are not in disagreement, however unlike they read."""
    if detail is None:
        return []
    agreement = detail.breakdown.get("source_agreement")
    names = document_names(sources)
    if agreement is None or agreement >= DISAGREEMENT_BELOW or len(names) < 2:
        return []
    if detail.breakdown.get("sources_conflict", 1.0) == 0.0:
        return []
    return conflicting_pair(sources, names) or names[:2]


def conflicting_pair(sources: list[Source], names: list[str]) -> list[str]:
    """The first two documents (in `names` order) whose passages state different numbers
    for the same unit ("3 days" against "one day"); [] when no two do."""
    stated: dict[str, dict[str, set[str]]] = {}
    for name in names:
        merged: dict[str, set[str]] = {}
        for src in sources:
            if one_line(src.source) == name:
                for unit, numbers in figures(src.text).items():
                    merged.setdefault(unit, set()).update(numbers)
        stated[name] = merged
    for i, first in enumerate(names):
        for second in names[i + 1 :]:
            a, b = stated[first], stated[second]
            if any(unit in b and a[unit].isdisjoint(b[unit]) for unit in a):
                return [first, second]
    return []


def disagreement_alert(names: list[str]) -> AlertBlock:
    """A warning naming both documents that disagree."""
    return AlertBlock(
        level="warning",
        text=MarkdownTextObject(
            text=f"{quoted(names[0])} and {quoted(names[1])} say different things: check "
            "both before relying on the answer."
        ),
    )


def _has(detail: ConfidenceScore, prefix: str) -> bool:
    return any(p.startswith(prefix) for p in detail.penalties)


def why_unsure(
    detail: ConfidenceScore | None, sources: list[Source], *, alerted: bool = False
) -> str:
    """One sentence saying why GRACE is unsure, from the strongest reason in the score.
    `alerted`: the caller has already looked for disagreeing documents (and warns of
    them, by an alert or the answer's own note, if there are any), so the sentence gives
    the next reason instead of looking again or repeating the warning."""
    if detail is None:
        return "I could not judge how reliable this is."
    names = document_names(sources)
    factors = detail.breakdown
    if _has(detail, "no search results") or (detail.is_search_step and not names):
        return "Nothing in the knowledge base matched your question."
    if _has(detail, "tool failures") or factors.get("tool_success", 1.0) < 1.0:
        return "A search did not work, so I have less to go on than usual."
    pair = [] if alerted else disagreeing_documents(detail, sources)
    if pair:
        return f"The two documents disagree: {quoted(pair[0])} and {quoted(pair[1])}."
    if _has(detail, "single source") or len(names) == 1:
        if not names:
            return "Only one document mentions this."
        year = _YEAR.search(names[0])
        dated = f", and it is from {year.group(1)}" if year else ""
        return f"Only one document mentions this ({quoted(names[0])}){dated}."
    if factors.get("query_coverage", 1.0) < WEAK_FACTOR_BELOW:
        return "The best match only partly covers your question."
    if factors.get("search_quality", 1.0) < WEAK_FACTOR_BELOW:
        return "The closest passages are only a loose match for your question."
    if factors.get("llm_self_eval", 1.0) < WEAK_FACTOR_BELOW:
        return "The answer I drafted does not clearly follow from what I found."
    if _has(detail, "no sources"):
        return "No document backs this step up."
    return "The evidence is thinner than I would like."


def step_outcome(result: StepResult) -> str:
    """A few words on what a finished step came to: "found 2 passages in *a.md*"."""
    if result.status is StepStatus.SKIPPED:
        return "skipped"
    if result.status is StepStatus.FAILED:
        return "did not work"
    if result.action.value == "ask_user":
        reply = one_line(result.output)
        return f"you answered “{safe(reply, 200)}”" if reply else "no answer given"
    if result.action.value in ("rag_search", "web_search"):
        names = document_names(result.sources)
        if not result.sources or not names:
            return "found nothing"
        count = len(result.sources)
        noun = "passage" if count == 1 else "passages"
        return f"found {count} {noun} in {name_list(names)}"
    if result.level in (InterventionLevel.CONFIRM, InterventionLevel.ESCALATE):
        return "done, but unsure"
    return "done"


def needs_a_look(result: StepResult) -> bool:
    """A finished step whose outcome a person should not take as a plain success."""
    if result.status is not StepStatus.SUCCESS:
        return result.status is not StepStatus.SKIPPED
    if result.action.value in ("rag_search", "web_search") and not result.sources:
        return True
    return result.level is InterventionLevel.ESCALATE
