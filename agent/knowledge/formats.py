"""Reading PDF, Word (.docx) and HTML documents into (section, text, page) pieces.

- PDF (pypdf, BSD-3): the text layer, page by page; each piece keeps its page number so
  an answer cites "handbook.pdf, p. 12". An encrypted PDF (one that does not open with
  an empty password), a PDF with no text layer (scanned pages) and a PDF pypdf cannot
  parse raise `FormatError` with a plain reason.
- Word .docx (python-docx, MIT): paragraphs and tables in document order; heading styles
  become Markdown headings (so sections are cited by heading), tables become pipe rows
  (header row repeated when a table is cut). A corrupt or non-Word file: `FormatError`.
- HTML (`html_text.py`, standard library): the main content as Markdown.

Each reader turns its format into Markdown (or, for PDF, per-page text) and reuses the
streaming chunker, so every format is chunked the same way. Nothing here runs code from
a document: PDF JavaScript is never evaluated, XML entities are not resolved
(python-docx's parser), HTML scripts are dropped unread.
"""

from __future__ import annotations

import io
import logging
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from agent.knowledge.chunking import DocumentFacts, Line, markdown_chunks, read_lines, text_chunks
from agent.knowledge.html_text import html_to_markdown

__all__ = [
    "HTML_SUFFIXES",
    "MAX_DOCX_XML_BYTES",
    "MAX_HTML_BYTES",
    "RICH_SUFFIXES",
    "FormatError",
    "Piece",
    "docx_pieces",
    "html_pieces",
    "pdf_pieces",
]

HTML_SUFFIXES = frozenset({".html", ".htm"})
RICH_SUFFIXES = frozenset({".pdf", ".docx"}) | HTML_SUFFIXES
MAX_HTML_BYTES = 20 << 20
"""An HTML page larger than this is skipped: real pages are far smaller, and the whole
page is parsed in memory."""
MAX_DOCX_XML_BYTES = 64 << 20
"""A .docx whose text part unpacks to more than this is skipped (a zip bomb, or a
document no one reads), before python-docx loads it into memory."""

logging.getLogger("pypdf").setLevel(logging.ERROR)  # its warnings on odd PDFs are noise


class FormatError(ValueError):
    """A document of a supported format that cannot be read; the message says why."""


@dataclass(frozen=True)
class Piece:
    """One chunk's worth of a document: its section (heading trail), text and page."""

    title: str
    text: str
    page: int | None = None


def _markdown_pieces(markdown: str, facts: DocumentFacts) -> Iterator[Piece]:
    lines = read_lines(io.StringIO(markdown))
    for title, text in markdown_chunks(lines, facts):
        yield Piece(title, text)


# --------------------------------------------------------------------------- PDF


