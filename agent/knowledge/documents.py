"""Reading files into chunks: pure text, no knowledge base (`ingest.py` stores them).

- Markdown and plain text are chunked as they stream in (`chunking.py`: headings kept
  with their text, table rows with their header row, linear in the input).
- CSV FAQ: a header with `question` and `answer` columns; one chunk per row.
- PDF, Word .docx and HTML (`formats.py`): PDF chunks keep their page number, Word and
  HTML headings become sections; a crawled page (`content` given, no file) keeps its URL.
- Each document also gets what version resolution needs (`versions.py`): its title,
  the date in its name or text, and the name it shares with its other versions.

A file that cannot be read (unsupported type, unreadable, not UTF-8, binary) raises
`InvalidInputError` naming it and the reason. The source name is the file name (a
crawled page's: its URL).
"""

from __future__ import annotations

import codecs
import csv
import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO
from urllib.parse import urlsplit

from agent.errors import InvalidInputError
from agent.knowledge.chunking import (
    BinaryTextError,
    DocumentFacts,
    Line,
    markdown_chunks,
    read_lines,
    text_chunks,
)
from agent.knowledge.chunks import Chunk
from agent.knowledge.formats import (
    HTML_SUFFIXES,
    MAX_HTML_BYTES,
    RICH_SUFFIXES,
    FormatError,
    Piece,
    docx_pieces,
    html_pieces,
    pdf_pieces,
)
from agent.knowledge.versions import (
    DocumentInfo,
    date_in_name,
    date_in_text,
    document_key,
    front_matter_fields,
    front_matter_title,
    is_revision_line,
)

__all__ = [
    "SUPPORTED_SUFFIXES",
    "Document",
    "check_suffix",
    "document_chunks",
    "find_files",
    "load_documents",
    "load_file",
    "source_key",
    "with_info",
]

SUPPORTED_SUFFIXES: frozenset[str] = frozenset({".md", ".markdown", ".txt", ".csv"}) | RICH_SUFFIXES
PRECHECK_BYTES = 1 << 20
"""Files larger than this are checked for UTF-8 and NUL bytes before any chunk is
written, so a bad byte deep inside cannot leave half a file in the knowledge base."""


def find_files(path: Path) -> list[Path]:
    """The supported files at `path` (itself, or recursively inside a directory), sorted."""
    if not path.exists():
        raise InvalidInputError(f"cannot ingest {path}: no such file or directory")
    if path.is_file():
        check_suffix(path)
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


def check_suffix(path: Path) -> None:
    if path.suffix.lower() not in SUPPORTED_SUFFIXES:
        kinds = ", ".join(sorted(SUPPORTED_SUFFIXES))
        raise InvalidInputError(
            f"cannot ingest {path}: unsupported file type {path.suffix or '(none)'!r}; "
            f"supported: {kinds}"
        )


def _ensure_text(path: Path) -> None:
    """Stream a large file once through a strict UTF-8 decoder, refusing NULs."""
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    offset = 0
    try:
        with path.open("rb") as stream:
            while block := stream.read(1 << 20):
                try:
                    text = decoder.decode(block)
                except UnicodeDecodeError as exc:
                    raise InvalidInputError(
                        f"cannot read {path}: not UTF-8 text "
                        f"(undecodable byte at offset {offset + exc.start})"
                    ) from exc
                if "\x00" in text:
                    raise InvalidInputError(f"cannot read {path}: it looks like a binary file")
                offset += len(block)
            decoder.decode(b"", final=True)
    except UnicodeDecodeError as exc:
        raise InvalidInputError(f"cannot read {path}: not UTF-8 text (truncated)") from exc
    except OSError as exc:
        raise InvalidInputError(f"cannot read {path}: {exc.strerror or exc}") from exc


def _iso(date: dt.date | None) -> str | None:
    return date.isoformat() if date else None


