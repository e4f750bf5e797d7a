"""Does "about what was asked" tell the answer sentence from its neighbours? Out of sample.

    python -m bench.aboutness [--sets all|NAME,...] [--penalties 0,0.1,...] [--json]

For every answerable question of every dev set: the top 5 passages of the hybrid search
with the shipped sentence encoder, cut into sentences; a sentence is *right* when it
holds one of the case's expected strings, *wrong* otherwise (questions with no right or
no wrong sentence are left out). Each sentence is scored by the lexical overlap alone,
by the encoder's cosine alone, by `agent.knowledge.semantic.aboutness` (cosine minus
a penalty for the question's insisted words it lacks) for each penalty, and by that
plus the lexical overlap ("combined"). Printed per set:
the mean per-question AUROC (chance a right sentence outscores a wrong one) and top-1
(a right sentence ranked first). The penalty is chosen leave-one-set-out: for each set,
the value best on the others (mean per-question AUROC), and that set's figures at it.

Labels by expected string are approximate (a wrong sentence can hold the same value). It
is a benchmark: the exit code is 0 whatever the numbers.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import tempfile
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from agent.knowledge.ingest import ingest_paths
from agent.knowledge.lexical import QueryTerms
from agent.knowledge.qdrant_kb import open_knowledge_base
from agent.knowledge.semantic import aboutness
from agent.knowledge.tokenize import tokenize
from agent.llm.sentence_encoder import SentenceEncoder
from bench.retrieval import (
    Case,
    _fold,
    dev_set_parser,
    fitted_on_the_others,
    load_cases,
    parse_dev_set_args,
    show_report,
)

ROOT = Path(__file__).resolve().parent.parent

PENALTIES = (0.0, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.6)
_SPLIT = re.compile(r"(?<=[。！？!?])|(?<=[.;])\s+|\n+")


@dataclass
class Question:
    """One question's candidate sentences, their labels and what each scorer needs."""

    tokens: list[str]
    vector: list[float]
    sentences: list[str]
    right: list[bool]
    lexical: list[float]
    token_sets: list[frozenset[str]]
    vectors: list[list[float]]


def sentences_of(text: str) -> list[str]:
    pieces = (" ".join(p.strip(" #>*-|\t").split()) for p in _SPLIT.split(text))
    return [p for p in pieces if len(p) >= 8]


def auroc(scores: list[float], right: list[bool]) -> float:
    pos = [s for s, r in zip(scores, right, strict=True) if r]
    neg = [s for s, r in zip(scores, right, strict=True) if not r]
    wins = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def top1(scores: list[float], right: list[bool]) -> float:
    return 1.0 if right[max(range(len(scores)), key=scores.__getitem__)] else 0.0


async def collect(directory: Path, encoder: SentenceEncoder) -> list[Question]:
    cases = [c for c in load_cases(directory / "cases.jsonl") if c.kind == "answerable"]
    questions: list[Question] = []
    with tempfile.TemporaryDirectory(prefix="grace-about-") as tmp:
        kb = open_knowledge_base(path=Path(tmp) / "q", url=None, embedder=encoder)
        try:
            await ingest_paths(kb, [directory / "kb"])
            for case in cases:
                question = await _question(kb, encoder, case)
                if question is not None:
                    questions.append(question)
        finally:
            await kb.close()
    return questions


async def _question(kb: Any, encoder: SentenceEncoder, case: Case) -> Question | None:
    hits = await kb.search(case.question, limit=5)
    sentences = list(dict.fromkeys(s for hit in hits for s in sentences_of(hit.text)))
    wanted = [_fold(e) for e in case.expected]
    right = [any(w in _fold(s) for w in wanted) for s in sentences]
    if not any(right) or all(right):
        return None
    terms = QueryTerms.from_query(case.question)
    return Question(
        tokens=tokenize(case.question),
        vector=await encoder.embed_query(case.question),
        sentences=sentences,
        right=right,
        lexical=[terms.match(s).similarity for s in sentences],
        token_sets=[frozenset(tokenize(s)) for s in sentences],
        vectors=await encoder.embed_documents(sentences),
    )


def figures(questions: list[Question], scorer: str, penalty: float = 0.0) -> dict[str, float]:
    aurocs: list[float] = []
    firsts: list[float] = []
    for q in questions:
        if scorer == "lexical":
            scores = q.lexical
        else:
            scored = aboutness(q.tokens, q.vector, q.token_sets, q.vectors, penalty=penalty)
            scores = [a.score for a in scored]
            if scorer == "combined":  # beside the lexical overlap, as a fit would use it
                scores = [s + lexical for s, lexical in zip(scores, q.lexical, strict=True)]
        aurocs.append(auroc(scores, q.right))
        firsts.append(top1(scores, q.right))
    return {
        "questions": len(questions),
        "auroc": round(statistics.fmean(aurocs), 3) if aurocs else 0.0,
        "top1": round(statistics.fmean(firsts), 3) if firsts else 0.0,
    }


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    encoder = SentenceEncoder()
    await encoder.load()
    names = [n for n in args.sets.split(",") if n]
    penalties = [float(p) for p in args.penalties.split(",") if p]
    sets: dict[str, list[Question]] = {}
    for name in names:
        sets[Path(name).name] = await collect(args.devsets / name, encoder)
    per_set: dict[str, Any] = {}
    for name, questions in sets.items():
        per_set[name] = {
            "lexical": figures(questions, "lexical"),
            "cosine": figures(questions, "aboutness", 0.0),
            "aboutness": {f"{p:g}": figures(questions, "aboutness", p) for p in penalties},
            "combined": {f"{p:g}": figures(questions, "combined", p) for p in penalties},
        }

    def best(names_in: list[str], scorer: str) -> str:
        return max(
            (f"{p:g}" for p in penalties),
            key=lambda key: (
                statistics.fmean(per_set[n][scorer][key]["auroc"] for n in names_in),
                -float(key),
            ),
        )

    loso: dict[str, list[dict[str, Any]]] = {}
    for scorer in ("aboutness", "combined"):
        keys = fitted_on_the_others(list(per_set), partial(best, scorer=scorer))
        loso[scorer] = [
            {"set": name, "penalty": key, "figures": per_set[name][scorer][key]}
            for name, key in zip(per_set, keys, strict=True)
        ]
    fitted = {scorer: best(list(per_set), scorer) for scorer in loso}
    return {"sets": per_set, "leave_one_set_out": loso, "fitted_on_all": fitted}


def main(argv: list[str] | None = None) -> int:
    parser = dev_set_parser(__doc__)
    parser.add_argument("--penalties", default=",".join(f"{p:g}" for p in PENALTIES))
    args = parse_dev_set_args(parser, argv)
    return show_report(asyncio.run(main_async(args)), as_json=args.json, print_text=print_text)


def print_text(report: dict[str, Any]) -> None:
    for name, result in report["sets"].items():
        lex, cos = result["lexical"], result["cosine"]
        print(
            f"{name} ({lex['questions']} questions): lexical AUROC {lex['auroc']} "
            f"top-1 {lex['top1']}; cosine AUROC {cos['auroc']} top-1 {cos['top1']}"
        )
    for scorer, rows in report["leave_one_set_out"].items():
        print(f"{scorer}, penalty fitted on the other sets (out of sample):")
        for row in rows:
            f = row["figures"]
            print(
                f"  {row['set']}: penalty {row['penalty']} -> AUROC {f['auroc']} top-1 {f['top1']}"
            )
        print(f"  fitted on all sets: {report['fitted_on_all'][scorer]}")


if __name__ == "__main__":
    raise SystemExit(main())
