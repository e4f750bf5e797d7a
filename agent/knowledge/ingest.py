"""Turning files into chunks, and chunks into the knowledge base (`grace ingest`).

- Markdown: split on headings, then into ~800-character pieces on paragraph boundaries;
  every chunk starts with its heading trail ("Expense policy › Meals") so a passage read on
  its own still says what it is about, and the heading words are searchable.
- Plain text: paragraphs, packed into ~800-character chunks.
- CSV FAQ: a header with `question` and `answer` columns; one chunk per row.

Ingesting is idempotent per file: the source's old chunks are deleted, then the new ones
written (point ids are deterministic, too). The source name is the file name.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from agent.errors import InvalidInputError
from agent.knowledge.chunks import Chunk, IngestReport
from agent.knowledge.qdrant_kb import QdrantKnowledgeBase

__all__ = [
    "CHUNK_CHARS",
    "SAMPLE_KB_DIR",
    "SUPPORTED_SUFFIXES",
    "Chunk",
    "IngestReport",
    "find_files",
    "ingest_paths",
    "load_documents",
    "load_file",
]

SAMPLE_KB_DIR = Path(__file__).resolve().parent.parent / "sample_kb"
"""The sample knowledge base shipped with the project (Northwind Labs)."""

CHUNK_CHARS = 800
SUPPORTED_SUFFIXES: frozenset[str] = frozenset({".md", ".markdown", ".txt", ".csv"})

_HEADING_RE = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_FENCE_RE = re.compile(r"^\s*(```|~~~)")
_SENTENCE_RE = re.compile(r"(?<=[.!?。！？])\s*")


# --------------------------------------------------------------------------- files


def find_files(path: Path) -> list[Path]:
    """The supported files at `path` (itself, or recursively inside a directory), sorted."""
    if not path.exists():
        raise InvalidInputError(f"cannot ingest {path}: no such file or directory")
    if path.is_file():
        _check_suffix(path)
        return [path]
    files = sorted(
        p
        for p in path.rglob("*")
        if p.is_file()
        and p.suffix.lower() in SUPPORTED_SUFFIXES
        and not any(part.startswith(".") for part in p.relative_to(path).parts)
    )
    if not files:
        kinds = ", ".join(sorted(SUPPORTED_SUFFIXES))
        raise InvalidInputError(f"cannot ingest {path}: no supported files ({kinds}) inside")
    return files


def _check_suffix(path: Path) -> None:
    if path.suffix.lower() not in SUPPORTED_SUFFIXES:
        kinds = ", ".join(sorted(SUPPORTED_SUFFIXES))
        raise InvalidInputError(
            f"cannot ingest {path}: unsupported file type {path.suffix or '(none)'!r}; "
            f"supported: {kinds}"
        )


def _read_text(path: Path) -> str:
    """The file as UTF-8 text (a BOM is fine), or `InvalidInputError` saying why not."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InvalidInputError(f"cannot read {path}: {exc.strerror or exc}") from exc
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InvalidInputError(
            f"cannot read {path}: not UTF-8 text (undecodable byte at offset {exc.start})"
        ) from exc
    if "\x00" in text:
        raise InvalidInputError(f"cannot read {path}: it looks like a binary file")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def load_file(path: Path) -> list[Chunk]:
    """Chunks of one supported file."""
    path = Path(path)
    _check_suffix(path)
    if path.is_dir():
        raise InvalidInputError(f"cannot ingest {path}: it is a directory")
    text = _read_text(path)
    suffix = path.suffix.lower()
    if suffix in {".md", ".markdown"}:
        pieces = _markdown_chunks(text)
    elif suffix == ".csv":
        pieces = _csv_chunks(text, path)
    else:
        pieces = [("", body) for body in _pack(_paragraphs(text))]
    return [
        Chunk(source=path.name, index=i, text=body, title=title, path=str(path))
        for i, (title, body) in enumerate(pieces)
    ]


def load_documents(path: Path) -> list[Chunk]:
    """Chunks of a file, or of every supported file under a directory."""
    chunks: list[Chunk] = []
    for file in find_files(Path(path)):
        chunks.extend(load_file(file))
    return chunks


# --------------------------------------------------------------------------- splitting


def _paragraphs(text: str) -> list[str]:
    return [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]


