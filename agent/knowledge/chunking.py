"""Streaming, linear-time chunking of Markdown and plain text.

The text arrives as a stream and leaves as ~`CHUNK_CHARS`-character chunks, holding at
most a few chunks' worth of text in memory, whatever the file size or line length: a
line with no newline and no punctuation (a 50 MB dump) is cut at a soft boundary
(sentence end, else whitespace, else anywhere) every `LINE_CAP` characters, and each
cut is found by a bounded backwards search, so the work is linear in the input.

- Markdown: split on headings; every chunk starts with its heading trail ("Expense
  policy › Meals") so a passage read on its own still says what it is about, and the
  heading words are searchable. Fenced code is never split into headings.
- Tables (Markdown pipes, or HTML `<table>` blocks turned into pipe rows): a table too
  long for one chunk is cut between rows, and every piece repeats the header row, so a
  row never loses the names of its columns.
- Plain text: paragraphs packed into chunks.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TextIO

__all__ = [
    "BLOCK_CHARS",
    "CHUNK_CHARS",
    "LINE_CAP",
    "BinaryTextError",
    "DocumentFacts",
    "Line",
    "markdown_chunks",
    "question_lines",
    "read_lines",
    "split_long",
    "text_chunks",
]

CHUNKING_VERSION = "2"
"""Bumped whenever the same file would be cut into other chunks (version 2: FAQ entries
start chunks). `grace sync` reads a file again when its chunks were cut by another
version, even if the file itself has not changed."""
CHUNK_CHARS = 800
LINE_CAP = 4 * CHUNK_CHARS
"""Longer lines arrive in pieces of at most this many characters."""
BLOCK_CHARS = 1 << 16
"""Characters read from the stream at a time."""
HTML_TABLE_CAP = 256 * 1024
"""An HTML table longer than this is kept as plain text rather than buffered whole."""
_MIN_BUDGET = 200

_SENTENCE_ENDS = ("。", "！", "？", ". ", "! ", "? ", ".\n", "\n")
_SPACES = (" ", "\t", "、", "，", ",")
_HEADING_RE = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_FENCE_RE = re.compile(r"^\s*(```|~~~)")
_TABLE_SEPARATOR_RE = re.compile(r"^\s*\|?\s*:?-{1,}:?\s*(\|\s*:?-{1,}:?\s*)*\|?\s*$")
_ROW_RE = re.compile(r"<tr\b[^>]*>(.*?)(?=<tr\b|</table>|\Z)", re.IGNORECASE | re.DOTALL)
_CELL_RE = re.compile(r"<t[dh]\b[^>]*>(.*?)(?=<t[dh]\b|</tr>|\Z)", re.IGNORECASE | re.DOTALL)
_TAG_RE = re.compile(r"<[^>]+>")
_SPACE_RUN_RE = re.compile(r"\s+")
_MARKUP_RE = re.compile(r"[*_`]+")
_FRONT_FIELD_RE = re.compile(r"^[A-Za-z_][\w-]*\s*:")
_FRONT_MATTER_LINES = 200


class BinaryTextError(ValueError):
    """The stream holds NUL characters: a binary file, not text."""


@dataclass(frozen=True)
class Line:
    """One line of input, or a piece of a longer one (`continued`: it goes on the last)."""

    text: str
    continued: bool = False


@dataclass
class DocumentFacts:
    """What the chunker noticed about the whole document, for version resolution."""

    title: str = ""
    """The first level-1 heading (else the first heading)."""
    front_matter: list[str] = field(default_factory=list)
    """Raw `key: value` lines of YAML front matter."""
    revision_lines: list[str] = field(default_factory=list)
    """Short lines that may state a revision date, kept for `versions.date_in_text`."""


def _soft_cut(text: str, start: int, end: int) -> int:
    """Where to cut `text[start:end]`: after a sentence end, else at a space, else `end`.

    Only the second half of the window is searched, so a cut never makes a tiny piece."""
    low = start + (end - start) // 2
    best = max((text.rfind(mark, low, end) + len(mark) for mark in _SENTENCE_ENDS), default=-1)
    if best > low:
        return min(best, end)
    best = max((text.rfind(mark, low, end) + 1 for mark in _SPACES), default=-1)
    return best if best > low else end


def _pieces(text: str, cap: int) -> Iterator[str]:
    """`text` in soft-cut pieces of at most `cap` characters (linear: offsets, no copies)."""
    start = 0
    while len(text) - start > cap:
        cut = _soft_cut(text, start, start + cap)
        yield text[start:cut]
        start = cut
    yield text[start:]


def read_lines(stream: TextIO, *, cap: int = LINE_CAP) -> Iterator[Line]:
    """Lines of a text stream, long ones in pieces; `BinaryTextError` on a NUL."""
    pending = ""
    continued = False
    while block := stream.read(BLOCK_CHARS):
        if "\x00" in block:
            raise BinaryTextError("it looks like a binary file")
        parts = (pending + block).split("\n")
        pending = parts.pop()
        for part in parts:
            for number, piece in enumerate(_pieces(part, cap)):
                yield Line(piece, continued or number > 0)
            continued = False
        if len(pending) > cap:
            pieces = list(_pieces(pending, cap))
            pending = pieces.pop()
            for piece in pieces:
                yield Line(piece, continued)
                continued = True
    if pending:
        for number, piece in enumerate(_pieces(pending, cap)):
            yield Line(piece, continued or number > 0)


def split_long(paragraph: str, size: int) -> list[str]:
    """A paragraph longer than `size`: pieces cut at sentence ends, else spaces, else hard."""
    return [piece.strip() for piece in _pieces(paragraph, size) if piece.strip()]


QUESTION_CHARS = 300
"""An FAQ's question is shorter than this; a longer run of lines ending in a question
mark is prose that asks in passing."""
_ASKS = re.compile(r"[?？]!?\s*$")
_RULE = re.compile(r"^\s*[-=*_~]{3,}\s*$")


def question_lines(lines: Sequence[str]) -> int:
    """How many of a paragraph's first lines are the question it opens with (0: none):
    "How do I reset it?" alone, or "2.3. Why does the build\nhang?" with its answer on
    the next line. An FAQ's answer is read under its question."""
    length = 0
    for index, line in enumerate(lines):
        length += len(line) + 1
        if length > QUESTION_CHARS:
            break
        if _ASKS.search(line):
            return index + 1
    return 0