@dataclass
class Document:
    """A file (or a fetched web page) being chunked: its chunks stream out; its facts are
    known at the end."""

    path: Path
    facts: DocumentFacts = field(default_factory=DocumentFacts)
    bytes_read: int = 0
    """Bytes of Markdown / plain text read so far (CSV files count at the end)."""
    source: str = ""
    """The name it is stored and cited under: the file name, or a web page's URL."""
    url: str | None = None
    """A web page's address (its chunks link to it)."""
    content: bytes | None = None
    """A fetched web page's body: read from here instead of `path`."""

    def __post_init__(self) -> None:
        self.source = self.source or self.path.name

    @property
    def suffix(self) -> str:
        return ".html" if self.content is not None else self.path.suffix.lower()

    @property
    def where(self) -> str:
        """How messages name it: its URL, else its path."""
        return self.url or str(self.path)

    def title(self) -> str:
        fields = front_matter_fields(self.facts.front_matter)
        return front_matter_title(fields) or self.facts.title

    def info(self) -> DocumentInfo:
        fields = front_matter_fields(self.facts.front_matter)
        return DocumentInfo(
            source=self.source,
            key=source_key(self.source),
            title=self.title(),
            name_date=_iso(date_in_name(_name_part(self.source))),
            text_date=_iso(date_in_text("\n".join(self.facts.revision_lines), fields)),
        )

    def pieces(self) -> Iterator[Piece]:
        """(section, text, page) pieces; `InvalidInputError` when it cannot be read."""
        path = self.path
        suffix = self.suffix
        try:
            if suffix in RICH_SUFFIXES:
                yield from self._rich_pieces(suffix)
                return
            if path.stat().st_size > PRECHECK_BYTES:
                _ensure_text(path)
            newline = "" if suffix == ".csv" else None
            with path.open(encoding="utf-8-sig", newline=newline) as stream:
                if suffix == ".csv":
                    pairs = _csv_chunks(stream, path)
                elif suffix in {".md", ".markdown"}:
                    lines = read_lines(_Counting(stream, self))
                    pairs = markdown_chunks(lines, self.facts, keep_line=is_revision_line)
                else:
                    lines = read_lines(_Counting(stream, self))
                    pairs = text_chunks(self._noting_revisions(lines))
                yield from (Piece(title, text) for title, text in pairs)
        except UnicodeDecodeError as exc:
            raise InvalidInputError(f"cannot read {path}: not UTF-8 text") from exc
        except BinaryTextError as exc:
            raise InvalidInputError(f"cannot read {path}: {exc}") from exc
        except IsADirectoryError as exc:
            raise InvalidInputError(f"cannot ingest {path}: it is a directory") from exc
        except OSError as exc:
            raise InvalidInputError(f"cannot read {path}: {exc.strerror or exc}") from exc

    def _rich_pieces(self, suffix: str) -> Iterator[Piece]:
        """PDF, Word and HTML (`formats.py`); their reasons are said as they are."""
        try:
            if suffix == ".pdf":
                yield from pdf_pieces(self.path, self.facts)
            elif suffix == ".docx":
                yield from docx_pieces(self.path, self.facts)
            elif suffix in HTML_SUFFIXES:
                data = self.content
                if data is None:
                    size = self.path.stat().st_size
                    if size > MAX_HTML_BYTES:
                        raise FormatError(
                            f"HTML page of {size >> 20} MB, over the "
                            f"{MAX_HTML_BYTES >> 20} MB limit"
                        )
                    data = self.path.read_bytes()
                yield from html_pieces(data, self.facts, base_url=self.url)
        except FormatError as exc:
            raise InvalidInputError(f"cannot read {self.where}: {exc}") from exc
        self.bytes_read = len(self.content) if self.content is not None else _size(self.path)

    def _noting_revisions(self, lines: Iterator[Line]) -> Iterator[Line]:
        for line in lines:
            if not line.continued and len(line.text) < 300 and is_revision_line(line.text):
                self.facts.revision_lines.append(line.text)
            yield line


class _Counting:
    """A text stream that counts the bytes read through it into its document."""

    def __init__(self, stream: TextIO, document: Document) -> None:
        self._stream = stream
        self._document = document

    def read(self, size: int = -1) -> str:
        block = self._stream.read(size)
        self._document.bytes_read += len(block.encode("utf-8", "surrogatepass"))
        return block


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _name_part(source: str) -> str:
    """The part of a source that names it: a URL's last path segment, else itself."""
    if source.startswith(("http://", "https://")):
        return urlsplit(source).path.rstrip("/").rsplit("/", 1)[-1]
    return source


def source_key(source: str) -> str:
    """What versions of a document share: for a file its name without dates and version
    marks; for a web page its host and folder too (two sites' "index" pages differ)."""
    if not source.startswith(("http://", "https://")):
        return document_key(source)
    parts = urlsplit(source)
    folder = parts.path.rstrip("/").rsplit("/", 1)[0] if "/" in parts.path else ""
    name = _name_part(source) or "index"
    return f"{parts.netloc.lower()}{folder}/{document_key(name)}"


def _csv_chunks(stream: TextIO, path: Path) -> Iterator[tuple[str, str]]:
    """One "Q: … A: …" chunk per FAQ row; the header must name question and answer."""
    reader = csv.reader(stream)
    try:
        first = next(reader, None)
        if first is None:
            return
        header = [cell.strip().lower() for cell in first]
        if "question" not in header or "answer" not in header:
            raise InvalidInputError(
                f"cannot read {path}: a CSV FAQ needs a header row with 'question' and "
                f"'answer' columns (found: {', '.join(first) or 'nothing'})"
            )
        q_col, a_col = header.index("question"), header.index("answer")
        for row in reader:
            question = row[q_col].strip() if q_col < len(row) else ""
            answer = row[a_col].strip() if a_col < len(row) else ""
            if question and answer:
                yield question, f"Q: {question}\nA: {answer}"
    except csv.Error as exc:
        raise InvalidInputError(f"cannot read {path}: malformed CSV ({exc})") from exc


def document_chunks(document: Document) -> Iterator[Chunk]:
    """Chunks stamped with what is known of the document so far (its title once seen;
    its revision date only at the end — `with_info` completes the chunks still held)."""
    source = document.source
    key, name_date = source_key(source), _iso(date_in_name(_name_part(source)))
    for index, piece in enumerate(document.pieces()):
        yield Chunk(
            source=source,
            index=index,
            text=piece.text,
            title=piece.title,
            path=document.where,
            doc_title=document.title(),
            doc_key=key,
            name_date=name_date,
            page=piece.page,
            url=document.url,
        )


def with_info(chunk: Chunk, info: DocumentInfo) -> Chunk:
    return chunk.model_copy(
        update={
            "doc_title": info.title,
            "doc_key": info.key,
            "name_date": info.name_date,
            "text_date": info.text_date,
        }
    )


def load_file(path: Path) -> list[Chunk]:
    """Chunks of one supported file (with its document facts)."""
    path = Path(path)
    check_suffix(path)
    if path.is_dir():
        raise InvalidInputError(f"cannot ingest {path}: it is a directory")
    document = Document(path)
    chunks = list(document_chunks(document))
    info = document.info()
    return [with_info(chunk, info) for chunk in chunks]


def load_documents(path: Path) -> list[Chunk]:
    """Chunks of a file, or of every supported file under a directory."""
    chunks: list[Chunk] = []
    for file in find_files(Path(path)):
        chunks.extend(load_file(file))
    return chunks
