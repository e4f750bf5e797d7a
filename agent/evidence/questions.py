"""What kind of value a question asks for ("how long" wants a duration, "いくら" an
amount), and whether a text holds one."""

from __future__ import annotations

import re
from collections.abc import Sequence

from agent.evidence.patterns import (
    ASKING_KINDS,
    ASKING_WORDS,
    CASE_SENSITIVE_VALUES,
    CUE_KINDS,
    CUES,
    PERIOD_ANSWERS,
    PERIOD_KINDS,
    PERIOD_QUESTIONS,
    TOPIC_KINDS,
    TOPIC_WORDS,
    UNIT_ANSWERS,
    UNIT_KINDS,
    UNIT_QUESTIONS,
    VALUE_KINDS,
    VALUE_WORDS,
    compiled,
)
from agent.knowledge.tokenize import tokenize

_CUES = compiled(CUES, CUE_KINDS)
_QTYPE_PATTERNS = compiled(TOPIC_WORDS, TOPIC_KINDS)
_QTYPE_ASKS = compiled(ASKING_WORDS, ASKING_KINDS)
_NUMBER = re.compile(r"\d|[一二三四五六七八九十百千万]+(?:円|日|か月|ヶ月|年|週|時間|分|歳)")
_VALUE_PATTERNS = compiled(VALUE_WORDS, VALUE_KINDS, case_sensitive=CASE_SENSITIVE_VALUES)
_TWO_PART = _CUES["two_part"]


def question_type(query: str) -> str | None:
    """What kind of value the question wants: percent, money, duration, date, count,
    place, or None (a yes/no or open question)."""
    kinds = question_types(query)
    return kinds[0] if kinds else None


def question_types(query: str) -> tuple[str, ...]:
    """Every kind of value the question's asking words want ("何時から、何割" wants a
    time and a ratio), else the first kind its topic suggests. The asking words decide
    first: "手当の申請期限はいつまで" asks for a time limit, whatever its nouns (手当) say."""
    asked = tuple(name for name, pattern in _QTYPE_ASKS.items() if pattern.search(query))
    if asked:
        return asked
    for name, pattern in _QTYPE_PATTERNS.items():
        if pattern.search(query):
            return (name,)
    return ()


def typed_value(text: str, kinds: Sequence[str], unit: re.Pattern[str] | None = None) -> bool:
    """Does the text hold a value of one of the kinds asked for (in the unit named)?"""
    if not kinds:
        return has_value(text, None, unit)
    return any(has_value(text, kind, unit) for kind in kinds)


_REFERENCE = _CUES["reference"]


_OTHER_KINDS: dict[str, tuple[str, ...]] = {
    "money": ("duration", "percent", "date"),
    "duration": ("money", "percent"),
}
"""A bare number answers an amount or a duration only when it is not a value of another
kind: "14日以内" is a time limit, not the amount "いくら" asks for."""

_UNIT_ANSWERS = compiled(UNIT_ANSWERS, UNIT_KINDS)
_ASKED_UNITS = [
    (asked, _UNIT_ANSWERS[unit]) for unit, asked in compiled(UNIT_QUESTIONS, UNIT_KINDS).items()
]
"""When the question names the unit it wants ("何分", "how many hours"), a value in
another unit ("6時間" for "何分") is not the answer."""


def asked_unit(query: str) -> re.Pattern[str] | None:
    """The unit a question names, as a pattern its answer must hold, or None."""
    wanted = [answer.pattern for asked, answer in _ASKED_UNITS if asked.search(query)]
    if not wanted:
        return None
    # A two-part question ("何歳まで…最大何回") takes a value in either unit.
    return re.compile("|".join(f"(?:{w})" for w in wanted), re.I)


PER_PERIOD = re.compile(
    r"(?<![\d,.])1\s*(?:日|週間?|[かヶカケ]月|年)(?:の|に|あたり|当たり|につき)"
)
""""1日の作業時間" names a period ("per day"), not a number of days."""

