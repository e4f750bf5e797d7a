"""Through the `grace` command: a question whose answer is on page 3 of a PDF is answered
from it and cites `handbook.pdf, p. 3` (issue 19's acceptance), and an encrypted PDF
beside it is named in the skipped list while the rest goes in."""

from __future__ import annotations

from pathlib import Path

from tests.durable.helpers import grace_env, grace_here
from tests.knowledge.documents_made import write_encrypted_pdf, write_pdf


def test_an_answer_on_page_three_cites_the_page(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    handbook = write_pdf(
        docs / "handbook.pdf",
        [
            ["Employee handbook", "Welcome to the company."],
            ["Working hours", "The office opens at 8 am on weekdays."],
            ["Parental leave", "Parents receive 16 weeks of parental leave at full pay."],
        ],
        title="Employee handbook",
    )
    write_encrypted_pdf(docs / "salaries.pdf", handbook)
    env = grace_env(tmp_path / "data")

    ingested = grace_here(env, "ingest", str(docs))
    assert ingested.returncode == 0, ingested.stderr
    assert "salaries.pdf (encrypted PDF" in ingested.stdout

    asked = grace_here(
        env, "ask", "How many weeks of parental leave do parents receive?", "--no-input"
    )
    assert "16 weeks" in asked.stdout, asked.stdout + asked.stderr
    assert "Sources: handbook.pdf, p. 3" in asked.stdout
