"""Older copies of a document: recognised by name and date, ranked below the current
version, flagged on the search result."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from agent.knowledge.ingest import ingest
from agent.knowledge.qdrant_kb import QdrantKnowledgeBase
from agent.knowledge.versions import (
    DocumentInfo,
    current_versions,
    date_in_name,
    date_in_text,
    document_key,
    title_key,
    version_in,
)
from tests.knowledge.documents_made import write_docs


def test_names_without_dates_and_version_marks_match() -> None:
    assert document_key("time-off_2022-12-19.md") == document_key("time-off.md") == "time off"
    assert document_key("02_賃金規程_令和2年版.md") == document_key("02_賃金規程.md")
    assert document_key("Handbook (old).md") == document_key("handbook v2.md") == "handbook"
    assert document_key("travel.md") != document_key("time-off.md")


def test_dates_in_names_and_text() -> None:
    assert date_in_name("time-off_2022-12-19.md") == dt.date(2022, 12, 19)
    assert date_in_name("report_20240105.txt") == dt.date(2024, 1, 5)
    assert date_in_name("規程_令和2年版.md") == dt.date(2020, 1, 1)
    assert date_in_name("travel.md") is None
    text = "この規則は、令和2年4月21日から施行する。\nこの規則は、令和5年6月21日から施行する。"
    assert date_in_text(text) == dt.date(2023, 6, 21)
    assert date_in_text("**Last Updated Date**: Jan 25, 2022") == dt.date(2022, 1, 25)
    assert date_in_text("Founded in 2001. We have 30 days.") is None  # no revision line
    assert date_in_text("", {"updated": "2024-03-01"}) == dt.date(2024, 3, 1)


def _info(
    source: str, title: str = "T", name: str | None = None, text: str | None = None
) -> DocumentInfo:
    return DocumentInfo(source, document_key(source), title, name, text)


def test_the_undated_name_is_the_living_document() -> None:
    decided = current_versions(
        [_info("time-off.md"), _info("time-off_2022-12-19.md", name="2022-12-19")]
    )
    assert decided == {"time-off.md": None, "time-off_2022-12-19.md": "time-off.md"}


def test_newest_date_wins_and_ties_or_other_titles_decide_nothing() -> None:
    dated = [_info("plan_2023.md", name="2023-01-01"), _info("plan_2024.md", name="2024-01-01")]
    assert current_versions(dated)["plan_2023.md"] == "plan_2024.md"
    by_text = [_info("a.md", text="2020-04-21"), _info("a (copy).md", text="2023-06-21")]
    assert current_versions(by_text)["a.md"] == "a (copy).md"
    tie = [_info("a.md", text="2020-04-21"), _info("a (copy).md", text="2020-04-21")]
    assert set(current_versions(tie).values()) == {None}
    titles = [_info("notes.md", "Notes"), _info("notes_2021.md", "Other", name="2021-01-01")]
    assert set(current_versions(titles).values()) == {None}


POLICY = """# Paid time off

## Approval

Time off longer than {days} business days needs your manager's approval.

## Rest

