# ruff: noqa: E501  (the question-type and value tables read best one pattern a line)
"""What kind of value a question asks for ("how long" wants a duration, "いくら" an
amount), and whether a text holds one."""

from __future__ import annotations

import re
from collections.abc import Sequence

# ---------------------------------------------------------------- question types

_HOW_LONG = r"how long|how much (?:heads.?up|notice|time|advance)|how far ahead|how far in advance|how many (?:\w+ ){0,2}(?:days|weeks|months|years|hours|minutes)|how fast|how soon"
_WHEN = r"(?:^|[,;?.!]\s*|\band\s+)when\b|\bwhen (?:is|are|was|were|do|does|did|will|would|should|can|must|'s)\b|what date|which day|what time|いつ|何月|何日に|何時から|何時まで|時間帯"
_WHERE = r"\bwhere\b|which (?:tool|app|system|channel|site|platform)|what (?:tool|app|system|channel)|どこ|どの(?:ツール|システム|アプリ)"
"""Asking for a duration, a time, a place: shared by the topic table and the asking-words
table below, which each add their own words."""

_QTYPE_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("percent", re.compile(r"what percent|how much of|percentage|割合|何\s*[%％]|割増率|率は|何割|分配率", re.I)),
    ("quantity", re.compile(r"\b(?:amount|limit|minimum|maximum|max|min|cap|threshold|lowest|highest|smallest|largest|biggest|fewest)\b", re.I)),
    ("money", re.compile(r"how much|budget|cost|price|pay|stipend|allowance|reimburs|spend|\$|いくら|金額|上限|費用|手当|補助|円", re.I)),
    ("duration", re.compile(_HOW_LONG + r"|heads.?up|notice|何日|何週|何か月|何ヶ月|何カ月|何年|何時間|何分|期間|どのくらい|どれくらい|いつまで", re.I)),
    ("deadline", re.compile(r"deadline|cut-?off|by when|due|期限|締め?切り?|いつまで", re.I)),
    ("date", re.compile(_WHEN + r"|タイミング", re.I)),
    ("count", re.compile(r"how many|how old|what age|何歳|何人|何回|何個|何km|何キロ|何倍|何年", re.I)),
    ("place", re.compile(_WHERE + r"|prefix", re.I)),
]  # fmt: skip
_QTYPE_ASKS: list[tuple[str, re.Pattern[str]]] = [
    ("percent", re.compile(r"what percent|how much of|percentage|何\s*[%％]|何割|何倍", re.I)),
    ("duration", re.compile(_HOW_LONG + r"|how quickly|何日(?!に)|何週|何[かヶカケ]月|何時間|何分|いつまで", re.I)),
    ("money", re.compile(r"how much(?=\s*(?:[?.!,]|$|(?:is|are|was|were|do|does|did|can|could|will|would|should|money|budget|cash|per|for|in|\$)\b))|いくら|何円", re.I)),
    ("quantity", re.compile(r"\bhow (?:big|large|small)\b|\bwhat size\b|how much (?!(?:of|is|are|was|were|do|does|did|can|could|will|would|should|money|budget|cash|per|for|in|heads.?up|notice|time|advance)\b)(?=[a-z])", re.I)),
    ("deadline", re.compile(r"by when|deadline|cut-?off|期限|締め?切り?", re.I)),
    ("date", re.compile(_WHEN, re.I)),
    ("count", re.compile(r"how many|how old|what age|何歳|何人|何回|何個|何年", re.I)),
    ("place", re.compile(_WHERE, re.I)),
    ("length", re.compile(r"how long\b(?!.*\b(?:take|takes|took|last|lasts|wait|keep|kept|stay|ago|before|after|until|till|notice|advance|valid|open)\b)", re.I)),
    ("version", re.compile(r"\bversions?\b|\b(?:which|what|latest|newest|current|minimum|oldest)\s+(?:\w+\s+)?releases?\b|\breleases?\s+(?:number|version)|バージョン|版数", re.I)),
]  # fmt: skip
"""Interrogatives only ("how much", "いつまで"): they name the value asked for more surely
than the topic's nouns in `_QTYPE_PATTERNS` do. "How long" asks for a duration, or a
length when nothing in the question is about time ("how long must my password be")."""
_NUMBER = re.compile(r"\d|[一二三四五六七八九十百千万]+(?:円|日|か月|ヶ月|年|週|時間|分|歳)")
_VALUE_PATTERNS: dict[str, re.Pattern[str]] = {
    "percent": re.compile(r"\d+(?:\.\d+)?\s*(?:%|％|percent)|\d+(?:\.\d+)?\s*倍|\d割|\b\d\.\d+\b", re.I),
    "money": re.compile(r"[$€£¥]\s?\d|\d[\d,]*(?:\.\d+)?\s*(?:円|万円|usd|dollars?|eur|yen)|\d[\d,]*\s*(?:per|a|/)\s*(?:month|year|night|day|mile)", re.I),
    "duration": re.compile(r"\d+(?:\.\d+)?[\s-]*(?:business\s+|calendar\s+|working\s+)?(?:days?|weeks?|months?|years?|hours?|hrs?|minutes?|mins?|日|週間?|か月|ヶ月|カ月|年|時間|分)|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|twelve|sixteen|thirty|sixty)\b[\s(\d)-]*(?:business\s+)?(?:days?|weeks?|months?|years?|hours?|minutes?)|半年|一週間", re.I),
    "date": re.compile(r"\d{1,2}月\d{1,2}日|\d+月|末日|月末|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d|\d{1,2}:\d\d|\d+\s*(?:am|pm)|午前|午後|\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|week|month|quarter|year)ly?\b|\bday \d", re.I),
    "deadline": re.compile(r"\d|末日|月末|翌|前日|当日|直ちに|速やか|immediately|same day|end of", re.I),
    "count": re.compile(r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten)\b", re.I),
    "quantity": re.compile(r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|twelve|thirty)\b", re.I),
    "length": re.compile(r"\d+(?:[.,]\d+)?\s*(?:characters?|chars?|letters?|digits?|words?|pages?|lines?|slides?|mm|cm|m|km|meters?|metres?|kilomet(?:er|re)s?|inch(?:es)?|in|feet|foot|ft|miles?|px|pixels?|bytes?|kb|mb|gb|文字|桁|ページ|行|枚)\b", re.I),
    "version": re.compile(r"\b[vV]?\d+(?:\.\d+)+\b|\bv\d+\b|\bversions?\s+\d+\b|バージョン\s*\d+", re.I),
    "place": re.compile(r"#[\w-]+|https?://|(?<![\w.])(?:~|\$\w+)?/[\w.-]+|\b[A-Z][a-z]+[A-Z]?\w*|@\w|[ァ-ヴー]{2,}|\S+@\S+"),
}  # fmt: skip
_TWO_PART = re.compile(
    r"\?\s*\S.*\?|\band\b.*\b(?:how|what|which|who|where|when|why)\b|"
    r"\b(?:how|what|which|who|where|when)\b.*\band (?:how|what|which|who|where|when)\b|"
    r"\b\w+ (?:and|&) \w+|それぞれ|ずつ|(?:何|いつ|いくら|どこ|どの).*、.*(?:何|いつ|いくら|どこ|どの)|"
    r"(?:何|いつ|いくら|どこ|どの).*(?:何|いつ|いくら|どこ|どの)",
    re.I,
)


