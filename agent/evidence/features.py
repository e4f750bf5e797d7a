"""What predicts that an answer is right, read from the answer and its passages."""

from __future__ import annotations

from collections.abc import Sequence

from agent.citations import strip_citations
from agent.evidence.conflicts import states_conflict, versions_disagree
from agent.evidence.names import name_missing
from agent.evidence.scoring import Evidence, Unit, gather
from agent.evidence.terms import terms
from agent.schemas import AnswerFeatures, Source

CLOSE_RIVAL = 0.85
"""Another document whose best candidate scores this share of the answer's competes with
it: two documents that nearly tie make either answer less sure."""
ROUNDING = 4
"""Digits kept of each feature: the map's inputs and the breakdown a person reads."""

_CITED = "[Source: "


def _cites(answer: str, source: str) -> bool:
    return f"{_CITED}{source}]" in answer


def answer_features(query: str, answer: str, passages: Sequence[Source]) -> AnswerFeatures:
    """What predicts that an answer is right, read from the answer and its passages
    (for any model): how much of the question the quoted evidence covers, whether it
    holds the kind of value asked for, how clearly one document wins, how well the
    search matched, whether sources disagree, and whether a person supplied it."""
    if any(p.from_person and _cites(answer, p.source) for p in passages):
        return AnswerFeatures(from_person=True)
    if any(p.verified and p.verified.fresh() and _cites(answer, p.source) for p in passages):
        return AnswerFeatures(verified=True)
    evidence = gather(query, passages)
    search_match = round(max((p.similarity for p in passages), default=0.0), ROUNDING)
    if _CITED not in answer:
        # Nothing cited: "not found", or an answer from no passage. No evidence at all.
        return AnswerFeatures(
            search_match=search_match,
            question_terms=len(evidence.query_tokens),
            value_asked=bool(evidence.kinds),
            absent_terms=round(evidence.absent_share, ROUNDING),
            question_spread=_question_spread(evidence),
        )
    quoted = [u for u in evidence.units if u.text and u.text in answer]
    if quoted:
        best: Unit | None = max(quoted, key=lambda u: u.score)
        coverage = max(u.coverage for u in quoted)
        typed = any(evidence.holds_value(u.text) for u in quoted)
        sources = {u.source for u in quoted}
    else:
        text = strip_citations(answer, gap=" ")
        best = evidence.ranked[0] if evidence.ranked else None
        cited = [p for p in passages if _cites(answer, p.source)] or list(passages)
        context = frozenset().union(*(terms(p.text.split("\n", 1)[0]) for p in cited))
        coverage = evidence.coverage(terms(text), context) if text.strip() else 0.0
        typed = evidence.holds_value(text)
        sources = {p.source for p in cited}
    # The answer's document, as far as the search returned it: its headings and text.
    document = "\n".join(f"{u.context}\n{u.text}" for u in evidence.units if u.source in sources)
    margin, competing = _document_margin(evidence, best)
    return AnswerFeatures(
        answer_coverage=round(coverage, ROUNDING),
        value_type_match=typed,
        document_margin=round(margin, ROUNDING),
        competing_documents=competing,
        search_match=search_match,
        sources_conflict=states_conflict(answer) or versions_disagree(evidence, quoted),
        passage_coverage=round(best.passage_coverage if best is not None else 0.0, ROUNDING),
        answer_score=round(best.score if best is not None else 0.0, ROUNDING),
        unit_margin=round(_unit_margin(evidence, best, answer), ROUNDING),
        question_terms=len(evidence.query_tokens),
        value_asked=bool(evidence.kinds),
        absent_terms=round(evidence.absent_share, ROUNDING),
        missing_name=name_missing(query, document),
        question_spread=_question_spread(evidence),
    )


def _question_spread(evidence: Evidence) -> int:
    """How many documents hold the question's most specific word, among the passages: a
    short question one document alone speaks to ("where is the badge office?", the
    only page with "badge") is no vague one, however few its words; "what's the
    limit?", whose every word several documents share, is."""
    held = (_documents_holding(evidence, token) for token in evidence.query_tokens)
    return min((n for n in held if n), default=0)


def _documents_holding(evidence: Evidence, token: str) -> int:
    """Documents among the passages with the word in a sentence or its heading, the
    versions of one counted once."""
    return len(
        {
            evidence.family[u.source].key
            for u in evidence.units
            if token in u.tokens or token in u.context_tokens
        }
    )


def _document_margin(evidence: Evidence, best: Unit | None) -> tuple[float, int]:
    """How clearly the answer's document beats the best other candidate answer, and how
    many other documents come close. Only candidate answers compete: a passage without
    the kind of value asked for ("how many days?" → a number) is no rival, however many
    words it shares."""
    if best is None or best.score <= 0:
        return 0.0, 0
    mine = evidence.family[best.source].key
    others = [
        u
        for u in evidence.best_per_family(typed_only=True)
        if evidence.family[u.source].key != mine
    ]
    runner_up = others[0].score if others else 0.0
    competing = sum(1 for u in others if u.score >= CLOSE_RIVAL * best.score)
    return max(0.0, 1.0 - runner_up / best.score), competing


def _unit_margin(evidence: Evidence, best: Unit | None, answer: str) -> float:
    """How clearly the quoted unit beats the next candidate answer not quoted."""
    if best is None or best.score <= 0:
        return 0.0
    rivals = [
        u.score for u in evidence.ranked if u.typed and u.text not in answer and u is not best
    ]
    return max(0.0, 1.0 - (rivals[0] if rivals else 0.0) / best.score)
