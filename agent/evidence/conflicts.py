"""Whether the passages disagree with the answer: another document's figure for the
same thing, or an older version of the answer's document that says something else."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence

from agent.evidence.names import NOT_A_UNIT, names
from agent.evidence.scoring import MIN_ANSWER_COVERAGE, Evidence, Unit
from agent.evidence.terms import NUMBER_WORDS
from agent.knowledge.tokenize import normalize_text, tokenize
from agent.knowledge.versions import version_in

CONFLICT_MARK = "⚠️"
"""How an answer says its sources disagree or that it rests on an older copy (the offline
model opens such a note with it)."""


SAME_SENTENCE = 0.5
"""Two versions' sentences sharing this share of their words (figures aside) are one
sentence, changed or not."""
PLURAL_AFTER = 3
"""A unit word longer than this loses a final "s" ("days" → "day"); "hrs" keeps it."""
RIVAL_FLOOR = 0.4
"""Another document's sentence scoring below this share of the answer's is no rival."""
NEAR_ANSWER = 2
"""How many units either side of the answer may hold the name its current version uses."""
QUOTABLE_WORDS = 4
"""A sentence has at least this many words; fewer is a heading trail or a label."""
_WORD = re.compile(r"[^\W\d_]{2,}")


def states_conflict(answer: str) -> bool:
    """Does the answer itself say that its sources disagree?"""
    return CONFLICT_MARK in answer


# ---------------------------------------------------------------- conflicts


def _shape(text: str) -> frozenset[str]:
    return frozenset(t for t in tokenize(text) if not any(ch.isdigit() for ch in t))


def changed_copy(evidence: Evidence, unit: Unit) -> Unit | None:
    """The stale copy's version of `unit` when it says something different: the same
    sentence shape (most words shared) with other figures or names."""
    family = evidence.family[unit.source]
    best: tuple[float, Unit] | None = None
    for other in evidence.units:
        if other.source == unit.source:
            continue
        if evidence.family[other.source].key != family.key:
            continue
        a, b = _shape(unit.text), _shape(other.text)
        if not a or not b:
            continue
        jaccard = len(a & b) / len(a | b)
        if jaccard >= SAME_SENTENCE and (best is None or jaccard > best[0]):
            best = (jaccard, other)
    if best is None:
        return None
    other = best[1]
    if _comparable(other) == _comparable(unit):
        return None  # "…Charter 1.2 … (Section 4.1)" beside "…Charter 1.3 … (Section 7.2)"
    return other


def _comparable(unit: Unit) -> str:
    """What a sentence says once its document's own version number and its section
    references are blanked: versions name themselves and renumber their sections."""
    return _norm(_REFERENCE_NUMBER.sub(" ", _own_version_masked(unit)))


def _own_version_masked(unit: Unit) -> str:
    """The unit's text with its own document's version number ("1.2" in a passage of
    `charter-1.2.md`) blanked: that versions name themselves differently is no conflict."""
    version = version_in(unit.source)
    if version is None:
        return unit.text
    number = re.escape(".".join(str(n) for n in version))
    return re.sub(rf"(?<![\d.]){number}(?![\d]|\.\d)", " ", unit.text)


def _norm(text: str) -> str:
    return re.sub(r"\W+", "", text.lower())


_FIGURE = re.compile(
    r"(\d[\d,]*(?:\.\d+)?)\s*(%|％|percent|円|万円|[a-z]+|日|週間?|か月|ヶ月|カ月|年|時間|分|歳|倍|km)",
    re.I,
)


def figures(text: str) -> dict[str, set[str]]:
    """{unit: numbers} a text states ("3 days" → {"day": {"3"}})."""
    found: dict[str, set[str]] = defaultdict(set)
    spelled = re.sub(
        r"\b(one|" + "|".join(NUMBER_WORDS) + r")\b",
        lambda m: NUMBER_WORDS.get(m.group(1).lower(), "1"),
        normalize_text(text),
        flags=re.IGNORECASE,
    )
    for number, unit in _FIGURE.findall(spelled):
        key = unit.lower()
        key = key[:-1] if key.endswith("s") and len(key) > PLURAL_AFTER else key
        found[key].add(number.replace(",", ""))
    return found


SAME_TOPIC = 0.25
"""Two sentences compare figures only when this share of their words is shared."""


def _similar_shape(a: str, b: str) -> float:
    x, y = _shape(a), _shape(b)
    return len(x & y) / len(x | y) if x and y else 0.0


def figure_conflict(evidence: Evidence, chosen: Sequence[Unit]) -> Unit | None:
    """A unit from another document, about the same thing as the answer, whose figure
    for the same unit of measure differs ("3 days a week" vs "1 day a week")."""
    if not chosen:
        return None
    best = chosen[0]
    mine = figures(" ".join(u.text for u in chosen))
    if not mine:
        return None
    families_chosen = {evidence.family[u.source].key for u in chosen}
    for other in evidence.ranked:
        if other.score < RIVAL_FLOOR * best.score:
            break
        if evidence.family[other.source].key in families_chosen:
            continue
        if _similar_shape(best.text, other.text) < SAME_TOPIC:
            continue  # "15 days a year from home" is no rival to "refunded in 5 days"
        theirs = figures(other.text)
        for key, numbers in theirs.items():
            if key in mine and numbers.isdisjoint(mine[key]):
                return other
    return None


OLDER_RIVAL = 0.5
"""An older version's sentence is weighed against the answer when it scores at least
this share of the answer's best unit: it is then an answer to the same question."""