class _Packer:
    """Greedily packs paragraphs into chunks of at most `size` characters.

    FAQs: a paragraph opening with a question starts a new chunk (unless the chunk holds
    only questions so far), and so does a rule line between entries, so an answer is
    kept with what it answers rather than with the entry before it. An answer too long
    for one chunk repeats its entry's opening (the question, or the rule and the problem
    stated after it) at the top of the next, as a Markdown chunk repeats its heading."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._current: list[str] = []
        self._length = 0
        self._asking = False
        self._entry: list[str] = []
        """The current FAQ entry's opening paragraphs."""
        self._entry_open = False
        """A rule line was just added: a short paragraph next states the entry's problem."""

    def add(self, paragraph: str) -> Iterator[str]:
        lines = paragraph.split("\n")
        underline = len(lines) == 2 and not re.search(r"[.!。]\s*$", lines[0])
        if len(lines) > 1 and _RULE.match(lines[-1]) and not underline:
            # "…the last answer.\n-----": the rule opens the next entry, not this one.
            # (Under a heading's line it underlines it: "Setup\n=====".)
            yield from self.add("\n".join(lines[:-1]).rstrip())
            yield from self.add(lines[-1].strip())
            return
        asked = question_lines(lines)
        rule = bool(_RULE.match(lines[0]))
        if asked and self._current and not self._asking:
            yield from self.flush()
        elif rule and self._length >= _MIN_BUDGET:
            yield from self.flush()
        asking = asked == len(lines) and (self._asking or not self._current)
        self._note_entry(lines, asked, rule)
        pieces = [paragraph] if len(paragraph) <= self.size else split_long(paragraph, self.size)
        for piece in pieces:
            if self._current and self._length + len(piece) + 2 > self.size:
                yield from self.flush()
                self._reopen(len(piece))
            self._current.append(piece)
            self._length += len(piece) + 2
        self._asking = asking

    def _note_entry(self, lines: list[str], asked: int, rule: bool) -> None:
        if asked:
            question = "\n".join(lines[:asked])
            self._entry = [*self._entry, question] if self._asking else [question]
            self._entry_open = False
        elif rule:
            self._entry, self._entry_open = ["\n".join(lines)], True
        elif self._entry_open:
            text = "\n".join(lines)
            if len(text) <= QUESTION_CHARS:
                self._entry.append(text)
            self._entry_open = False

    def _reopen(self, room: int) -> None:
        """A new chunk in the middle of an entry starts with the entry's opening."""
        length = sum(len(part) + 2 for part in self._entry)
        if self._entry and not self._entry_open and length + room + 2 <= self.size:
            self._current = list(self._entry)
            self._length = length

    def flush(self) -> Iterator[str]:
        if self._current and not all(_RULE.match(part) for part in self._current):
            yield "\n\n".join(self._current)
        self._current, self._length = [], 0
        self._asking = False


