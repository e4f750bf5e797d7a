"""Versions of one document in the evidence (agent/evidence/conflicts.py): an older
version that says something else about the question is named after the current answer;
a version number alone, a renumbered section, or another document is no conflict."""

from __future__ import annotations

from agent.evidence import (
    answer_features,
    families,
    gather,
    names,
    select,
    source_families,
    version_conflict,
)
from agent.llm.offline import extract_answer
from agent.schemas import Source


def _source(
    name: str, text: str, score: float, *, superseded_by: str | None = None, doc_title: str = ""
) -> Source:
    return Source(
        source=name,
        doc_title=doc_title,
        text=text,
        score=score,
        similarity=0.7,
        stale=superseded_by is not None,
        superseded_by=superseded_by,
    )


NEW = _source(
    "charter-2.0.md",
    "Widget Charter, Version 2.0 › 10. New Versions\n\n"
    "Widget Foundation is the charter steward. Except as provided in Section 10.3, no one "
    "other than the charter steward has the right to publish new versions of this Charter.",
    10.0,
)
OLD = _source(
    "charter-1.1.md",
    "Widget Charter, Version 1.1 › 6. New Versions\n\n"
    'Acme Widget Corporation ("Acme") may publish revised and/or new versions of the '
    "Charter from time to time.",
    9.0,
    superseded_by="charter-2.0.md",
)
QUESTION = "who may publish new versions of the Widget Charter?"


def test_names_are_capitalised_runs_not_sentence_openers_or_the_question() -> None:
    evidence = gather(QUESTION, [NEW, OLD])
    assert names(NEW.text.split("\n\n")[1], evidence) == {"widget foundation"}
    assert names(OLD.text.split("\n\n")[1], evidence) >= {"acme widget corporation"}
    assert names("Except as provided in Section 10.3, each version counts.", evidence) == set()


def test_an_older_version_naming_someone_else_is_a_conflict() -> None:
    evidence = gather(QUESTION, [NEW, OLD])
    chosen = [u for u in evidence.ranked if u.source == "charter-2.0.md" and "no one" in u.text]
    found = version_conflict(evidence, chosen[:1])
    assert found is not None
    older, near = found
    assert older.source == "charter-1.1.md" and "Acme" in older.text
    assert [u.text for u in near] == ["Widget Foundation is the charter steward."]

    answer = extract_answer(QUESTION, [OLD, NEW], japanese=False)  # the old one ranks first
    current, older_part = answer.split("⚠️")
    assert current.startswith("Widget Foundation is the charter steward. [Source: charter-2.0.md]")
    assert older_part.startswith(" An older copy (charter-1.1.md) says instead: Acme")
    assert answer_features(QUESTION, answer, [OLD, NEW]).sources_conflict is True


def test_a_version_number_or_a_renumbered_section_is_no_conflict() -> None:
    template = (
        "Guide, Version {v} › Use\n\nPermission is granted to copy this document under the "
        "Guide, Version {v} or any later version, as Section {s} explains."
    )
    new = _source("guide-1.3.md", template.format(v="1.3", s="10.3"), 10.0)
    old = _source(
        "guide-1.2.md", template.format(v="1.2", s="6.1"), 9.9, superseded_by="guide-1.3.md"
    )
    answer = extract_answer(
        "may I copy the guide under a later version?", [new, old], japanese=False
    )
    assert "⚠️" not in answer
    assert answer.startswith("Permission") and "[Source: guide-1.3.md]" in answer


def test_documents_that_are_not_versions_are_never_called_older() -> None:
    other = _source(
        "gadget-rules.md",
        "Gadget Rules › Publishing\n\nGadget Makers Guild may publish new versions of the "
        "rules from time to time.",
        9.5,
    )
    evidence = gather(QUESTION, [NEW, other])
    assert version_conflict(evidence, select(evidence)) is None
    answer = extract_answer(QUESTION, [NEW, other], japanese=False)
    assert "older copy" not in answer


def test_an_answer_only_an_older_copy_gives_says_so_and_names_the_current() -> None:
    new = _source(
        "charter-2.0.md",
        "Widget Charter, Version 2.0 › Meetings\n\nMembers meet once a year.",
        3.0,
    )
    answer = extract_answer(QUESTION, [OLD, new], japanese=False)
    assert "[Source: charter-1.1.md]" in answer.split("\n")[0]
    assert (
        "⚠️ This comes from an older copy (charter-1.1.md); the current version is "
        "charter-2.0.md." in answer
    )
    assert answer_features(QUESTION, answer, [OLD, new]).sources_conflict is True


def test_names_alike_with_other_titles_are_two_documents() -> None:
    intro_x = _source(
        "intro-2.0.md",
        "Intro › Owner\n\nBilling Team owns the intro and may publish new versions.",
        10.0,
        doc_title="Intro to billing",
    )
    intro_y = _source(
        "intro-1.0.md",
        "Intro › Owner\n\nPeople Team owns the intro and may publish new versions.",
        9.0,
        doc_title="Intro to hiring",
    )
    assert families(["intro-2.0.md", "intro-1.0.md"])["intro-1.0.md"].stale  # by name alone
    found = source_families([intro_x, intro_y])
    assert (
        not found["intro-1.0.md"].stale and found["intro-1.0.md"].key != found["intro-2.0.md"].key
    )
    answer = extract_answer(
        "who may publish new versions of the intro?", [intro_x, intro_y], japanese=False
    )
    assert "older copy" not in answer


def test_another_models_answer_from_the_current_version_still_counts_the_older_one() -> None:
    # A model that quotes the current sentence and says nothing of the older version.
    answer = (
        "Widget Foundation is the charter steward. Except as provided in Section 10.3, no one "
        "other than the charter steward has the right to publish new versions of this Charter. "
        "[Source: charter-2.0.md]"
    )
    assert answer_features(QUESTION, answer, [NEW, OLD]).sources_conflict is True
    alone = answer_features(QUESTION, answer, [NEW])
    assert alone.sources_conflict is False


def test_an_older_snapshot_with_another_release_number_is_a_conflict() -> None:
    current = _source(
        "toolchain.md",
        "Toolchain › Support\n\nThe minimum supported compiler version is 1.74 or newer.",
        10.0,
    )
    snapshot = _source(
        "toolchain_2023-01-05.md",
        "Toolchain › Requirements\n\nBuilds need at least compiler version 1.65; the build "
        "script refuses older compilers and says which minimum is supported.",
        9.0,
        superseded_by="toolchain.md",
    )
    question = "what is the minimum supported compiler version?"
    answer = extract_answer(question, [current, snapshot], japanese=False)
    assert answer.startswith("The minimum supported compiler version is 1.74 or newer.")
    assert "⚠️ An older copy (toolchain_2023-01-05.md) says instead" in answer
    assert "1.65" in answer.split("⚠️")[1]
