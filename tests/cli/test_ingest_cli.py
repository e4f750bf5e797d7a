"""`grace ingest` as a person runs it: skipped files named with the reason in the summary
line, a progress bar only on a terminal."""

from __future__ import annotations

from pathlib import Path

import pexpect

from tests.durable.helpers import GRACE, grace_env, grace_here


def _docs(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "policy.md").write_text("# Policy\n\nHotels up to $200 per night.", "utf-8")
    (docs / "faq.csv").write_text("question,answer\nWho?,Us.\n", "utf-8")
    (docs / "blob.bin").write_bytes(b"\x00\x01\x02")
    (docs / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    return docs


def test_summary_names_every_skipped_file_and_why(tmp_path: Path) -> None:
    docs = _docs(tmp_path)
    done = grace_here(grace_env(tmp_path / "data"), "ingest", str(docs))
    assert done.returncode == 0, done.stderr
    summary = done.stdout.strip().splitlines()[-1]
    assert summary.startswith("Ingested 2 files (2 chunks) into 'grace_docs' in ")
    assert "Skipped 2:" in summary
    assert f"{docs / 'blob.bin'} (unsupported file type '.bin')" in summary
    assert f"{docs / 'latin1.txt'} (not UTF-8 text" in summary
    assert "added       1 chunk from policy.md" in done.stdout
    assert "%|" not in done.stderr  # no progress bar when stderr is not a terminal


def test_ingesting_the_sample_twice_says_unchanged(tmp_path: Path) -> None:
    env = grace_env(tmp_path / "data")
    first = grace_here(env, "ingest", "--sample")
    assert first.returncode == 0, first.stderr
    assert "unchanged" not in first.stdout
    second = grace_here(env, "ingest", "--sample")
    assert second.returncode == 0, second.stderr
    listed = second.stdout.strip().splitlines()[:-1]
    assert listed, second.stdout
    assert all(line.startswith("unchanged ") for line in listed), second.stdout
    assert "replaced" not in second.stdout


def test_progress_bar_on_a_terminal(tmp_path: Path) -> None:
    docs = _docs(tmp_path)
    child = pexpect.spawn(
        GRACE[0],
        [*GRACE[1:], "ingest", str(docs)],
        env=grace_env(tmp_path / "data"),
        encoding="utf-8",
        timeout=120,
    )
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    assert "%|" in child.before
    assert "B/s" in child.before or "s/B" in child.before  # counted in bytes: one big file moves it
    assert "Ingested 2 files (2 chunks)" in child.before


def test_summary_names_documents_an_older_grace_indexed() -> None:
    from agent.knowledge.chunks import IngestReport, IngestResult
    from bot.cli.ingest import ingest_summary

    report = IngestReport(path="docs/travel.md", source="travel.md", chunks=3, replaced=3)
    stale = IngestResult(reports=[report], not_reindexed=["meetings.md"], seconds=0.1)
    line = ingest_summary(stale, collection="grace_docs", total=5)
    assert "1 other document(s) in 'grace_docs' were indexed by an older GRACE" in line
    assert "older GRACE" not in ingest_summary(
        IngestResult(reports=[report], seconds=0.1), collection="grace_docs", total=5
    )