def _cell_text(raw: str) -> str:
    text = html.unescape(_TAG_RE.sub(" ", raw))
    return _SPACE_RUN_RE.sub(" ", text).replace("|", "/").strip()


def html_table_rows(block: str) -> list[str]:
    """An HTML table as Markdown pipe rows (first row is the header), or [] if none."""
    rows: list[str] = []
    for row in _ROW_RE.findall(block):
        cells = [_cell_text(cell) for cell in _CELL_RE.findall(row)]
        if any(cells):
            rows.append("| " + " | ".join(cells) + " |")
    if not rows:
        return []
    columns = rows[0].count(" | ") + 1
    return [rows[0], "|" + " --- |" * columns, *rows[1:]]


def _table_pieces(rows: list[str], size: int) -> Iterator[str]:
    """A table as one paragraph, or cut between rows with the header repeated."""
    whole = "\n".join(rows)
    if len(whole) <= size or len(rows) < 3:
        yield whole
        return
    header_rows = 2 if _TABLE_SEPARATOR_RE.match(rows[1]) else 1
    header = "\n".join(rows[:header_rows])
    body_budget = max(size - len(header) - 1, size // 2)
    group: list[str] = []
    length = 0
    for row in rows[header_rows:]:
        if group and length + len(row) + 1 > body_budget:
            yield header + "\n" + "\n".join(group)
            group, length = [], 0
        group.append(row)
        length += len(row) + 1
    if group:
        yield header + "\n" + "\n".join(group)


class _Paragraphs:
    """Collects lines into paragraphs. A paragraph that grows past `cap` characters gives
    out chunk-sized pieces early (each at least half a chunk: no slivers), so memory stays
    bounded whatever the paragraph's length."""

    def __init__(self, cap: int) -> None:
        self._cap = cap
        self._parts: list[str] = []
        self._length = 0

    def add(self, line: Line, size: int) -> Iterator[str]:
        if line.continued and self._parts:
            self._parts[-1] += line.text
        else:
            self._parts.append(line.text)
        self._length += len(line.text) + 1
        if self._length > self._cap:
            text = "\n".join(self._parts)
            start = 0
            while len(text) - start > size:
                cut = _soft_cut(text, start, start + size)
                head = text[start:cut].strip()
                if head:
                    yield head
                start = cut
            tail = text[start:]
            self._parts, self._length = [tail], len(tail)

    def flush(self) -> Iterator[str]:
        text = "\n".join(self._parts).strip()
        self._parts, self._length = [], 0
        if text:
            yield text


def text_chunks(lines: Iterable[Line], size: int = CHUNK_CHARS) -> Iterator[tuple[str, str]]:
    """Plain text: (no title, chunk) pairs, paragraphs packed up to `size` characters."""
    packer = _Packer(size)
    paragraphs = _Paragraphs(LINE_CAP)
    for line in lines:
        if not line.continued and not line.text.strip():
            for paragraph in paragraphs.flush():
                yield from (("", chunk) for chunk in packer.add(paragraph))
            continue
        for paragraph in paragraphs.add(line, size):
            yield from (("", chunk) for chunk in packer.add(paragraph))
    for paragraph in paragraphs.flush():
        yield from (("", chunk) for chunk in packer.add(paragraph))
    yield from (("", chunk) for chunk in packer.flush())


class _MarkdownChunker:
    """The state machine behind `markdown_chunks`."""

    def __init__(self, facts: DocumentFacts, keep_line: Callable[[str], bool]) -> None:
        self.facts = facts
        self.keep_line = keep_line
        self.trail: list[tuple[int, str]] = []
        self.title = ""
        self.packer = _Packer(CHUNK_CHARS)
        self.paragraphs = _Paragraphs(LINE_CAP)
        self.table: list[str] = []
        self.html: list[str] = []
        self.html_length = 0
        self.in_fence = False
        self.had_h1 = False

    def _emit(self, texts: Iterable[str]) -> Iterator[tuple[str, str]]:
        for text in texts:
            yield self.title, (f"{self.title}\n\n{text}" if self.title else text)

    def _paragraph(self, paragraph: str) -> Iterator[tuple[str, str]]:
        yield from self._emit(self.packer.add(paragraph))

    def _end_paragraph(self) -> Iterator[tuple[str, str]]:
        for paragraph in self.paragraphs.flush():
            yield from self._paragraph(paragraph)

    def _end_table(self) -> Iterator[tuple[str, str]]:
        if self.table:
            rows, self.table = self.table, []
            for piece in _table_pieces(rows, self.packer.size):
                yield from self._paragraph(piece)

    def _end_html(self, complete: bool) -> Iterator[tuple[str, str]]:
        block, self.html, self.html_length = "\n".join(self.html), [], 0
        rows = html_table_rows(block) if complete else []
        if rows:
            for piece in _table_pieces(rows, self.packer.size):
                yield from self._paragraph(piece)
        else:
            yield from self._paragraph(block)

    def _end_section(self) -> Iterator[tuple[str, str]]:
        yield from self._end_paragraph()
        yield from self._end_table()
        yield from self._emit(self.packer.flush())

    def _heading(self, level: int, text: str) -> Iterator[tuple[str, str]]:
        yield from self._end_section()
        text = _MARKUP_RE.sub("", text).strip() or text
        self.trail = [(lvl, title) for lvl, title in self.trail if lvl < level]
        self.trail.append((level, text))
        self.title = " › ".join(title for _, title in self.trail)
        self.packer = _Packer(max(_MIN_BUDGET, CHUNK_CHARS - len(self.title) - 2))
        if not self.facts.title or (level == 1 and not self.had_h1):
            self.facts.title = text
        self.had_h1 = self.had_h1 or level == 1

    def feed(self, line: Line) -> Iterator[tuple[str, str]]:
        text = line.text
        if not line.continued and len(text) < 300 and self.keep_line(text):
            self.facts.revision_lines.append(text)
        if self.html:
            if line.continued:
                self.html[-1] += text
            else:
                self.html.append(text)
            self.html_length += len(text)
            if "</table>" in text.lower():
                yield from self._end_html(complete=True)
            elif self.html_length > HTML_TABLE_CAP:
                yield from self._end_html(complete=False)
            return
        stripped = text.strip()
        if not line.continued and _FENCE_RE.match(text):
            self.in_fence = not self.in_fence
        heading = None
        if not line.continued and not self.in_fence:
            heading = _HEADING_RE.match(text)
        if heading is not None:
            yield from self._heading(len(heading.group(1)), heading.group(2).strip())
            return
        if not self.in_fence and not line.continued:
            if stripped.startswith("|"):
                yield from self._end_paragraph()
                self.table.append(stripped)
                return
            yield from self._end_table()
            if stripped.lower().startswith("<table"):
                yield from self._end_paragraph()
                self.html = [text]
                self.html_length = len(text)
                if "</table>" in stripped.lower():
                    yield from self._end_html(complete=True)
                return
            if not stripped:
                yield from self._end_paragraph()
                return
        yield from self._add(line)

    def _add(self, line: Line) -> Iterator[tuple[str, str]]:
        for paragraph in self.paragraphs.add(line, self.packer.size):
            yield from self._paragraph(paragraph)

    def finish(self) -> Iterator[tuple[str, str]]:
        if self.html:
            yield from self._end_html(complete=False)
        yield from self._end_section()


def markdown_chunks(
    lines: Iterable[Line],
    facts: DocumentFacts | None = None,
    *,
    keep_line: Callable[[str], bool] = lambda _line: False,
) -> Iterator[tuple[str, str]]:
    """(heading trail, chunk text) pairs of a Markdown stream; front matter is set aside
    in `facts`, and lines for which `keep_line` is true are kept there too."""
    facts = facts if facts is not None else DocumentFacts()
    chunker = _MarkdownChunker(facts, keep_line)
    iterator = iter(lines)
    first = next(iterator, None)
    if first is None:
        return
    pending: list[Line] = [first]
    if first.text.strip() == "---" and not first.continued:
        for line in iterator:
            pending.append(line)
            if not line.continued and line.text.strip() in ("---", "..."):
                fields = [held.text for held in pending[1:-1]]
                if any(_FRONT_FIELD_RE.match(field) for field in fields):
                    facts.front_matter = fields
                    pending = []
                break
            if len(pending) > _FRONT_MATTER_LINES:
                break
    for line in pending:
        yield from chunker.feed(line)
    for line in iterator:
        yield from chunker.feed(line)
    yield from chunker.finish()
