"""How much weight should the sentence encoder get in the hybrid search? Out of sample.

    python -m bench.fusion [--sets all|NAME,...] [--weights 0,0.25,0.5,0.75,1]
                           [--mode rrf|score] [--json]

The engine fuses the sparse and the dense candidates with equal weight (RRF, k=2). This
fuses them here instead — `rrf`: the dense list's share scaled by each weight (1: what
the engine does); `score`: the sparse score relative to the best one (what the
lexical-only path ranks by, and RRF throws away) plus the weight times the cosine —,
then re-ranks exactly as the search does (`agent.knowledge.rerank.rerank`) and scores
recall@1/@5 and MRR on the answerable cases as `bench/retrieval.py` does. The weight is
chosen leave-one-set-out: for each set, the value best on the others (mean MRR), and
that set's figures at it. An experiment: the knowledge base itself is unchanged. The
exit code is 0 whatever the numbers.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
from pathlib import Path
from typing import Any

from agent.embedding import dense_only_keep, embed_query
from agent.knowledge.edge_client import RRF_K
from agent.knowledge.ingest import ingest_paths
from agent.knowledge.lexical import QueryTerms, query_sparse_vector
from agent.knowledge.qdrant_kb import (
    DENSE_VECTOR,
    SPARSE_VECTOR,
    QdrantKnowledgeBase,
    _sparse_indices,
    _stored_dense,
    open_knowledge_base,
)
from agent.knowledge.rerank import Candidate, rerank
from agent.knowledge.store import QueryRequest, SparseVector
from agent.llm.sentence_encoder import SentenceEncoder
from bench.retrieval import (
    LIMIT,
    Scores,
    dev_set_parser,
    fitted_on_the_others,
    load_cases,
    parse_dev_set_args,
    ranks,
    recall_figures,
    show_report,
)

ROOT = Path(__file__).resolve().parent.parent

WEIGHTS = (0.0, 0.25, 0.5, 0.75, 1.0)
CANDIDATES = 15


async def _lists(
    kb: QdrantKnowledgeBase, question: str, encoder: SentenceEncoder
) -> tuple[list[Any], list[Any], QueryTerms, list[float]]:
    terms = QueryTerms.from_query(question)
    indices, values = query_sparse_vector(terms.tokens)
    sparse = SparseVector(indices=list(indices), values=list(values))
    vector = await embed_query(encoder, question)
    client: Any = kb._client
    name = kb.default_collection
    both = [DENSE_VECTOR, SPARSE_VECTOR]
    lexical = await client.query_points(
        name, QueryRequest(query=sparse, using=SPARSE_VECTOR, limit=CANDIDATES, with_vectors=both)
    )
    dense = await client.query_points(
        name, QueryRequest(query=vector, using=DENSE_VECTOR, limit=CANDIDATES, with_vectors=both)
    )
    return lexical, dense, terms, vector


def _cosine(vector: list[float], point: Any) -> float:
    stored = (point.vector or {}).get(DENSE_VECTOR)
    return sum(a * b for a, b in zip(vector, stored, strict=True)) if stored else 0.0


def _fused(
    lexical: list[Any], dense: list[Any], weight: float, mode: str, vector: list[float]
) -> list[Candidate]:
    """`rrf`: rank fusion, the dense list's share scaled by `weight`; `score`: the sparse
    score relative to the best one, plus `weight` × the cosine (the lexical-only path
    ranks by the sparse score itself, which RRF throws away)."""
    scores: dict[str, float] = {}
    points: dict[str, Any] = {}
    if mode == "rrf":
        for share, found in ((1.0, lexical), (weight, dense)):
            for rank, point in enumerate(found):
                key = str(point.id)
                points[key] = point
                scores[key] = scores.get(key, 0.0) + share / (RRF_K + rank + 1)
    else:
        top = max((float(p.score) for p in lexical), default=0.0) or 1.0
        for point in lexical:
            points[str(point.id)] = point
            scores[str(point.id)] = float(point.score) / top
        for point in [*lexical, *dense]:
            key = str(point.id)
            points[key] = point
            scores[key] = scores.get(key, 0.0) + weight * max(0.0, _cosine(vector, point))
    ordered = sorted(scores, key=lambda key: -scores[key])
    return [
        Candidate(
            key,
            scores[key],
            points[key].payload,
            _sparse_indices(points[key].vector),
            _stored_dense(points[key].vector),
        )
        for key in ordered
        if scores[key] > 0
    ]


async def evaluate(
    directory: Path, encoder: SentenceEncoder, weights: list[float], mode: str
) -> dict:
    cases = [c for c in load_cases(directory / "cases.jsonl") if c.kind == "answerable"]
    per_weight = {f"{w:g}": Scores() for w in weights}
    with tempfile.TemporaryDirectory(prefix="grace-fusion-") as tmp:
        kb = open_knowledge_base(path=Path(tmp) / "q", url=None, embedder=encoder)
        try:
            await ingest_paths(kb, [directory / "kb"])
            for case in cases:
                lexical, dense, terms, vector = await _lists(kb, case.question, encoder)
                for w in weights:
                    found = _fused(lexical, dense, w, mode, vector)
                    hits = rerank(
                        found, terms, vector, kb.default_collection, LIMIT, dense_only_keep(encoder)
                    )
                    per_weight[f"{w:g}"].add(ranks(case, hits)[0])
        finally:
            await kb.close()
    return {key: scores.summary() for key, scores in per_weight.items()}


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    encoder = SentenceEncoder()
    await encoder.load()
    weights = [float(w) for w in args.weights.split(",") if w]
    sets = {
        Path(name).name: await evaluate(args.devsets / name, encoder, weights, args.mode)
        for name in args.sets.split(",")
        if name
    }

    def best(names: list[str]) -> str:
        return max(
            (f"{w:g}" for w in weights),
            key=lambda key: (statistics.fmean(sets[n][key]["mrr"] for n in names), -float(key)),
        )

    loso = [
        {"set": name, "weight": key, "figures": sets[name][key]}
        for name, key in zip(sets, fitted_on_the_others(list(sets), best), strict=True)
    ]
    return {"sets": sets, "leave_one_set_out": loso, "fitted_on_all": best(list(sets))}


def main(argv: list[str] | None = None) -> int:
    parser = dev_set_parser(__doc__)
    parser.add_argument("--weights", default=",".join(f"{w:g}" for w in WEIGHTS))
    parser.add_argument("--mode", choices=["rrf", "score"], default="rrf")
    args = parse_dev_set_args(parser, argv)
    return show_report(asyncio.run(main_async(args)), as_json=args.json, print_text=print_text)


def print_text(report: dict[str, Any]) -> None:
    for name, by_weight in report["sets"].items():
        cells = "  ".join(
            f"w={key}: r@1 {f['recall@1']:.3f} r@5 {f['recall@5']:.3f} MRR {f['mrr']:.3f}"
            for key, f in by_weight.items()
        )
        print(f"{name}: {cells}")
    print("dense weight fitted on the other sets (out of sample):")
    for row in report["leave_one_set_out"]:
        print(f"  {row['set']}: w {row['weight']} -> {recall_figures(row['figures'])}")
    print(f"  fitted on all sets: {report['fitted_on_all']}")


if __name__ == "__main__":
    raise SystemExit(main())