def question_type(query: str) -> str | None:
    """What kind of value the question wants: percent, money, duration, date, count,
    place, or None (a yes/no or open question)."""
    kinds = question_types(query)
    return kinds[0] if kinds else None


def question_types(query: str) -> tuple[str, ...]:
    """Every kind of value the question's asking words want ("何時から、何割" wants a
    time and a ratio), else the first kind its topic suggests. The asking words decide
    first: "手当の申請期限はいつまで" asks for a time limit, whatever its nouns (手当) say."""
    asked = tuple(name for name, pattern in _QTYPE_ASKS if pattern.search(query))
    if asked:
        return asked
    for name, pattern in _QTYPE_PATTERNS:
        if pattern.search(query):
            return (name,)
    return ()


def typed_value(text: str, kinds: Sequence[str], unit: re.Pattern[str] | None = None) -> bool:
    """Does the text hold a value of one of the kinds asked for (in the unit named)?"""
    if not kinds:
        return has_value(text, None, unit)
    return any(has_value(text, kind, unit) for kind in kinds)


_REFERENCE = re.compile(
    r"第\s*\d+\s*[条項号章節]|前項|\(\d+\)|\b(?:section|article|category)\s+\d+", re.I
)


_OTHER_KINDS: dict[str, tuple[str, ...]] = {
    "money": ("duration", "percent", "date"),
    "duration": ("money", "percent"),
}
"""A bare number answers an amount or a duration only when it is not a value of another
kind: "14日以内" is a time limit, not the amount "いくら" asks for."""