_REFERENCE_NUMBER = re.compile(
    r"\b(?:sections?|articles?|clauses?|chapters?|parts?|exhibits?|appendix|§)\s*\d+(?:\.\d+)*",
    re.I,
)
"""'Section 7.2': where a rule sits, renumbered between versions; no value of it."""


_RELEASE = re.compile(r"(?<![\w.])v?(\d+\.\d+(?:\.\d+)*)(?!\w|\.\d)")


def _measured(text: str, *, releases: bool = False) -> dict[str, set[str]]:
    """Figures by unit; with `releases`, release numbers too ("1.70": the version asked)."""
    text = _REFERENCE_NUMBER.sub(" ", text)
    found = {k: v for k, v in figures(text).items() if k not in NOT_A_UNIT}
    numbers = set(_RELEASE.findall(text)) if releases else set()
    if numbers:
        found["#release"] = numbers
    return found


def version_conflict(evidence: Evidence, chosen: Sequence[Unit]) -> tuple[Unit, list[Unit]] | None:
    """When the passages hold an older version of the answer's document and its best
    sentence for the question says something else — another figure for the same unit, or
    a name the current version does not use while the current one names another
    ("Acme Widget Corporation … may publish new versions" against "Widget Foundation is
    the charter steward") — that older sentence, and the current version's sentences near the
    answer that hold its own name (to quote with the answer). Documents that are not
    versions of one another are never compared here."""
    if not chosen:
        return None
    best = chosen[0]
    key = evidence.family[best.source].key
    members = {u.source for u in evidence.units if evidence.family[u.source].key == key}
    stale = {m for m in members if evidence.family[m].stale}
    mine = [u for u in chosen if u.source in members - stale]
    if not stale or not mine:
        return None
    older = next(
        (u for u in evidence.ranked if u.source in stale and _quotable(u)),
        None,
    )
    if (
        older is None
        or older.score < OLDER_RIVAL * best.score
        or older.coverage < MIN_ANSWER_COVERAGE
    ):
        return None
    old_text = _own_version_masked(older)
    current_text = " ".join(_own_version_masked(u) for u in mine)
    releases = "version" in evidence.kinds
    theirs = _measured(old_text, releases=releases)
    ours = _measured(current_text, releases=releases)
    if any(k in ours and numbers.isdisjoint(ours[k]) for k, numbers in theirs.items()):
        return older, []
    current_all = " ".join(u.text for u in evidence.units if u.source in members - stale).lower()
    stale_all = " ".join(u.text for u in evidence.units if u.source in stale).lower()
    gone = {n for n in names(old_text, evidence) if n not in current_all}
    if not gone:
        return None
    near = [
        u
        for u in evidence.units
        if any(u.rank == m.rank and abs(u.order - m.order) <= NEAR_ANSWER for m in mine)
        and _quotable(u)
    ]
    extra: list[Unit] = []
    for unit in sorted(near, key=lambda u: min(abs(u.order - m.order) for m in mine)):
        if any(n not in stale_all for n in names(_own_version_masked(unit), evidence)):
            if unit not in mine:
                extra.append(unit)
            return older, extra[:1]
    return None


def versions_disagree(evidence: Evidence, quoted: Sequence[Unit]) -> bool:
    """Whether the quoted answer has an older version among the passages that says
    something else (for any model's answer, which may not say so itself)."""
    if not quoted:
        return False
    current = sorted(
        (u for u in quoted if not evidence.family[u.source].stale), key=lambda u: -u.score
    )
    if not current:  # only an older copy is quoted: is its current version there too?
        keys = {evidence.family[u.source].key for u in quoted}
        return any(f.key in keys and not f.stale for f in evidence.family.values())
    for unit in current:
        older = changed_copy(evidence, unit)
        if older is not None and evidence.family[older.source].stale:
            return True
    return version_conflict(evidence, current) is not None


def _quotable(unit: Unit) -> bool:
    """A sentence, not a heading trail ("Widget Charter › 6.")."""
    return " › " not in unit.text and len(_WORD.findall(unit.text)) >= QUOTABLE_WORDS
