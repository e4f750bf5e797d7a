"""Case files: what is accepted, and bad files refused with the line and the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.evaluation import CaseFileError, CaseKind, load_cases, parse_cases

DATA = Path(__file__).parent / "data"


def line(**fields: object) -> str:
    return json.dumps(fields, ensure_ascii=False)


def test_the_fixture_loads_with_every_kind() -> None:
    cases = load_cases(DATA / "cases.jsonl")
    assert len(cases) == 8
    assert {c.kind for c in cases} == set(CaseKind)
    assert cases[0].id == "t-a01" and cases[0].source == ["travel.md"]


def test_blank_and_comment_lines_are_skipped_and_expected_strings_follow_the_kind() -> None:
    text = "\n".join(
        [
            "# a comment",
            line(id="a", kind="answerable", q="q1", expect_any=["x", "y"]),
            "   ",
            line(id="m", kind="multi", q="q2", expect_all=["x", "y"]),
            line(id="c", kind="contradictory", q="q3", expect_any=["old", "new"], current="new"),
            line(id="u", kind="unanswerable", q="q4", unknown_field=1),
        ]
    )
    cases = parse_cases(text)
    assert [c.id for c in cases] == ["a", "m", "c", "u"]
    assert [c.expected for c in cases] == [["x", "y"], ["x", "y"], ["new"], []]


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("{not json", "line 2: not valid JSON"),
        ("[1, 2]", "line 2: expected a JSON object"),
        (line(id="b", kind="answerable", expect_any=["x"]), "line 2: q: missing"),
        (
            line(id="b", kind="sometimes", q="q", expect_any=["x"]),
            "line 2: kind: 'sometimes' is not one of answerable, multi, unanswerable",
        ),
        (line(id="b", kind="answerable", q="q"), "line 2: expect_any: an answerable case needs"),
        (line(id="b", kind="multi", q="q", expect_any=["x"]), "line 2: expect_all: a multi case"),
        (line(id="b", kind="answerable", q="q", expect_any="x"), "line 2: expect_any: "),
        (line(id="a", kind="unanswerable", q="q"), "line 2: id: 'a' is already used on line 1"),
        (line(id="b", kind="unanswerable", q="   "), "line 2: q: must not be blank"),
    ],
)
def test_a_bad_line_names_its_line_and_field(bad: str, message: str) -> None:
    text = line(id="a", kind="unanswerable", q="fine") + "\n" + bad + "\n"
    with pytest.raises(CaseFileError) as caught:
        parse_cases(text, name="cases.jsonl")
    assert str(caught.value).startswith("cases.jsonl "), caught.value
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_an_empty_or_missing_file_is_refused(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n", encoding="utf-8")
    with pytest.raises(CaseFileError, match="no cases"):
        load_cases(empty)
    with pytest.raises(CaseFileError, match="no such file"):
        load_cases(tmp_path / "missing.jsonl")
