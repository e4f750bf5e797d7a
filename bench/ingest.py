"""Ingest throughput: files/s, chunks/s and peak memory, small files and one large file;
PDF pages/s, Word files/s, HTML pages/s; and `grace sync` of an unchanged folder.

    python -m bench.ingest [--small 2000] [--large-mb 50] [--kind markdown|line]
                           [--scenarios small,large,pdf,docx,html,sync] [--rich 200]

Each scenario runs in its own process (so its peak RSS is its own) against a fresh
directory of the embedded engine (Qdrant Edge), through `agent.knowledge.ingest`:

- small: N Markdown files of 0.5–2 KB (paragraphs of the dev-set documents, or of the
  shipped sample when the dev sets are absent), the shape of a team wiki export;
- large: one file of M MB — `markdown`: dev-set documents repeated, headings and all;
  `line`: a single line with no newline and no punctuation (the input that used to make
  chunking quadratic);
- chunk: the large file read, chunked and tokenised exactly as ingest does, but not
  written, in one process: the throughput and memory of our own pipeline alone;
- pdf: `--rich` PDFs of 10 pages of text each (pages/s is the figure);
- docx: `--rich` Word files with headings, a list and a table (files/s);
- html: `--rich` exported HTML pages of 4–12 KB with navigation and footer (pages/s);
- sync: the small files ingested and remembered, then `grace sync`'s work on the
  unchanged folder timed: metadata compared, nothing read or re-indexed (files/s).

Inputs of 8 MB or more compute sparse vectors in a worker process: its CPU time and
peak RSS are printed beside the main process's.

`--embedder use` gives the knowledge base the shipped sentence encoder (the offline
default's dense vectors): its cost is then part of every figure; `none` (the default
here) is the lexical-only path.

It prints files/s, chunks/s, wall and CPU seconds (CPU time is what to compare on a
busy machine) and peak RSS per scenario. It is a benchmark: the
exit code is 0 whatever the numbers.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from agent.knowledge.ingest import SAMPLE_KB_DIR, ingest
from agent.knowledge.qdrant_kb import open_knowledge_base
from bench import SHARED_DEVSETS

DEVSETS = SHARED_DEVSETS

REPO_ROOT = Path(__file__).resolve().parents[1]
"""Where `python -m bench.…` runs (a scenario runs again in its own process)."""


def _corpus_files() -> list[Path]:
    files = sorted(DEVSETS.glob("*/kb/*.md")) if DEVSETS.is_dir() else []
    return files or sorted(SAMPLE_KB_DIR.glob("*.md"))


def _paragraphs() -> list[str]:
    paragraphs: list[str] = []
    for file in _corpus_files():
        text = file.read_text(encoding="utf-8")
        paragraphs += [p.strip() for p in text.split("\n\n") if len(p.strip()) > 40]
    return paragraphs


def make_small(directory: Path, count: int) -> None:
    rng = random.Random(7)
    paragraphs = _paragraphs()
    for n in range(count):
        body: list[str] = [f"# Note {n}"]
        size = rng.randint(500, 2000)
        while sum(map(len, body)) < size:
            body.append(rng.choice(paragraphs))
        (directory / f"note-{n:05d}.md").write_text("\n\n".join(body), encoding="utf-8")


def make_large(path: Path, megabytes: int, kind: str) -> None:
    target = megabytes * 1024 * 1024
    with path.open("w", encoding="utf-8") as out:
        written = 0
        if kind == "line":
            rng = random.Random(7)
            words = [w for p in _paragraphs()[:400] for w in p.split() if w.isalpha()]
            while written < target:
                piece = " ".join(rng.choice(words) for _ in range(2000)) + " "
                out.write(piece)
                written += len(piece.encode("utf-8"))
            return
        texts = [f.read_text(encoding="utf-8") for f in _corpus_files()]
        copy = 0
        while written < target:
            for text in texts:
                piece = f"\n\n# Copy {copy}\n\n{text}"
                out.write(piece)
                written += len(piece.encode("utf-8"))
            copy += 1


async def run_scenario(name: str, args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="grace-ingest-bench-") as tmp:
        root = Path(tmp)
        docs = root / "docs"
        docs.mkdir()
        if name in ("small", "sync"):
            make_small(docs, args.small)
        elif name in RICH:
            RICH[name](docs, args.rich)
        else:
            make_large(docs / f"large-{args.kind}.md", args.large_mb, args.kind)
        size = sum(f.stat().st_size for f in docs.iterdir())
        if name == "chunk":
            return _chunk_only(docs, size, args)
        if name == "sync":
            return await _sync_unchanged(root, docs, size)
        embedder = None
        if args.embedder == "use":
            from agent.llm.sentence_encoder import SentenceEncoder

            embedder = SentenceEncoder()
            await embedder.load()  # a per-process cost, measured by bench/encoder.py
        kb = open_knowledge_base(path=root / "qdrant", url=None, embedder=embedder)
        try:
            started, cpu_started = time.perf_counter(), time.process_time()
            result = await ingest(kb, [docs])
            seconds = time.perf_counter() - started
            cpu = time.process_time() - cpu_started
        finally:
            await kb.close()
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    worker = resource.getrusage(resource.RUSAGE_CHILDREN)
    label = name if name == "small" or name in RICH else f"large ({args.kind})"
    pages = result.files * PDF_PAGES if name == "pdf" else result.files
    return {
        "scenario": label + (" + use-m3" if args.embedder == "use" else ""),
        "pages_per_s": round(pages / seconds, 1),
        "files": result.files,
        "megabytes": round(size / 1024 / 1024, 1),
        "chunks": result.chunks,
        "seconds": round(seconds, 2),
        "cpu_seconds": round(cpu, 2),
        "files_per_s": round(result.files / seconds, 1),
        "chunks_per_s": round(result.chunks / seconds, 1),
        "peak_rss_mb": round(peak_kb / 1024, 1),
        "worker_cpu_seconds": round(worker.ru_utime + worker.ru_stime, 2),
        "worker_peak_rss_mb": round(worker.ru_maxrss / 1024, 1),
    }


PDF_PAGES = 10


def make_pdfs(directory: Path, count: int) -> None:
    from tests.knowledge.documents_made import write_pdf  # a PDF with a text layer, by hand

    rng = random.Random(7)
    paragraphs = _paragraphs()
    for n in range(count):
        pages = []
        for page in range(PDF_PAGES):
            words = " ".join(rng.choice(paragraphs) for _ in range(3)).split()
            lines = [" ".join(words[i : i + 12]) for i in range(0, min(len(words), 480), 12)]
            pages.append([f"Report {n}, section {page + 1}", *lines])
        text = [[line.encode("latin-1", "replace").decode("latin-1") for line in p] for p in pages]
        write_pdf(directory / f"report-{n:04d}.pdf", text, title=f"Report {n}")


def make_docx(directory: Path, count: int) -> None:
    from tests.knowledge.documents_made import write_docx

    for n in range(count):
        write_docx(directory / f"policy-{n:04d}.docx", title=f"Policy {n}")


def make_html(directory: Path, count: int) -> None:
    rng = random.Random(7)
    paragraphs = _paragraphs()
    for n in range(count):
        body = [f"<h1>Page {n}</h1>"]
        size = rng.randint(4000, 12000)
        while sum(map(len, body)) < size:
            body.append(f"<h2>Part {len(body)}</h2><p>{rng.choice(paragraphs)}</p>")
        (directory / f"page-{n:05d}.html").write_text(
            f"<html><head><title>Page {n}</title><script>var x = 1;</script></head><body>"
            "<nav><a href='/'>Home</a> | <a href='/about'>About</a></nav>"
            f"<main>{''.join(body)}</main><footer>Example Corp</footer></body></html>",
            encoding="utf-8",
        )


RICH = {"pdf": make_pdfs, "docx": make_docx, "html": make_html}


async def _sync_unchanged(root: Path, docs: Path, size: int) -> dict[str, Any]:
    """Ingest and remember the folder, then time a sync of it unchanged."""
    from agent.knowledge.source_ingest import ingest_source
    from agent.knowledge.sync import sync_all
    from agent.sources import InMemorySourceCatalog

    kb = open_knowledge_base(path=root / "qdrant", url=None)
    catalog = InMemorySourceCatalog()
    try:
        first = await ingest_source(kb, str(docs), catalog=catalog)
        started, cpu_started = time.perf_counter(), time.process_time()
        (report,) = await sync_all(kb, catalog)
        seconds = time.perf_counter() - started
        cpu = time.process_time() - cpu_started
    finally:
        await kb.close()
    assert not (report.added or report.changed or report.removed), report.lines()[-1]
    files = len(report.unchanged)
    return {
        "scenario": "sync (unchanged)",
        "files": files,
        "megabytes": round(size / 1024 / 1024, 1),
        "chunks": 0,
        "ingest_seconds": first.seconds,
        "seconds": round(seconds, 3),
        "cpu_seconds": round(cpu, 3),
        "files_per_s": round(files / seconds, 1),
        "pages_per_s": round(files / seconds, 1),
        "chunks_per_s": 0.0,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def _chunk_only(docs: Path, size: int, args: argparse.Namespace) -> dict[str, Any]:
    from agent.knowledge.documents import Document, document_chunks
    from agent.knowledge.lexical import sparse_vector
    from agent.knowledge.tokenize import search_terms

    started, cpu_started = time.perf_counter(), time.process_time()
    chunks = 0
    longest = 0
    for file in sorted(docs.iterdir()):
        for chunk in document_chunks(Document(file)):
            sparse_vector(search_terms(chunk.text))
            chunks += 1
            longest = max(longest, len(chunk.text))
    seconds = time.perf_counter() - started
    return {
        "scenario": f"chunk only ({args.kind})",
        "files": 1,
        "megabytes": round(size / 1024 / 1024, 1),
        "chunks": chunks,
        "seconds": round(seconds, 2),
        "cpu_seconds": round(time.process_time() - cpu_started, 2),
        "files_per_s": round(1 / seconds, 2),
        "chunks_per_s": round(chunks / seconds, 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "longest_chunk": longest,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--small", type=int, default=2000, help="number of small files")
    parser.add_argument("--large-mb", type=int, default=50, help="size of the large file")
    parser.add_argument("--kind", choices=["markdown", "line"], default="markdown")
    parser.add_argument("--scenarios", default="small,large,pdf,docx,html,sync")
    parser.add_argument("--rich", type=int, default=200, help="PDF, Word and HTML files")
    parser.add_argument("--embedder", choices=["none", "use"], default="none")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # internal: run one scenario here
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(asyncio.run(run_scenario(args.one, args))))
        return 0
    results = []
    for scenario in [s for s in args.scenarios.split(",") if s]:
        command = [
            sys.executable,
            "-m",
            "bench.ingest",
            "--one",
            scenario,
            "--small",
            str(args.small),
            "--large-mb",
            str(args.large_mb),
            "--kind",
            args.kind,
            "--embedder",
            args.embedder,
            "--rich",
            str(args.rich),
        ]
        done = subprocess.run(command, capture_output=True, text=True, check=False, cwd=REPO_ROOT)
        if done.returncode != 0:
            print(f"{scenario}: failed\n{done.stderr[-2000:]}", file=sys.stderr)
            continue
        results.append(json.loads(done.stdout.strip().splitlines()[-1]))
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    for r in results:
        if r["scenario"].startswith("sync"):
            print(
                f"{r['scenario']}: {r['files']} files, {r['megabytes']} MB compared in "
                f"{r['seconds']} s, CPU {r['cpu_seconds']} s ({r['files_per_s']} files/s; "
                f"the first ingest took {r['ingest_seconds']} s), peak RSS {r['peak_rss_mb']} MB"
            )
            continue
        if r["scenario"].startswith(("pdf", "html")):
            print(f"{r['scenario']}: {r['pages_per_s']} pages/s")
        print(
            f"{r['scenario']}: {r['files']} files, {r['megabytes']} MB -> {r['chunks']} chunks "
            f"in {r['seconds']} s, CPU {r['cpu_seconds']} s ({r['files_per_s']} files/s, "
            f"{r['chunks_per_s']} chunks/s), "
            f"peak RSS {r['peak_rss_mb']} MB"
            + (
                f" (+ worker process: CPU {r['worker_cpu_seconds']} s, "
                f"peak RSS {r['worker_peak_rss_mb']} MB)"
                if r.get("worker_cpu_seconds")
                else ""
            )
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
