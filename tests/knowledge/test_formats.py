"""PDF, Word and HTML documents made in the test, read and ingested into the real
knowledge base; bad ones are named with their reason while the rest go in."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from agent.errors import InvalidInputError
from agent.knowledge.documents import load_file
from agent.knowledge.formats import MAX_HTML_BYTES
from agent.knowledge.html_text import html_to_markdown
from agent.knowledge.ingest import ingest
from agent.knowledge.qdrant_kb import QdrantKnowledgeBase
from agent.knowledge.source_ingest import IngestOptions, ingest_source
from agent.sources import FileSourceCatalog, SourceKind
from blocks.answer import source_lines
from tests.knowledge.documents_made import (
    write_docx,
    write_encrypted_pdf,
    write_image_only_pdf,
    write_pdf,
)

HANDBOOK_PAGES = [
    ["Northwind handbook", "Welcome to the company."],
    ["Working hours", "The office opens at 8 and closes at 18."],
    ["Parental leave", "Parents receive 16 weeks of parental leave at full pay."],
]

PAGE = """<!doctype html>
<html><head><title>Expenses - Docs</title>
<script>document.write("tracking pixel secret")</script><style>p {color: red}</style></head>
<body>
<header><a href="/">Docs home</a></header>
<nav><a href="/handbook/other.html">Other page</a> Navigation menu words</nav>
<main>
<h1>Expenses</h1>
<p>Claim meals within <b>30 days</b>; see the <a href="forms/claim.html">claim form</a>.</p>
<h2>Limits</h2>
<table><tr><th>Item</th><th>Limit</th></tr><tr><td>Dinner</td><td>45 EUR</td></tr></table>
</main>
<footer>Copyright Northwind, all rights reserved</footer>
</body></html>
"""


def test_pdf_chunks_keep_their_page_numbers(tmp_path: Path) -> None:
    path = write_pdf(tmp_path / "handbook.pdf", HANDBOOK_PAGES, title="Employee handbook")
    chunks = load_file(path)
    assert [c.page for c in chunks] == [1, 2, 3]
    assert "16 weeks of parental leave" in chunks[2].text
    assert {c.doc_title for c in chunks} == {"Employee handbook"}
    assert {c.source for c in chunks} == {"handbook.pdf"}


def test_docx_headings_become_sections_and_tables_rows(tmp_path: Path) -> None:
    chunks = load_file(write_docx(tmp_path / "travel.docx"))
    by_section = {c.title: c.text for c in chunks}
    assert "Hotels up to 180 EUR" in by_section["Travel policy › Hotels"]
    table = by_section["Travel policy › Per diem"]
    assert "| City | Per diem |" in table
    assert "| Tokyo | 6100 JPY |" in table
    assert chunks[0].doc_title == "Travel policy"


def test_docx_title_property_names_the_document(tmp_path: Path) -> None:
    chunks = load_file(write_docx(tmp_path / "travel.docx", title="Travel rules 2026"))
    assert {c.doc_title for c in chunks} == {"Travel rules 2026"}


def test_html_keeps_main_content_headings_and_links() -> None:
    page = html_to_markdown(PAGE, "https://docs.example.com/handbook/expenses.html")
    assert page.title == "Expenses - Docs"
    text = page.markdown
    assert text.startswith("# Expenses")
    assert "## Limits" in text
    assert "[claim form](https://docs.example.com/handbook/forms/claim.html)" in text
    assert "| Dinner | 45 EUR |" in text
    for absent in ("tracking pixel", "color: red", "Navigation menu", "Copyright", "Docs home"):
        assert absent not in text
    assert page.links == [
        "https://docs.example.com/",
        "https://docs.example.com/handbook/other.html",
        "https://docs.example.com/handbook/forms/claim.html",
    ]


def test_html_without_main_keeps_everything_but_the_chrome() -> None:
    page = html_to_markdown(
        "<body><nav>Menu</nav><div><h2>Setup</h2><p>Install it.</p></div>"
        "<div role='navigation'>Sidebar</div><footer>Foot</footer></body>"
    )
    assert page.markdown == "## Setup\n\nInstall it."


def test_html_file_is_chunked_by_its_headings(tmp_path: Path) -> None:
    path = tmp_path / "expenses.html"
    path.write_text(PAGE, encoding="utf-8")
    chunks = load_file(path)
    assert [c.title for c in chunks] == ["Expenses", "Expenses › Limits"]
    assert chunks[0].doc_title == "Expenses - Docs"


async def test_a_mixed_folder_goes_in_and_bad_documents_are_named(
    kb: QdrantKnowledgeBase, tmp_path: Path
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    handbook = write_pdf(docs / "handbook.pdf", HANDBOOK_PAGES)
    write_docx(docs / "travel.docx")
    (docs / "expenses.html").write_text(PAGE, encoding="utf-8")
    (docs / "notes.md").write_text("# Notes\n\nThe wifi password rotates monthly.\n")
    write_encrypted_pdf(docs / "salaries.pdf", handbook)
    write_image_only_pdf(docs / "scan.pdf")
    (docs / "broken.docx").write_bytes(b"PK\x03\x04 this is not really a zip file")
    with zipfile.ZipFile(docs / "empty.docx", "w") as archive:
        archive.writestr("hello.txt", "not a Word document")
    (docs / "truncated.pdf").write_bytes(handbook.read_bytes()[:200])

    result = await ingest(kb, [docs])

    assert sorted(r.source for r in result.reports) == [
        "expenses.html",
        "handbook.pdf",
        "notes.md",
        "travel.docx",
    ]
    reasons = {Path(s.path).name: s.reason for s in result.skipped}
    assert set(reasons) == {
        "salaries.pdf",
        "scan.pdf",
        "broken.docx",
        "empty.docx",
        "truncated.pdf",
    }
    assert reasons["salaries.pdf"].startswith("encrypted PDF")
    assert reasons["scan.pdf"].startswith("no text layer in its 2 page(s)")
    assert reasons["broken.docx"].startswith("not a valid Word .docx file")
    assert reasons["empty.docx"] == "not a valid Word .docx file (no word/document.xml inside)"
    assert "PDF" in reasons["truncated.pdf"]

    hits = await kb.search("How many weeks of parental leave do parents get?")
    assert hits[0].source == "handbook.pdf"
    assert hits[0].page == 3
    assert hits[0].citation == "handbook.pdf, p. 3"
    assert source_lines(hits[:1])[0].startswith("• *handbook.pdf, p. 3* — “Parental leave")

    hits = await kb.search("hotel per night limit")
    assert hits[0].source == "travel.docx"
    assert hits[0].citation == "travel.docx › Travel policy › Hotels"


def test_an_html_file_over_the_limit_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "dump.html"
    with path.open("wb") as stream:
        stream.truncate(MAX_HTML_BYTES + 1)  # sparse: the size is what is checked
    with pytest.raises(InvalidInputError, match=r"dump\.html: HTML page of 20 MB, over the"):
        load_file(path)


async def test_ingest_source_reports_a_folder_and_remembers_it(
    kb: QdrantKnowledgeBase, tmp_path: Path
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    write_pdf(docs / "handbook.pdf", HANDBOOK_PAGES)
    write_image_only_pdf(docs / "scan.pdf")
    catalog = FileSourceCatalog(tmp_path / "data" / "sources.json")

    first = await ingest_source(kb, str(docs), catalog=catalog)
    second = await ingest_source(kb, str(docs), IngestOptions(collection=None), catalog=catalog)

    assert first.kind is SourceKind.FOLDER
    assert [r.source for r in first.added] == ["handbook.pdf"]
    assert [r.source for r in second.changed] == ["handbook.pdf"]
    assert first.lines()[:2] == [
        "added handbook.pdf (3 chunks)",
        f"skipped {docs / 'scan.pdf'} (no text layer in its 2 page(s): a scanned or "
        "image-only PDF (run it through OCR first))",
    ]
    assert first.lines()[-1].startswith(
        f"{docs}: 1 added, 0 changed, 0 removed, 0 unchanged, 1 skipped (3 chunks into "
    )
    remembered = await catalog.list()
    assert [(s.kind, s.location) for s in remembered] == [(SourceKind.FOLDER, str(docs))]
    assert remembered[0].last_sync is not None
