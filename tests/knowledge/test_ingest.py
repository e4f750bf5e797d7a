"""Loading Markdown / text / CSV files into chunks, and idempotent ingestion."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.errors import InvalidInputError
from agent.knowledge.chunks import IngestReport
from agent.knowledge.ingest import (
    CHUNK_CHARS,
    SAMPLE_KB_DIR,
    ingest,
    ingest_paths,
    load_documents,
    load_file,
)
from agent.knowledge.qdrant_kb import QdrantKnowledgeBase
from tests.knowledge.documents_made import write_docs

MARKDOWN = """# Travel Guide

Intro paragraph about travel.

## Hotels

Hotels are reimbursed up to $200 per night.

```python
# not a heading
```

### Tokyo

Tokyo hotels up to $260.

## Trains

Second class by default.
"""


def test_markdown_splits_on_headings_and_keeps_the_trail(tmp_path: Path) -> None:
    path = tmp_path / "travel.md"
    path.write_text(MARKDOWN, encoding="utf-8")
    chunks = load_file(path)
    assert [c.title for c in chunks] == [
        "Travel Guide",
        "Travel Guide › Hotels",
        "Travel Guide › Hotels › Tokyo",
        "Travel Guide › Trains",
    ]
    assert chunks[1].text.startswith("Travel Guide › Hotels\n\n")
    assert "# not a heading" in chunks[1].text  # fenced code is not split
    assert chunks[2].text.endswith("Tokyo hotels up to $260.")
    assert [c.index for c in chunks] == [0, 1, 2, 3]
    assert {c.source for c in chunks} == {"travel.md"}
    assert chunks[3].chunk_id == "travel.md#3"


def test_long_markdown_sections_are_split_into_bounded_chunks(tmp_path: Path) -> None:
    paragraphs = [f"Paragraph {i}. " + "Some policy sentence here. " * 12 for i in range(8)]
    path = tmp_path / "long.md"
    path.write_text("# Long\n\n" + "\n\n".join(paragraphs), encoding="utf-8")
    chunks = load_file(path)
    assert len(chunks) > 2
    for chunk in chunks:
        assert chunk.text.startswith("Long\n\n")
        assert len(chunk.text) <= CHUNK_CHARS + 10
    joined = " ".join(c.text for c in chunks)
    assert all(f"Paragraph {i}." in joined for i in range(8))


def test_one_huge_paragraph_is_cut(tmp_path: Path) -> None:
    path = tmp_path / "wall.txt"
    path.write_text("経費の説明です。" * 400, encoding="utf-8")
    chunks = load_file(path)
    assert len(chunks) >= 4
    assert all(len(c.text) <= CHUNK_CHARS for c in chunks)


def test_text_file_paragraph_chunks(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("First paragraph.\n\nSecond paragraph.\r\n\r\nThird.", encoding="utf-8")
    chunks = load_file(path)
    assert len(chunks) == 1  # small paragraphs are packed together
    assert chunks[0].text == "First paragraph.\n\nSecond paragraph.\n\nThird."


def test_csv_faq_one_chunk_per_row(tmp_path: Path) -> None:
    path = tmp_path / "faq.csv"
    path.write_text(
        "\ufeffQuestion,Answer\n"
        '"What is X?","X is a thing, really."\n'
        ",skipped because the question is empty\n"
        "Is Y free?,Yes.\n",
        encoding="utf-8",
    )
    chunks = load_file(path)
    assert [c.text for c in chunks] == [
        "Q: What is X?\nA: X is a thing, really.",
        "Q: Is Y free?\nA: Yes.",
    ]
    assert chunks[0].title == "What is X?"


def test_csv_without_header_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "faq.csv"
    path.write_text("What is X?,X is a thing\n", encoding="utf-8")
    with pytest.raises(InvalidInputError, match="header row with 'question' and 'answer'"):
        load_file(path)


def test_unsupported_extension(tmp_path: Path) -> None:
    path = tmp_path / "slides.pptx"
    path.write_bytes(b"PK\x03\x04")
    with pytest.raises(InvalidInputError, match=r"slides\.pptx.*unsupported file type '\.pptx'"):
        load_documents(path)


def test_undecodable_file(tmp_path: Path) -> None:
    path = tmp_path / "latin1.txt"
    path.write_bytes("caf\xe9 au lait".encode("latin-1"))
    with pytest.raises(InvalidInputError, match=r"latin1\.txt.*not UTF-8"):
        load_file(path)


def test_unreadable_file(tmp_path: Path) -> None:
    """A dangling symlink cannot be read (root ignores chmod, so no permission test)."""
    path = tmp_path / "gone.md"
    path.symlink_to(tmp_path / "missing-target.md")
    with pytest.raises(InvalidInputError, match=r"cannot read .*gone\.md: No such file"):
        load_file(path)


def test_missing_path_and_directory_named_like_a_file(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="no such file or directory"):
        load_documents(tmp_path / "nope.md")
    (tmp_path / "folder.md").mkdir()
    with pytest.raises(InvalidInputError, match="is a directory"):
        load_file(tmp_path / "folder.md")


def test_directory_is_ingested_recursively_skipping_hidden_and_unsupported(
    tmp_path: Path,
) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.md").write_text("# A\n\nalpha", encoding="utf-8")
    (tmp_path / "sub" / "b.txt").write_text("beta", encoding="utf-8")
    (tmp_path / "image.png").write_bytes(b"\x89PNG")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "c.md").write_text("gamma", encoding="utf-8")
    chunks = load_documents(tmp_path)
    assert [c.source for c in chunks] == ["a.md", "b.txt"]


def test_empty_directory_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="no supported files"):
        load_documents(tmp_path)


def test_sample_kb_loads() -> None:
    chunks = load_documents(SAMPLE_KB_DIR)
    sources = {c.source for c in chunks}
    assert {
        "vacation-policy.md",
        "expense-policy.md",
        "remote-work-policy.md",
        "employee-handbook-2022.md",
        "security-faq.md",
        "product-faq.csv",
        "onboarding.md",
        "経費精算ガイド.md",
        "休暇制度.md",
    } <= sources
    assert "README.md" not in sources


async def test_ingest_reports_and_is_idempotent(kb: QdrantKnowledgeBase, tmp_path: Path) -> None:
    docs = write_docs(
        tmp_path / "docs",
        {
            "policy.md": "# Policy\n\n## One\n\nFirst rule.\n\n## Two\n\nSecond rule.",
            "faq.csv": "question,answer\nQ1?,A1.\nQ2?,A2.\nQ3?,A3.\n",
            "notes.txt": "Some notes.",
        },
    )

    first = await ingest_paths(kb, [docs], collection="team")
    assert [(r.source, r.chunks, r.replaced) for r in first] == [
        ("faq.csv", 3, 0),
        ("notes.txt", 1, 0),
        ("policy.md", 2, 0),
    ]
    assert await kb.count("team") == 6

    second = await ingest_paths(kb, [docs], collection="team")
    assert [(r.source, r.chunks, r.replaced) for r in second] == [
        ("faq.csv", 3, 3),
        ("notes.txt", 1, 1),
        ("policy.md", 2, 2),
    ]
    assert await kb.count("team") == 6

    # A shorter new version replaces all old chunks (no stale tail left behind).
    (docs / "faq.csv").write_text("question,answer\nQ1?,A1 revised.\n", "utf-8")
    third = await ingest_paths(kb, [docs / "faq.csv"], collection="team")
    assert (third[0].chunks, third[0].replaced) == (1, 3)
    assert await kb.count("team") == 4
    hits = await kb.search("revised", collection="team", limit=3)
    assert [h.chunk_id for h in hits] == ["faq.csv#0"]


async def test_reingesting_an_unchanged_file_says_unchanged(
    kb: QdrantKnowledgeBase, tmp_path: Path
) -> None:
    """Issue 23 (h): re-ingesting an unchanged file said "replaced 1 chunks"."""
    note = tmp_path / "notes.txt"
    note.write_text("Some notes.", encoding="utf-8")
    (first,) = await ingest_paths(kb, [note], collection="team")
    assert (first.unchanged, first.line()) == (False, "added       1 chunk from notes.txt")

    (again,) = await ingest_paths(kb, [note], collection="team")
    assert (again.unchanged, again.line()) == (True, "unchanged   1 chunk from notes.txt")

    note.write_text("Some notes, revised.", encoding="utf-8")
    (edited,) = await ingest_paths(kb, [note], collection="team")
    assert (edited.unchanged, edited.line()) == (False, "replaced    1 chunk from notes.txt")
    assert (
        IngestReport(path="a", source="a.md", chunks=2).line() == "added       2 chunks from a.md"
    )


async def test_bad_files_are_skipped_and_named_with_the_reason(
    kb: QdrantKnowledgeBase, tmp_path: Path
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "good.md").write_text("# Good\n\nfine", encoding="utf-8")
    (docs / "bad.txt").write_bytes(b"\xff\xfe\xfa broken")
    (docs / "blob.bin").write_bytes(b"\x00\x01\x02")
    (docs / "nul.txt").write_bytes(b"text\x00with a nul")
    (docs / "empty.md").write_text("\n\n  \n", encoding="utf-8")
    result = await ingest(kb, [docs], collection="team")
    assert [r.source for r in result.reports] == ["good.md"]
    reasons = {Path(s.path).name: s.reason for s in result.skipped}
    assert set(reasons) == {"bad.txt", "blob.bin", "nul.txt", "empty.md"}
    assert "unsupported file type '.bin'" in reasons["blob.bin"]
    assert "not UTF-8" in reasons["bad.txt"]
    assert "binary" in reasons["nul.txt"]
    assert "empty" in reasons["empty.md"]
    assert await kb.count("team") == 1


async def test_same_file_name_twice_is_refused(kb: QdrantKnowledgeBase, tmp_path: Path) -> None:
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "notes.txt").write_text(folder, encoding="utf-8")
    with pytest.raises(InvalidInputError, match="rename one of them"):
        await ingest_paths(kb, [tmp_path], collection="team")