def _split_long(paragraph: str, size: int) -> list[str]:
    """A paragraph longer than `size`: split at sentence ends, hard-cut as a last resort."""
    parts: list[str] = []
    current = ""
    for sentence in (s for s in _SENTENCE_RE.split(paragraph) if s):
        while len(sentence) > size:
            if current:
                parts.append(current)
                current = ""
            parts.append(sentence[:size])
            sentence = sentence[size:]
        joiner = "" if not current or current.endswith(("。", "！", "？")) else " "
        if current and len(current) + len(joiner) + len(sentence) > size:
            parts.append(current)
            current = sentence
        else:
            current = f"{current}{joiner}{sentence}" if current else sentence
    if current:
        parts.append(current)
    return [p.strip() for p in parts if p.strip()]


def _pack(paragraphs: Iterable[str], size: int = CHUNK_CHARS) -> list[str]:
    """Greedily pack paragraphs into chunks of at most ~`size` characters."""
    chunks: list[str] = []
    current: list[str] = []
    length = 0
    for paragraph in paragraphs:
        pieces = [paragraph] if len(paragraph) <= size else _split_long(paragraph, size)
        for piece in pieces:
            if current and length + len(piece) + 2 > size:
                chunks.append("\n\n".join(current))
                current, length = [], 0
            current.append(piece)
            length += len(piece) + 2
    if current:
        chunks.append("\n\n".join(current))
    return chunks


def _markdown_sections(text: str) -> list[tuple[list[str], str]]:
    """(heading trail, body) per heading; headings inside code fences are not headings."""
    sections: list[tuple[list[str], str]] = []
    trail: list[tuple[int, str]] = []
    body: list[str] = []
    in_fence = False

    def flush() -> None:
        content = "\n".join(body).strip()
        if content:
            sections.append(([title for _, title in trail], content))
        body.clear()

    for line in text.split("\n"):
        if _FENCE_RE.match(line):
            in_fence = not in_fence
        heading = None if in_fence else _HEADING_RE.match(line)
        if heading is None:
            body.append(line)
            continue
        flush()
        level = len(heading.group(1))
        trail = [(lvl, title) for lvl, title in trail if lvl < level]
        trail.append((level, heading.group(2).strip()))
    flush()
    return sections


def _markdown_chunks(text: str) -> list[tuple[str, str]]:
    chunks: list[tuple[str, str]] = []
    for trail, content in _markdown_sections(text):
        title = " › ".join(trail)
        budget = max(200, CHUNK_CHARS - len(title))
        for body in _pack(_paragraphs(content), budget):
            chunks.append((title, f"{title}\n\n{body}" if title else body))
    return chunks


def _csv_chunks(text: str, path: Path) -> list[tuple[str, str]]:
    """One "Q: … A: …" chunk per FAQ row; the header must name question and answer."""
    try:
        reader = csv.reader(io.StringIO(text))
        rows = list(reader)
    except csv.Error as exc:
        raise InvalidInputError(f"cannot read {path}: malformed CSV ({exc})") from exc
    if not rows:
        return []
    header = [cell.strip().lower() for cell in rows[0]]
    if "question" not in header or "answer" not in header:
        raise InvalidInputError(
            f"cannot read {path}: a CSV FAQ needs a header row with 'question' and 'answer' "
            f"columns (found: {', '.join(rows[0]) or 'nothing'})"
        )
    q_col, a_col = header.index("question"), header.index("answer")
    chunks: list[tuple[str, str]] = []
    for row in rows[1:]:
        question = row[q_col].strip() if q_col < len(row) else ""
        answer = row[a_col].strip() if a_col < len(row) else ""
        if question and answer:
            chunks.append((question, f"Q: {question}\nA: {answer}"))
    return chunks


# --------------------------------------------------------------------------- ingest


async def ingest_paths(
    kb: QdrantKnowledgeBase, paths: Sequence[Path], *, collection: str | None = None
) -> list[IngestReport]:
    """Ingest files and directories into `collection` (default: the KB's default).

    Everything is read and chunked before anything is written, so a bad file leaves the
    knowledge base untouched. Two files with the same name would replace each other's
    chunks, so that is refused."""
    name = collection or kb.default_collection
    loaded: list[tuple[Path, list[Chunk]]] = []
    seen: dict[str, Path] = {}
    for path in paths:
        for file in find_files(Path(path)):
            if file.name in seen and seen[file.name].resolve() != file.resolve():
                raise InvalidInputError(
                    f"cannot ingest both {seen[file.name]} and {file}: sources are named by "
                    f"file name, so one would replace the other; rename one of them"
                )
            if file.name in seen:
                continue
            seen[file.name] = file
            loaded.append((file, load_file(file)))
    reports: list[IngestReport] = []
    for file, chunks in loaded:
        replaced = await kb.delete_source(name, file.name)
        written = await kb.upsert_chunks(name, chunks)
        reports.append(
            IngestReport(path=str(file), source=file.name, chunks=written, replaced=replaced)
        )
    return reports