def pdf_pieces(path: Path, facts: DocumentFacts) -> Iterator[Piece]:
    """The PDF's text layer, chunked page by page (pieces carry their page number)."""
    from pypdf import PdfReader
    from pypdf.errors import DependencyError, FileNotDecryptedError, PdfReadError

    with path.open("rb") as stream:
        try:
            reader = PdfReader(stream)
            if reader.is_encrypted:
                try:
                    opened = reader.decrypt("")
                except (DependencyError, NotImplementedError) as exc:
                    raise FormatError(f"encrypted PDF that cannot be opened ({exc})") from exc
                if not opened:
                    raise FormatError("encrypted PDF (password-protected); save it unprotected")
            metadata = reader.metadata
            if metadata is not None and metadata.title:
                facts.title = str(metadata.title).strip()
            pages = reader.pages
            count = len(pages)
        except FormatError:
            raise
        except FileNotDecryptedError as exc:
            raise FormatError("encrypted PDF (password-protected); save it unprotected") from exc
        except (PdfReadError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise FormatError(f"not a readable PDF ({type(exc).__name__}: {exc})") from exc
        found = False
        for number in range(count):
            try:
                text = pages[number].extract_text() or ""
            except Exception as exc:  # pypdf raises many types on malformed pages
                raise FormatError(
                    f"page {number + 1} cannot be read ({type(exc).__name__}: {exc})"
                ) from exc
            lines = (Line(line) for line in text.replace("\x00", "").splitlines())
            for _, chunk in text_chunks(lines):
                found = True
                yield Piece("", chunk, page=number + 1)
        if not found:
            raise FormatError(
                f"no text layer in its {count} page(s): a scanned or image-only PDF "
                "(run it through OCR first)"
                if count
                else "a PDF with no pages"
            )


# --------------------------------------------------------------------------- Word


def _check_docx(path: Path) -> None:
    """Refuse what is not a .docx, or whose text would unpack to an unreasonable size."""
    try:
        with zipfile.ZipFile(path) as archive:
            names = {info.filename: info for info in archive.infolist()}
    except (zipfile.BadZipFile, zipfile.LargeZipFile) as exc:
        raise FormatError(f"not a valid Word .docx file (corrupt zip: {exc})") from exc
    body = names.get("word/document.xml")
    if body is None:
        raise FormatError("not a valid Word .docx file (no word/document.xml inside)")
    if body.file_size > MAX_DOCX_XML_BYTES:
        raise FormatError(
            f"its text unpacks to {body.file_size >> 20} MB, over the "
            f"{MAX_DOCX_XML_BYTES >> 20} MB limit"
        )


def _heading_level(style: str) -> int | None:
    """ "Title" → 1, "Heading 2" → 2 (Word's built-in styles), else None."""
    if style == "Title":
        return 1
    if style.startswith("Heading "):
        number = style.removeprefix("Heading ").strip()
        if number.isdigit():
            return min(6, max(1, int(number)))
    return None


def _docx_markdown(path: Path) -> tuple[str, str]:
    """The document as Markdown, and its title from the file's properties."""
    import docx
    from docx.table import Table

    _check_docx(path)
    try:
        document = docx.Document(str(path))
    except Exception as exc:  # python-docx raises many types on a broken package
        raise FormatError(
            f"not a valid Word .docx file ({type(exc).__name__}: {exc})".rstrip()
        ) from exc
    title = (document.core_properties.title or "").strip()
    lines: list[str] = []
    for block in document.iter_inner_content():
        if isinstance(block, Table):
            rows = [
                [" ".join(cell.text.split()).replace("|", "/") for cell in row.cells]
                for row in block.rows
            ]
            rows = [row for row in rows if any(row)]
            if not rows:
                continue
            width = max(len(row) for row in rows)
            lines.append("")
            for number, row in enumerate(rows):
                lines.append("| " + " | ".join(row + [""] * (width - len(row))) + " |")
                if number == 0:
                    lines.append("|" + " --- |" * width)
            lines.append("")
            continue
        text = " ".join(block.text.split())
        if not text:
            lines.append("")
            continue
        style = block.style.name if block.style is not None else ""
        level = _heading_level(style or "")
        if level is not None:
            lines += ["", "#" * level + " " + text, ""]
        elif (style or "").startswith("List"):
            lines.append("- " + text)
        else:
            lines += [text, ""]
    return "\n".join(lines), title


def docx_pieces(path: Path, facts: DocumentFacts) -> Iterator[Piece]:
    """A Word document's paragraphs and tables, sectioned by its headings."""
    markdown, title = _docx_markdown(path)
    yield from _markdown_pieces(markdown, facts)
    if title:
        facts.title = title  # the document's own title wins over its first heading


# --------------------------------------------------------------------------- HTML


def html_pieces(
    data: bytes, facts: DocumentFacts, *, base_url: str | None = None
) -> Iterator[Piece]:
    """An HTML page's main content, sectioned by its headings."""
    if len(data) > MAX_HTML_BYTES:
        raise FormatError(
            f"HTML page of {len(data) >> 20} MB, over the {MAX_HTML_BYTES >> 20} MB limit"
        )
    if b"\x00" in data[:4096]:
        raise FormatError("it looks like a binary file, not HTML")
    text = _decode(data)
    page = html_to_markdown(text, base_url)
    yield from _markdown_pieces(page.markdown, facts)
    if page.title:
        facts.title = page.title


def _decode(data: bytes) -> str:
    """HTML bytes as text: a BOM, else a declared charset, else UTF-8 (bad bytes replaced)."""
    if data.startswith(b"\xef\xbb\xbf"):
        return data[3:].decode("utf-8", "replace")
    head = data[:2048].decode("ascii", "replace").lower()
    marker = head.find("charset=")
    if marker >= 0:
        charset = head[marker + 8 :].lstrip("\"' ").split('"')[0].split("'")[0]
        charset = charset.split(";")[0].split(">")[0].split()[0] if charset.split() else ""
        try:
            return data.decode(charset or "utf-8", "replace")
        except LookupError:
            pass
    return data.decode("utf-8", "replace")