_PERIOD_ANSWERS = compiled(PERIOD_ANSWERS, PERIOD_KINDS)
_PERIODS = [
    (asked, _PERIOD_ANSWERS[period])
    for period, asked in compiled(PERIOD_QUESTIONS, PERIOD_KINDS).items()
]
SURE_PLACE = re.compile(
    r"#[\w-]+|https?://|(?<![\w.])(?:~|\$\w+)?/[\w.-]+|@\w|[ァ-ヴー]{2,}|\S+@\S+"
)
"""A place no capitalised word can fake: a path, a link, a channel, an address."""
NAME_ONLY = 0.85
"""A unit whose only place is a capitalised word weighs this much for a "where" question."""
PERIOD_MISS = 0.8
"""A unit that does not name the period the question counts in ("月に何回" → 月) weighs
this much: "1日2回" is no answer to "per month"."""


def asked_period(query: str) -> re.Pattern[str] | None:
    """The period a question counts in ("週に", "per month"), or None."""
    for asked, answer in _PERIODS:
        if asked.search(query):
            return answer
    return None


_NOT_A_FIGURE = re.compile(r"\b[A-Za-z_][A-Za-z_-]*\d\w*", re.I)
_PRONOUN_ONE = re.compile(r"\bone\b", re.I)

_COUNTED = re.compile(r"\d+(?:[.,]\d+)*[\s-]*(?=[A-Za-z]{2})(?!(?:usd|eur|gbp|jpy|k|m)\b)", re.I)
"""A number followed by a word: a count of that thing, not a bare value."""


def has_value(text: str, qtype: str | None, unit: re.Pattern[str] | None = None) -> bool:
    if unit is not None and not unit.search(PER_PERIOD.sub(" ", _REFERENCE.sub(" ", text))):
        return False
    if qtype is None:
        return True
    text = _REFERENCE.sub(" ", text)  # "第61条" is a reference, not a value
    if qtype not in ("version", "place", "name"):
        # A digit inside a name ("SHA2", "cat5", "arm64") is no figure.
        text = _NOT_A_FIGURE.sub(" ", text)
    if qtype in ("count", "quantity"):
        # "One" is far more often a pronoun ("one of the rooms", "one should") than
        # the count asked for, which documents write as a digit.
        text = _PRONOUN_ONE.sub(" ", text)
    pattern = _VALUE_PATTERNS.get(qtype)
    if pattern is None:
        return True
    if pattern.search(text):
        return True
    # An amount, a duration or a count is still a number: "$450" answers "the limit".
    if qtype not in ("money", "duration", "count"):
        return False
    for other in _OTHER_KINDS.get(qtype, ()):
        text = _VALUE_PATTERNS[other].sub(" ", text)
    if qtype != "count":
        # A number that counts something else ("a 4-seat table", "2 monitors") is
        # neither an amount nor a duration.
        text = _COUNTED.sub(" ", text)
    return bool(_NUMBER.search(text))


def is_two_part(query: str) -> bool:
    return bool(_TWO_PART.search(query))


def focus_question(query: str, user_inputs: Sequence[str]) -> str:
    """The question as the person now means it. A reply that restates the whole question
    with more said ("What is the latest version of X?" for "what is the latest version?",
    as a clarifying option reads) replaces it: joined to the vague original it would read
    as a second question, and the answer would also address what the person ruled out.
    Other replies (a bare "X", a fact) are added to the question."""
    focus = query
    added: list[str] = []
    for reply in user_inputs:
        if restates(focus, reply):
            focus = reply.strip()
        elif reply.strip():
            added.append(reply.strip())
    return " ".join([focus, *added])


def restates(question: str, reply: str) -> bool:
    """Whether `reply` holds every content word of `question` and says more."""
    asked = set(tokenize(question))
    said = set(tokenize(reply))
    return bool(asked) and asked < said