Take at least 30 days of rest every year.
"""


async def test_search_prefers_the_current_version_and_flags_the_old_one(
    kb: QdrantKnowledgeBase, tmp_path: Path
) -> None:
    docs = write_docs(
        tmp_path / "docs",
        {
            "time-off_2022-12-19.md": POLICY.format(days=15),
            "time-off.md": POLICY.format(days=10),
        },
    )
    await ingest(kb, [docs])

    hits = await kb.search("how many business days of time off need approval", limit=5)
    assert hits[0].source == "time-off.md"
    assert not hits[0].stale and hits[0].superseded_by is None
    assert hits[0].doc_title == "Paid time off"
    old = [h for h in hits if h.source == "time-off_2022-12-19.md"]
    assert old and old[0].stale and old[0].superseded_by == "time-off.md"
    assert old[0].doc_date == "2022-12-19"
    assert "15 business days" in old[0].text  # the differing value stays visible

    rest = await kb.search("days of rest every year", limit=5)
    assert rest[0].source == "time-off.md" and "Rest" in rest[0].text
    # The old copy's identical passage adds nothing: it is dropped.
    assert not [h for h in rest if h.stale and "Rest" in h.text]


async def test_ingesting_the_old_copy_later_still_marks_it(
    kb: QdrantKnowledgeBase, tmp_path: Path
) -> None:
    (tmp_path / "time-off.md").write_text(POLICY.format(days=10), "utf-8")
    (tmp_path / "time-off_2022-12-19.md").write_text(POLICY.format(days=15), "utf-8")
    await ingest(kb, [tmp_path / "time-off.md"])
    await ingest(kb, [tmp_path / "time-off_2022-12-19.md"])
    hits = await kb.search("business days approval", limit=5)
    assert [(h.source, h.stale) for h in hits][:2] == [
        ("time-off.md", False),
        ("time-off_2022-12-19.md", True),
    ]


def test_a_release_number_in_the_name_marks_an_older_snapshot() -> None:
    assert document_key("wasm32-wasip1_rust-1.95.md") == document_key("wasm32-wasip1.md")
    assert document_key("guide_2.1.md") == document_key("guide-v2.1.md") == "guide"
    assert document_key("python3.md") == "python3"  # a digit inside a word is no release
    decided = current_versions([_info("guide_release-2.3.md"), _info("guide.md")])
    assert decided == {"guide.md": None, "guide_release-2.3.md": "guide.md"}


def test_version_numbers_in_names_and_titles() -> None:
    assert version_in("mpl-2.0.md") == (2, 0)
    assert version_in("Mozilla Public License, Version 1.1") == (1, 1)
    assert version_in("handbook v2.md") == (2,)
    assert version_in("Guide, Version 3") == (3,)
    assert version_in("Spec rev B") < version_in("Spec, Revision C")  # type: ignore[operator]
    assert version_in("Release 2.3 notes") == (2, 3)
    # No version: a bare number, a digit inside a word, a date, ordinary words.
    for text in ("chapter-2.md", "python3.md", "time-off_2022-12-19.md", "IPv6 guide",
                 "How to release a package", "review c"):  # fmt: skip
        assert version_in(text) is None, text
    assert title_key("Mozilla Public License, Version 1.1") == "mozilla public license"
    assert title_key("Mozilla Public License Version 2.0.") == "mozilla public license"
    assert title_key("Chapter 1") != title_key("Chapter 2")


def test_the_highest_version_is_current() -> None:
    licences = [
        _info("mpl-1.1.md", "Mozilla Public License, Version 1.1"),
        _info("mpl-2.0.md", "Mozilla Public License, Version 2.0"),
        _info("gpl-3.md", "GNU General Public License, version 3"),
        _info("lgpl-3.md", "GNU Lesser General Public License, version 3"),
    ]
    assert current_versions(licences) == {
        "mpl-1.1.md": "mpl-2.0.md",
        "mpl-2.0.md": None,
        "gpl-3.md": None,
        "lgpl-3.md": None,
    }
    # "1.10" is newer than "1.9"; a version in the title counts when the name has none.
    numbered = [_info("tool_1.9.md"), _info("tool_1.10.md")]
    assert current_versions(numbered)["tool_1.9.md"] == "tool_1.10.md"
    titled = [_info("api.md", "API guide, v2"), _info("api_old.md", "API guide, v1")]
    assert current_versions(titled) == {"api.md": None, "api_old.md": "api.md"}
    lettered = [_info("spec.md", "Spec rev C"), _info("spec_old.md", "Spec rev B")]
    assert current_versions(lettered)["spec_old.md"] == "spec.md"


def test_different_documents_are_not_versions() -> None:
    # Numbered chapters, different titles, equal versions: nothing is superseded.
    chapters = [_info("chapter-1.md", "Chapter 1"), _info("chapter-2.md", "Chapter 2")]
    assert set(current_versions(chapters).values()) == {None}
    apache = [
        _info("apache-2.0.md", "Apache License, Version 2.0"),
        _info("mpl-2.0.md", "Mozilla Public License, Version 2.0"),
    ]
    assert set(current_versions(apache).values()) == {None}
    # Titles alike but names of their own: two documents ("notes for release 1.80").
    notes = [_info("alpha-notes.md", "Notes, v1.80"), _info("beta-notes.md", "Notes, v1.81")]
    assert set(current_versions(notes).values()) == {None}
    tie = [_info("a_1.0.md", "A, Version 1.0"), _info("a_1.0.0.md", "A, Version 1.0.0")]
    assert set(current_versions(tie).values()) == {None}  # 1.0 = 1.0.0: a tie decides nothing
