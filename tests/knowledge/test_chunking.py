"""The streaming chunker: bounded chunks from any input shape, headings and table
headers kept with their text, front matter set aside."""

from __future__ import annotations

import io
from pathlib import Path

from agent.knowledge.chunking import (
    CHUNK_CHARS,
    LINE_CAP,
    DocumentFacts,
    html_table_rows,
    markdown_chunks,
    read_lines,
    text_chunks,
)
from agent.knowledge.ingest import load_file


def _md(text: str, facts: DocumentFacts | None = None) -> list[tuple[str, str]]:
    return list(markdown_chunks(read_lines(io.StringIO(text)), facts))


def test_a_long_line_without_punctuation_or_spaces_is_cut_into_full_chunks() -> None:
    text = "あいうえおかきくけこ" * 50_000  # 500,000 characters, one line
    chunks = [body for _, body in text_chunks(read_lines(io.StringIO(text)))]
    assert "".join(chunks) == text  # nothing lost, nothing added
    assert all(len(c) == CHUNK_CHARS for c in chunks[:-1])
    assert 0 < len(chunks[-1]) <= CHUNK_CHARS
    assert len(chunks) == -(-len(text) // CHUNK_CHARS)


def test_a_long_line_of_words_is_cut_between_words(tmp_path: Path) -> None:
    words = [f"word{n}" for n in range(60_000)]
    path = tmp_path / "dump.md"
    path.write_text("# Dump\n\n" + " ".join(words), encoding="utf-8")
    chunks = load_file(path)
    bodies = [c.text.removeprefix("Dump\n\n") for c in chunks]
    assert all(c.text.startswith("Dump\n\n") for c in chunks)
    assert all(len(c.text) <= CHUNK_CHARS for c in chunks)
    assert all(len(b) >= CHUNK_CHARS // 3 for b in bodies[:-1])  # no slivers
    assert " ".join(bodies).split() == words  # every cut falls between two words


def test_lines_longer_than_the_cap_arrive_in_pieces() -> None:
    lines = list(read_lines(io.StringIO("short\n" + "x" * (LINE_CAP * 3 + 5) + "\nend")))
    assert lines[0].text == "short" and not lines[0].continued
    assert [len(line.text) for line in lines[1:4]] == [LINE_CAP] * 3
    assert [line.continued for line in lines[1:5]] == [False, True, True, True]
    assert lines[-1].text == "end" and not lines[-1].continued


def test_a_long_markdown_table_repeats_its_header_in_every_piece() -> None:
    rows = "\n".join(f"| item {n} | {n * 10} yen |" for n in range(120))
    chunks = _md(f"# Prices\n\n## Table\n\n| Item | Price |\n| --- | --- |\n{rows}\n")
    assert len(chunks) > 2
    for title, body in chunks:
        assert title == "Prices › Table"
        assert body.startswith("Prices › Table\n\n| Item | Price |\n| --- | --- |\n| item ")
        assert len(body) <= CHUNK_CHARS
    assert sum(body.count("| item ") for _, body in chunks) == 120


def test_html_tables_become_pipe_rows_under_their_header() -> None:
    table = """<table>
  <tr>
   <td><strong>System</strong>
   </td>
   <td><strong>Retention Period</strong>
   </td>
  </tr>
  <tr>
   <td>SaaS Products
   </td>
   <td>Up to 60 days after contract termination
   </td>
  </tr>
</table>"""
    assert html_table_rows(table) == [
        "| System | Retention Period |",
        "| --- | --- |",
        "| SaaS Products | Up to 60 days after contract termination |",
    ]
    [(_title, body)] = _md(f"# Data\n\n{table}\n\nAfter.")
    assert body == (
        "Data\n\n| System | Retention Period |\n| --- | --- |\n"
        "| SaaS Products | Up to 60 days after contract termination |\n\nAfter."
    )


def test_front_matter_is_set_aside_and_titles_the_document() -> None:
    facts = DocumentFacts()
    chunks = _md("---\ntitle: Travel policy\nupdated: 2024-03-01\n---\nBody text.\n", facts)
    assert chunks == [("", "Body text.")]
    assert facts.front_matter == ["title: Travel policy", "updated: 2024-03-01"]


def test_a_horizontal_rule_at_the_top_is_not_front_matter() -> None:
    chunks = _md("---\nJust a rule and text.\n---\nMore.\n")
    assert "Just a rule and text." in chunks[0][1]


def test_the_first_level_one_heading_is_the_document_title() -> None:
    facts = DocumentFacts()
    _md("## Intro\n\ntext\n\n# **Real title**\n\nmore\n\n# Second\n\nx", facts)
    assert facts.title == "Real title"


def test_an_faq_question_starts_a_chunk_with_its_answer() -> None:
    """A question is kept with the answer below it, not left at the end of the chunk
    before (where its answer, in the next chunk, would lose what it answers)."""
    filler = "The widget keeps a small cache of recent lookups on disk. " * 10
    text = (
        f"Why is the widget slow at start?\n\n{filler.strip()}\n\n"
        "How do I clear the cache?\n\nDelete the folder named in the settings page.\n"
    )
    chunks = [body for _, body in text_chunks(read_lines(io.StringIO(text)))]
    assert len(text) < CHUNK_CHARS  # one chunk, were questions not chunk starts
    assert chunks[-1].startswith("How do I clear the cache?\n\nDelete the folder")
    assert chunks[0].startswith("Why is the widget slow at start?")


def test_consecutive_faq_questions_share_their_answer_chunk() -> None:
    text = (
        "Intro text about widgets.\n\n"
        "Q. Why does the banner say beta?\n\n"
        "Q. Why does the footer say beta?\n\n"
        "A. Both follow the release channel you picked.\n"
    )
    chunks = [body for _, body in text_chunks(read_lines(io.StringIO(text)))]
    assert chunks == [
        "Intro text about widgets.",
        "Q. Why does the banner say beta?\n\nQ. Why does the footer say beta?\n\n"
        "A. Both follow the release channel you picked.",
    ]


def test_a_numbered_question_with_its_answer_on_the_next_line_starts_a_chunk() -> None:
    text = (
        "1.1. How do I install it?\nRun the installer.\n\n"
        "1.2. Where are the logs\nkept?\nIn the log folder.\n"
    )
    chunks = [body for _, body in text_chunks(read_lines(io.StringIO(text)))]
    assert chunks == [
        "1.1. How do I install it?\nRun the installer.",
        "1.2. Where are the logs\nkept?\nIn the log folder.",
    ]


def test_a_rule_line_starts_a_chunk_with_the_entry_after_it() -> None:
    filler = "The widget keeps a small cache of recent lookups on disk. " * 5
    text = (
        f"{filler.strip()}\n-------\n\n"
        "If you press the red key, the program\nstops at once.\n\n"
        "The keyboard maps that key to a break.\n"
    )
    chunks = [body for _, body in text_chunks(read_lines(io.StringIO(text)))]
    assert chunks == [
        filler.strip(),
        "-------\n\nIf you press the red key, the program\nstops at once.\n\n"
        "The keyboard maps that key to a break.",
    ]


def test_a_line_underlined_as_a_heading_keeps_its_underline_and_text_together() -> None:
    filler = "The widget keeps a small cache of recent lookups on disk. " * 5
    text = f"{filler.strip()}\n\nWhy is it slow?\n===============\n\nIt waits for the lock.\n"
    chunks = [body for _, body in text_chunks(read_lines(io.StringIO(text)))]
    assert chunks[-1] == "Why is it slow?\n===============\n\nIt waits for the lock."


def test_an_faq_answer_too_long_for_a_chunk_repeats_its_question_on_the_next() -> None:
    para = "The widget keeps a small cache of recent lookups on disk. " * 6
    text = (
        f"Why is the widget slow?\n\n{para}\n\n{para}\n\n{para}\n\n"
        f"-----\n\nThe red key stops it.\n\n{para}\n\n{para}\n\n{para}\n"
    )
    chunks = [body for _, body in text_chunks(read_lines(io.StringIO(text)))]
    assert len(chunks) == 4
    assert all(len(c) <= CHUNK_CHARS for c in chunks)
    assert [c.split("\n\n")[0] for c in chunks[:2]] == ["Why is the widget slow?"] * 2
    assert [c.split("\n\n")[:2] for c in chunks[2:]] == [["-----", "The red key stops it."]] * 2
