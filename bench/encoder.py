"""What the shipped sentence encoder (use-m3) costs: loading, passages/s, query ms, memory.

    python -m bench.encoder [--devsets DIR] [--queries 200] [--json]

In a fresh process (so memory is its own): RSS before and after loading the model, the
load's wall and CPU seconds (once per process: a `grace ask` pays it on its first
search, a server once), then the dev-set chunks (as ingest cuts them) encoded as ingest
does, in batches — chunks/s, wall and CPU —, then single questions as a search encodes
them — ms p50/p95. CPU time is the figure to compare on a busy machine.

The search and ingest figures with the encoder in place are in `bench/retrieval.py
--embedder none,use` (latency per search) and `bench/ingest.py --embedder use`
(2,000 small files). It is a benchmark: the exit code is 0 whatever the numbers.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from pathlib import Path
from typing import Any

from agent.knowledge.ingest import load_documents
from agent.llm.sentence_encoder import SentenceEncoder
from bench import SHARED_DEVSETS

ROOT = Path(__file__).resolve().parent.parent

DEFAULT_DEVSETS = SHARED_DEVSETS


def _rss_mb() -> float:
    """Current resident set size (not the peak): what the model keeps."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"p50": round(statistics.median(ordered), 2), "p95": round(p95, 2)}


def _corpus(devsets: Path) -> tuple[list[str], list[str]]:
    """Every dev set's chunks (as ingest cuts them) and questions."""
    texts: list[str] = []
    questions: list[str] = []
    for folder in sorted(p for p in devsets.iterdir() if (p / "kb").is_dir()):
        texts += [chunk.text for chunk in load_documents(folder / "kb")]
        for line in (folder / "cases.jsonl").read_text(encoding="utf-8").splitlines():
            if line.strip():
                questions.append(json.loads(line)["q"])
    return texts, questions


async def measure(devsets: Path, queries: int) -> dict[str, Any]:
    texts, questions = _corpus(devsets)
    encoder = SentenceEncoder()
    before = _rss_mb()
    wall, cpu = time.perf_counter(), time.process_time()
    await encoder.load()
    load = {
        "wall_s": round(time.perf_counter() - wall, 2),
        "cpu_s": round(time.process_time() - cpu, 2),
        "rss_before_mb": before,
        "rss_after_mb": _rss_mb(),
    }
    wall, cpu = time.perf_counter(), time.process_time()
    await encoder.embed_documents(texts)
    passages_wall = time.perf_counter() - wall
    passages_cpu = time.process_time() - cpu
    chars = sum(map(len, texts))
    timings: list[float] = []
    cpu_timings: list[float] = []
    for question in (questions * (1 + queries // max(1, len(questions))))[:queries]:
        wall, cpu = time.perf_counter(), time.process_time()
        await encoder.embed_query(question)
        timings.append((time.perf_counter() - wall) * 1000)
        cpu_timings.append((time.process_time() - cpu) * 1000)
    return {
        "load": load,
        "passages": {
            "chunks": len(texts),
            "mean_chars": round(chars / max(1, len(texts))),
            "wall_s": round(passages_wall, 2),
            "cpu_s": round(passages_cpu, 2),
            "chunks_per_s_wall": round(len(texts) / passages_wall, 1),
            "chunks_per_cpu_s": round(len(texts) / max(1e-9, passages_cpu), 1),
        },
        "query_ms": _percentiles(timings),
        "query_cpu_ms": _percentiles(cpu_timings),
        "rss_after_mb": _rss_mb(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--devsets", type=Path, default=DEFAULT_DEVSETS)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    report = asyncio.run(measure(args.devsets, args.queries))
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    load, passages = report["load"], report["passages"]
    print(
        f"load: {load['wall_s']} s wall, {load['cpu_s']} s CPU; RSS {load['rss_before_mb']} "
        f"-> {load['rss_after_mb']} MB (+{load['rss_after_mb'] - load['rss_before_mb']:.1f})\n"
        f"passages: {passages['chunks']} chunks (mean {passages['mean_chars']} chars) in "
        f"{passages['wall_s']} s wall, {passages['cpu_s']} s CPU: "
        f"{passages['chunks_per_s_wall']} chunks/s ({passages['chunks_per_cpu_s']} per CPU s)\n"
        f"query: p50 {report['query_ms']['p50']} ms  p95 {report['query_ms']['p95']} ms "
        f"(CPU p50 {report['query_cpu_ms']['p50']} ms  p95 {report['query_cpu_ms']['p95']} ms)"
        f"\nRSS at the end: {report['rss_after_mb']} MB"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
