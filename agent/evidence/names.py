"""Proper names in a text, and names a question uses that a document never mentions."""

from __future__ import annotations

import re

from agent.evidence.scoring import Evidence
from agent.evidence.terms import stem, terms
from agent.knowledge.tokenize import normalize_text

_NAME = re.compile(r"[A-Z][\w&'’-]*(?:\s+(?:of\s+|de\s+|&\s+)?[A-Z][\w&'’-]*)*")
NOT_A_UNIT = frozenset(
    "a an and are as at be by for from in is it no not of on or the this that to with".split()
)
"""Words after a number that are no unit of measure ("Section 4.1 of this Charter")."""


MIN_ACRONYM = 2
"""An acronym has at least two letters: one capital is no name."""


def names(text: str, evidence: Evidence) -> set[str]:
    """Proper names and defined terms a text uses ("Acme Widget
    Corporation", "Widget Foundation"), lower-cased: runs of capitalised words, less
    ordinary words the passages also write in lower case and the question's own words."""
    found: set[str] = set()
    for match in _NAME.finditer(text):
        words = match.group(0).split()
        if (
            len(words) == 1
            and (
                re.match(r"\s*\d", text[match.end() :])  # "Section 7.2": a reference
                or not text[: match.start()].strip()
                or text[: match.start()].rstrip()[-1] in ".!?:;"
            )
        ):
            continue  # one capitalised word opening a sentence ("Except", "Each")
        while words and (words[0].lower() in evidence.common or words[0].lower() in NOT_A_UNIT):
            words = words[1:]
        while words and words[-1].lower() in evidence.common:
            words = words[:-1]
        if not words or all(w.lower() in evidence.common for w in words):
            continue
        if not all(stem(w.lower()) in evidence.query_tokens for w in words):
            found.add(" ".join(words).lower())
    return found


def _squash(text: str) -> str:
    return re.sub(r"[\W_]+", "", normalize_text(text).lower())


_QUESTION_NAME = re.compile(r"(?<=\s)(?:[A-Z][\w.-]*\w|[a-z]+[A-Z][\w.-]*\w)")
"""A capitalised word past the question's first ("Zephyr", "ACME", "WidgetOS", "iGadget"): a
name of the thing asked about."""
_NAME_VERSION = re.compile(r"v?\d[\d.]*$")
_CAPITAL_RUN = re.compile(r"\b[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*")


def _initials(text: str) -> set[str]:
    """Every acronym a run of capitalised words spells ("Open Widget Design Charter"
    → "owdc", "wdc", …): a question's "OWDC" names that document."""
    out: set[str] = set()
    for run in _CAPITAL_RUN.findall(text):
        letters = "".join(w[0] for w in run.split()).lower()
        for i in range(len(letters)):
            for j in range(i + MIN_ACRONYM, len(letters) + 1):
                out.add(letters[i:j])
    return out


def name_missing(query: str, document: str) -> bool:
    """Does the question name something (a capitalised word past its first: "Zephyr",
    "ACME") that the answer's document never mentions, in its words or as an acronym of
    them? Then the answer is about another thing than the one asked about, however many
    other words it shares with the question ("the Zephyr charter" answered from the Widget one)."""
    names = [n for n in _QUESTION_NAME.findall(normalize_text(query)) if len(n) > 1]
    if not names:
        return False
    words = terms(document)
    acronyms = _initials(document)
    for name in names:
        bare = _NAME_VERSION.sub("", name)
        named = terms(name)
        if not named or named & words or terms(bare) & words:
            continue
        if len(bare) >= MIN_ACRONYM and _squash(bare) in acronyms:
            continue
        return True
    return False