_ASKED_UNITS: list[tuple[re.Pattern[str], re.Pattern[str]]] = [
    (re.compile(r"何時間|how many (?:\w+ )?hours", re.I), re.compile(r"\d\s*時間|\bhours?\b|\bhrs?\b", re.I)),
    (re.compile(r"何分|how many (?:\w+ )?minutes", re.I), re.compile(r"\d\s*分(?!の)|\bminutes?\b|\bmins?\b", re.I)),
    (re.compile(r"(?<!月)何日(?!に)|how many (?:\w+ )?days", re.I), re.compile(r"\d\s*日|\bdays?\b", re.I)),
    (re.compile(r"何週|how many (?:\w+ )?weeks", re.I), re.compile(r"週|\bweeks?\b", re.I)),
    (re.compile(r"何[かヶカケ]月|how many (?:\w+ )?months", re.I), re.compile(r"[かヶカケ]月|\bmonths?\b", re.I)),
    (re.compile(r"何年|how many (?:\w+ )?years", re.I), re.compile(r"\d\s*年|\byears?\b", re.I)),
    (re.compile(r"何歳|how old|what age", re.I), re.compile(r"\d\s*歳|\bage\b|years? old|\d\s*(?:years?|yrs?)\b", re.I)),
    (re.compile(r"何回|how many times|how often", re.I), re.compile(r"\d\s*回|\btimes?\b|\b(?:once|twice)\b|毎|\bevery\b|\bper\b|ly\b", re.I)),
    (re.compile(r"何人|how many (?:\w+ )?people", re.I), re.compile(r"\d\s*(?:人|名)|\bpeople\b|\bpersons?\b", re.I)),
]  # fmt: skip
"""When the question names the unit it wants ("何分", "how many hours"), a value in
another unit ("6時間" for "何分") is not the answer."""


def asked_unit(query: str) -> re.Pattern[str] | None:
    """The unit a question names, as a pattern its answer must hold, or None."""
    wanted = [answer.pattern for asked, answer in _ASKED_UNITS if asked.search(query)]
    if not wanted:
        return None
    # A two-part question ("何歳まで…最大何回") takes a value in either unit.
    return re.compile("|".join(f"(?:{w})" for w in wanted), re.I)


_PER_PERIOD = re.compile(
    r"(?<![\d,.])1\s*(?:日|週間?|[かヶカケ]月|年)(?:の|に|あたり|当たり|につき)"
)
""""1日の作業時間" names a period ("per day"), not a number of days."""

_PERIODS: list[tuple[re.Pattern[str], re.Pattern[str]]] = [
    (re.compile(r"週に|毎週|1週|per week|a week|each week|weekly", re.I), re.compile(r"週|\bweek", re.I)),
    (re.compile(r"月に|毎月|1[かヶカケ]月|per month|a month|each month|monthly", re.I), re.compile(r"月|\bmonth", re.I)),
    (re.compile(r"年に|毎年|1年|per year|a year|each year|yearly|annual", re.I), re.compile(r"年|\byear|\bannual", re.I)),
    (re.compile(r"1日に|毎日|per day|a day|each day|daily", re.I), re.compile(r"日|\bday|\bdaily", re.I)),
]  # fmt: skip
_SURE_PLACE = re.compile(
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
    if unit is not None and not unit.search(_PER_PERIOD.sub(" ", _REFERENCE.sub(" ", text))):
        return False
    if qtype is None:
        return True
    text = _REFERENCE.sub(" ", text)  # "第61条" is a reference, not a value
    if qtype not in ("version", "place"):
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
