"""What predicts that an answer is right, read from the answer and its passages."""

from __future__ import annotations

import re
from collections.abc import Sequence

from agent.evidence.conflicts import versions_disagree
from agent.evidence.names import name_missing
from agent.evidence.scoring import gather
from agent.evidence.terms import terms
from agent.schemas import Source


def answer_features(query: str, answer: str, passages: Sequence[Source]) -> dict[str, float]:
    """What predicts that an answer is right, read from the answer and its passages
    (for any model): how much of the question the quoted evidence covers, whether it
    holds the kind of value asked for, how clearly one document wins, how well the
    search matched, whether sources disagree, and whether a person supplied it."""
    if any(p.from_person for p in passages) and any(
        f"[Source: {p.source}]" in answer for p in passages if p.from_person
    ):
        return {"from_person": 1.0}
    evidence = gather(query, passages)
    text = re.sub(r"\[Source: [^\]]*\]", " ", answer)
    if "[Source: " not in answer:
        # Nothing cited: "not found", or an answer from no passage. No evidence at all.
        return {
            "answer_coverage": 0.0,
            "value_type_match": 0.0,
            "document_margin": 0.0,
            "competing_documents": 0.0,
            "search_match": round(max((p.similarity for p in passages), default=0.0), 4),
            "sources_conflict": 0.0,
            "passage_coverage": 0.0,
            "answer_score": 0.0,
            "unit_margin": 0.0,
            "question_terms": float(len(evidence.query_tokens)),
            "value_asked": 1.0 if evidence.kinds else 0.0,
            "absent_terms": round(evidence.absent_share, 4),
            "missing_name": 0.0,
        }
    quoted = [u for u in evidence.units if u.text and u.text in answer]
    if quoted:
        best = max(quoted, key=lambda u: u.score)
        coverage = max(u.coverage for u in quoted)
        typed = any(evidence.holds_value(u.text) for u in quoted)
        sources = {u.source for u in quoted}
    else:
        best = evidence.ranked[0] if evidence.ranked else None
        cited = [p for p in passages if f"[Source: {p.source}]" in answer] or list(passages)
        context = frozenset().union(*(terms(p.text.split("\n", 1)[0]) for p in cited))
        coverage = evidence.coverage(terms(text), context) if text.strip() else 0.0
        typed = evidence.holds_value(text)
        sources = {p.source for p in cited}
    # The answer's document, as far as the search returned it: its headings and text.
    document = "\n".join(f"{u.context}\n{u.text}" for u in evidence.units if u.source in sources)
    margin = 0.0
    competing = 0.0
    if best is not None and best.score > 0:
        mine = evidence.family[best.source].key
        # Only candidate answers compete: a passage without the kind of value asked
        # for ("how many days?" → a number) is no rival, however many words it shares.
        others = [
            u
            for u in evidence.best_per_family(typed_only=True)
            if evidence.family[u.source].key != mine
        ]
        runner_up = others[0].score if others else 0.0
        margin = max(0.0, 1.0 - runner_up / best.score)
        competing = float(sum(1 for u in others if u.score >= 0.85 * best.score))
    conflict = 1.0 if "⚠️" in answer or versions_disagree(evidence, quoted) else 0.0
    # How clearly the quoted unit beats the next candidate answer not quoted.
    unit_margin = 0.0
    if best is not None and best.score > 0:
        rivals = [
            u.score for u in evidence.ranked if u.typed and u.text not in answer and u is not best
        ]
        unit_margin = max(0.0, 1.0 - (rivals[0] if rivals else 0.0) / best.score)
    return {
        "answer_coverage": round(coverage, 4),
        "value_type_match": 1.0 if typed else 0.0,
        "document_margin": round(margin, 4),
        "competing_documents": competing,
        "search_match": round(max((p.similarity for p in passages), default=0.0), 4),
        "sources_conflict": conflict,
        "passage_coverage": round(best.passage_coverage if best is not None else 0.0, 4),
        "answer_score": round(best.score if best is not None else 0.0, 4),
        "unit_margin": round(unit_margin, 4),
        "question_terms": float(len(evidence.query_tokens)),
        "value_asked": 1.0 if evidence.kinds else 0.0,
        "absent_terms": round(evidence.absent_share, 4),
        "missing_name": 1.0 if name_missing(query, document) else 0.0,
    }
