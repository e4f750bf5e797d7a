"""No rule keyed to an eval data set (issue 18): no expected answer of any case file, in
the repository or in the shared dev sets, may appear in the code of `agent/`.

Comments and docstrings are left out (they may explain with made-up examples); string
literals count, because a pattern is a string. Answers shorter than 8 characters (4 for
Japanese and other CJK text) are too ordinary to be a tell ("3 days", "Slack")."""

from __future__ import annotations

import ast
import io
import json
import tokenize
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CASE_DIRS = (REPO / "tests" / "eval", REPO.parent / "shared" / "devsets")
"""The repository's case files and the shared dev sets beside the checkout."""
ANSWER_FIELDS = ("expect_any", "expect_all", "current")
MIN_CHARS = 8
"""Shorter Latin answers ("10 MB", "yank") are ordinary words any rule may hold."""
MIN_CJK_CHARS = 4
"""A CJK character carries about a word: four of them are already a phrase."""


def _is_cjk(text: str) -> bool:
    return any(unicodedata.name(ch, "").startswith(("CJK", "HIRAGANA", "KATAKANA")) for ch in text)


def _answers(case: dict[str, object]) -> Iterator[str]:
    for field in ANSWER_FIELDS:
        value = case.get(field)
        values = value if isinstance(value, list) else [value]
        yield from (v for v in values if isinstance(v, str))


def expected_answers() -> dict[str, str]:
    """{answer lower-cased: the case file it comes from}, long enough to be a tell."""
    found: dict[str, str] = {}
    for root in CASE_DIRS:
        for path in sorted(root.rglob("*.jsonl")) if root.is_dir() else []:
            for line in path.read_text(encoding="utf-8").splitlines():
                if not line.strip():
                    continue
                for answer in _answers(json.loads(line)):
                    text = answer.strip()
                    if len(text) >= (MIN_CJK_CHARS if _is_cjk(text) else MIN_CHARS):
                        found.setdefault(text.casefold(), str(path))
    return found


def _docstring_positions(tree: ast.AST) -> set[tuple[int, int]]:
    """(line, column) of every docstring: a module's, a class's, a function's, and the
    bare string after an assignment that documents it."""
    out: set[tuple[int, int]] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        for stmt in body:
            if (
                isinstance(stmt, ast.Expr)
                and isinstance(stmt.value, ast.Constant)
                and isinstance(stmt.value.value, str)
            ):
                out.add((stmt.lineno, stmt.col_offset))
    return out


def code_text(source: str) -> str:
    """The source without comments and docstrings: names, operators and string literals."""
    docstrings = _docstring_positions(ast.parse(source))
    kept: list[str] = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            continue
        if token.type == tokenize.STRING and token.start in docstrings:
            continue
        if token.type in (tokenize.NAME, tokenize.OP, tokenize.NUMBER, tokenize.STRING):
            kept.append(token.string)
        elif token.type == getattr(tokenize, "FSTRING_MIDDLE", -1):
            kept.append(token.string)
    return "\n".join(kept)


def agent_code() -> dict[str, str]:
    return {
        str(path.relative_to(REPO)): code_text(path.read_text(encoding="utf-8")).casefold()
        for path in sorted((REPO / "agent").rglob("*.py"))
    }


def test_the_case_files_are_found() -> None:
    answers = expected_answers()
    # The repository's own sets are always there; the shared ones when checked out beside it.
    assert any("devset-docs" in source for source in answers.values())
    assert any("heldout" in source for source in answers.values())


def test_code_text_drops_comments_and_docstrings_but_keeps_literals() -> None:
    source = (
        '"""Module text: secret one."""\n'
        "X = 1  # secret two\n"
        '"""Documents X: secret three."""\n'
        "def f() -> str:\n"
        '    """secret four"""\n'
        '    return "secret five"\n'
    )
    code = code_text(source)
    assert "secret five" in code
    for hidden in ("secret one", "secret two", "secret three", "secret four"):
        assert hidden not in code


def test_no_expected_answer_in_agent_code() -> None:
    answers = expected_answers()
    code = agent_code()
    hits = [
        f"{path}: {answer!r} (from {source})"
        for answer, source in answers.items()
        for path, text in code.items()
        if answer in text
    ]
    if hits:
        pytest.fail("expected answers of eval cases in agent/ code:\n" + "\n".join(hits))
