# ruff: noqa: E501  (a table reads best one pattern a line)
"""The language of questions and values, as tables: language → {kind: pattern}.

Each table lists, per language, the words that name a kind of value ("how long" and
"何日" ask for a duration) or write one ("3 days", "3日"). `"any"` holds what no language
owns (digits, currency signs, paths). agent/evidence/questions.py joins every language's
row of a kind into one pattern, in `LANGUAGES` order; a new language is a new column of
rows, and tests/agent/test_evidence_patterns.py holds a made-up example that each row
must match and one it must not.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

LANGUAGES = ("any", "en", "ja")
"""Column order: patterns are tried in this order (for `sub`, the earlier wins a tie)."""

Table = Mapping[str, Mapping[str, str]]
"""language → {kind: pattern}."""

_HOW_LONG_EN = r"how long|how much (?:heads.?up|notice|time|advance)|how far ahead|how far in advance|how many (?:\w+ ){0,2}(?:days|weeks|months|years|hours|minutes)|how fast|how soon"
_WHEN_EN = r"(?:^|[,;?.!]\s*|\band\s+)when\b(?!\s+(?:i|you|we|they|he|she|someone|my|our|your|a|an|the)\b[^?]*,\s*(?:what|which|who|how|where|why|do|does|did|can|could|should|is|are|will|would)\b)|\bwhen (?:is|are|was|were|do|does|did|will|would|should|can|must|'s)\b|what date|which day|what time"
_WHEN_JA = r"いつ|何月|何日に|何時から|何時まで|時間帯"
_DEADLINE_EN = r"(?:by|until|till) when|deadline|cut-?off"
_COUNT_EN = r"how many|how old|what age"
_WHERE_EN = (
    r"\bwhere\b|which (?:tool|app|system|channel|site|platform)|what (?:tool|app|system|channel)"
)
_WHERE_JA = r"どこ|どの(?:ツール|システム|アプリ)"
"""Asking for a duration, a time, a deadline, a count, a place: shared by the topic and
the asking-words tables, which each add their own words. "When I join, what do I get?"
opens with a condition, not a question about a time."""

TOPIC_KINDS = ("percent", "quantity", "money", "duration", "deadline", "date", "count", "place")
"""`TOPIC_WORDS` kinds, the first found wins."""
TOPIC_WORDS: Table = {
    "en": {
        "percent": r"what percent|how much of|percentage",
        "quantity": r"\b(?:amount|limit|minimum|maximum|max|min|cap|threshold|lowest|highest|smallest|largest|biggest|fewest)\b",
        "money": r"how much|budget|cost|price|pay|stipend|allowance|reimburs|spend|\$",
        "duration": _HOW_LONG_EN + r"|heads.?up|notice",
        "deadline": _DEADLINE_EN + r"|due",
        "date": _WHEN_EN,
        "count": _COUNT_EN,
        "place": _WHERE_EN + r"|prefix",
    },
    "ja": {
        "percent": r"割合|何\s*[%％]|割増率|率は|何割|分配率",
        "money": r"いくら|金額|上限|費用|手当|補助|円",
        "duration": r"何日|何週|何か月|何ヶ月|何カ月|何年|何時間|何分|期間|どのくらい|どれくらい|いつまで",
        "deadline": r"期限|締め?切り?|いつまで",
        "date": _WHEN_JA + r"|タイミング",
        "count": r"何歳|何人|何回|何個|何km|何キロ|何倍|何年",
        "place": _WHERE_JA,
    },
}  # fmt: skip
"""The topic's nouns: what kind of value a question without asking words is about."""

ASKING_KINDS = (
    "percent",
    "duration",
    "money",
    "quantity",
    "deadline",
    "date",
    "count",
    "place",
    "length",
    "version",
    "name",
)
"""`ASKING_WORDS` kinds, in the order a question's kinds are listed."""
ASKING_WORDS: Table = {
    "en": {
        "percent": r"what percent|how much of|percentage",
        "duration": _HOW_LONG_EN + r"|how quickly",
        "money": r"how much(?=\s*(?:[?.!,]|$|(?:is|are|was|were|do|does|did|can|could|will|would|should|money|budget|cash|per|for|in|\$)\b))",
        "quantity": r"\bhow (?:big|large|small)\b|\bwhat size\b|\b(?:what|which) (?:[\w-]+ ){0,2}range\b|how much (?!(?:of|is|are|was|were|do|does|did|can|could|will|would|should|money|budget|cash|per|for|in|heads.?up|notice|time|advance)\b)(?=[a-z])",
        "deadline": _DEADLINE_EN,
        "date": _WHEN_EN,
        "count": _COUNT_EN,
        "place": _WHERE_EN,
        "length": r"how long\b(?!.*\b(?:take|takes|took|last|lasts|wait|keep|kept|stay|ago|before|after|until|till|notice|advance|valid|open)\b)",
        "version": r"\bversions?\b|\b(?:which|what|latest|newest|current|minimum|oldest)\s+(?:\w+\s+)?releases?\b|\breleases?\s+(?:number|version)",
        "name": r"\b(?:which|what)\s+(?:[\w-]+\s+){0,2}?(?:option|flag|switch|setting|parameter|variable)s?\b|\bwhat\s+[a-z]+_[a-z_]+\b",
    },
    "ja": {
        "percent": r"何\s*[%％]|何割|何倍",
        "duration": r"何日(?!に)|何週|何[かヶカケ]月|何時間|何分|いつまで",
        "money": r"いくら|何円",
        "deadline": r"期限|締め?切り?",
        "date": _WHEN_JA,
        "count": r"何歳|何人|何回|何個|何年",
        "place": _WHERE_JA,
        "version": r"バージョン|版数",
    },
}  # fmt: skip
"""Interrogatives only ("how much", "いつまで"): they name the value asked for more surely
than the topic's nouns do. "How long" asks for a duration, or a length when nothing in
the question is about time ("how long must a label be")."""

_NAME_ANY = (
    r"\d|(?<![\w-])--?[a-zA-Z][\w-]*|\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b|\b[\w-]+\s*=>?\s*\S"
    r"|\bC<[^>]+>|\b\w+\(\)"
)
"""How documents write the option or setting asked for ("which flag …?", "what
max_conns …?"): a figure, a flag ("--quiet", "-q"), a constant (MAX_SIZE), an assignment
("level = 2", "Fast => 1"), code marked up as such ("C<Fast>"; "I<…>" is emphasis), a call
("init()"). A plain word is no setting's name."""

VALUE_KINDS = (
    "percent",
    "money",
    "duration",
    "date",
    "deadline",
    "count",
    "quantity",
    "length",
    "version",
    "place",
    "name",
)
VALUE_WORDS: Table = {
    "any": {
        "percent": r"\d+(?:\.\d+)?\s*(?:%|％)|\b\d\.\d+\b",
        "money": r"[$€£¥]\s?\d",
        "date": r"\d{1,2}:\d\d",
        "deadline": r"\d",
        "count": r"\d",
        "quantity": r"\d",
        "version": r"\b[vV]?\d+(?:\.\d+)+\b|\bv\d+\b",
        "place": r"#[\w-]+|https?://|(?<![\w.])(?:~|\$\w+)?/[\w.-]+|@\w|\S+@\S+",
        "name": _NAME_ANY,
    },
    "en": {
        "percent": r"\d+(?:\.\d+)?\s*percent",
        "money": r"\d[\d,]*(?:\.\d+)?\s*(?:usd|dollars?|eur|yen)|\d[\d,]*\s*(?:per|a|/)\s*(?:month|year|night|day|mile)",
        "duration": r"\d+(?:\.\d+)?[\s-]*(?:business\s+|calendar\s+|working\s+)?(?:days?|weeks?|months?|years?|hours?|hrs?|minutes?|mins?)|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|twelve|sixteen|thirty|sixty)\b[\s(\d)-]*(?:business\s+)?(?:days?|weeks?|months?|years?|hours?|minutes?)",
        "date": r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d|\d+\s*(?:am|pm)|\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|week|month|quarter|year)ly?\b|\bday \d",
        "deadline": r"immediately|same day|end of",
        "count": r"\b(?:one|two|three|four|five|six|seven|eight|nine|ten)\b",
        "quantity": r"\b(?:one|two|three|four|five|six|seven|eight|nine|ten|twelve|thirty)\b",
        "length": r"\d+(?:[.,]\d+)?\s*(?:characters?|chars?|letters?|digits?|words?|pages?|lines?|slides?|mm|cm|m|km|meters?|metres?|kilomet(?:er|re)s?|inch(?:es)?|in|feet|foot|ft|miles?|px|pixels?|bytes?|kb|mb|gb)\b",
        "version": r"\bversions?\s+\d+\b",
        "place": r"\b[A-Z][a-z]+[A-Z]?\w*",
    },
    "ja": {
        "percent": r"\d+(?:\.\d+)?\s*倍|\d割",
        "money": r"\d[\d,]*(?:\.\d+)?\s*(?:円|万円)",
        "duration": r"\d+(?:\.\d+)?[\s-]*(?:日|週間?|か月|ヶ月|カ月|年|時間|分)|半年|一週間",
        "date": r"\d{1,2}月\d{1,2}日|\d+月|末日|月末|午前|午後",
        "deadline": r"末日|月末|翌|前日|当日|直ちに|速やか",
        "length": r"\d+(?:[.,]\d+)?\s*(?:文字|桁|ページ|行|枚)\b",
        "version": r"バージョン\s*\d+",
        "place": r"[ァ-ヴー]{2,}",
    },
}  # fmt: skip
"""How a value of each kind is written."""
CASE_SENSITIVE_VALUES = frozenset({"place", "name"})
"""A place may be a name, and only its capital tells a name from a word."""

UNIT_KINDS = ("hours", "minutes", "days", "weeks", "months", "years", "age", "times", "people")
UNIT_QUESTIONS: Table = {
    "en": {
        "hours": r"how many (?:\w+ )?hours",
        "minutes": r"how many (?:\w+ )?minutes",
        "days": r"how many (?:\w+ )?days",
        "weeks": r"how many (?:\w+ )?weeks",
        "months": r"how many (?:\w+ )?months",
        "years": r"how many (?:\w+ )?years",
        "age": r"how old|what age",
        "times": r"how many times|how often",
        "people": r"how many (?:\w+ )?people",
    },
    "ja": {
        "hours": r"何時間",
        "minutes": r"何分",
        "days": r"(?<!月)何日(?!に)",
        "weeks": r"何週",
        "months": r"何[かヶカケ]月",
        "years": r"何年",
        "age": r"何歳",
        "times": r"何回",
        "people": r"何人",
    },
}  # fmt: skip
"""A question naming the unit it wants ("何分", "how many hours")."""
UNIT_ANSWERS: Table = {
    "en": {
        "hours": r"\bhours?\b|\bhrs?\b",
        "minutes": r"\bminutes?\b|\bmins?\b",
        "days": r"\bdays?\b",
        "weeks": r"\bweeks?\b",
        "months": r"\bmonths?\b",
        "years": r"\byears?\b",
        "age": r"\bage\b|years? old|\d\s*(?:years?|yrs?)\b",
        "times": r"\btimes?\b|\b(?:once|twice)\b|\bevery\b|\bper\b|ly\b",
        "people": r"\bpeople\b|\bpersons?\b",
    },
    "ja": {
        "hours": r"\d\s*時間",
        "minutes": r"\d\s*分(?!の)",
        "days": r"\d\s*日",
        "weeks": r"週",
        "months": r"[かヶカケ]月",
        "years": r"\d\s*年",
        "age": r"\d\s*歳",
        "times": r"\d\s*回|毎",
        "people": r"\d\s*(?:人|名)",
    },
}  # fmt: skip
"""What an answer in that unit holds: "6時間" is no answer to "何分"."""

PERIOD_KINDS = ("week", "month", "year", "day")
"""`PERIOD_QUESTIONS` kinds, the first found wins."""
PERIOD_QUESTIONS: Table = {
    "en": {
        "week": r"per week|a week|each week|weekly",
        "month": r"per month|a month|each month|monthly",
        "year": r"per year|a year|each year|yearly|annual",
        "day": r"per day|a day|each day|daily",
    },
    "ja": {
        "week": r"週に|毎週|1週",
        "month": r"月に|毎月|1[かヶカケ]月",
        "year": r"年に|毎年|1年",
        "day": r"1日に|毎日",
    },
}  # fmt: skip
"""A question counting in a period ("週に何時間", "per month")."""
PERIOD_ANSWERS: Table = {
    "en": {"week": r"\bweek", "month": r"\bmonth", "year": r"\byear|\bannual", "day": r"\bday|\bdaily"},
    "ja": {"week": r"週", "month": r"月", "year": r"年", "day": r"日"},
}  # fmt: skip
"""A sentence naming that period."""


_SELF = r"document|file|page|section|chapter|article|list|policy|guide|handbook|agreement|license|licence|program|software|package|manual|faq|site|website"
"""Nouns a text names itself with ("this document", "this License"): no pointer to the
sentence before."""
_OPENS_WITH_POINTER_EN = (
    rf"^\W*(?:this|that|these|those|such)\b(?!\s+(?:(?-i:[A-Z])|(?:{_SELF})\b))"
)
_POINTS_BACK_EN = (
    _OPENS_WITH_POINTER_EN
    + rf"|\b(?:this|these|those|such)\s+(?!(?-i:[A-Z])|(?:{_SELF})\b)(?=[a-z])"
    + r"|\b(?:this|that|these|those)\s*[.!]?$"
)
_OPENS_WITH_POINTER_JA = r"^(?:この|これ|その(?!他|ほか)|それ(?!ぞれ)|上記|前述)"

CUE_KINDS = (
    "two_part",
    "reference",
    "default",
    "states_default",
    "statement",
    "points_back",
    "points_ahead",
    "defines",
    "asks_meaning",
    "points_elsewhere",
)
CUES: Table = {
    "any": {
        "two_part": r"\?\s*\S.*\?",
        "reference": r"\(\d+\)",
        "statement": r"\d",
        "points_ahead": r"[:：]\s*$",
    },
    "en": {
        "two_part": r"\band\b.*\b(?:how|what|which|who|where|when|why)\b|\b(?:how|what|which|who|where|when)\b.*\band (?:how|what|which|who|where|when)\b|\b\w+ (?:and|&) \w+",
        "reference": r"\b(?:section|article|category)\s+\d+",
        "default": r"\bdefaults?\b",
        "states_default": r"defaults? (?:to|is)|the default (?:is|value is)|default:",
        "statement": r"\b(?:is|are|was|were|it's|according|says|said|will|has|have|must|should|costs?|takes?|gets?|pays?|means?)\b",
        "points_back": _POINTS_BACK_EN,
        "points_ahead": r"\b(?:the following|as follows|(?<!\band )(?<!\bor )below)\s*[.:]?\s*$",
        "defines": r"^(?:(?:an?|the)\s+)?[\"“]?[^,;:\"“”]{1,60}?[\"”]?(?:\s+\([^)]{1,60}\))?\s+(?:means|shall mean|is defined as|refers to|is an?)\s",
        "asks_meaning": r"\bmean(?:s|ing|t)?\b|\bdefin|\bstand for\b|\bwhat (?:is|are) (?:an?\s+)?[\"“]|\bwhat counts as\b",
        "points_elsewhere": r"^(?:see|refer to|for (?:more|further|full) (?:details|information))\b",
    },
    "ja": {
        "two_part": r"それぞれ|ずつ|(?:何|いつ|いくら|どこ|どの).*、.*(?:何|いつ|いくら|どこ|どの)|(?:何|いつ|いくら|どこ|どの).*(?:何|いつ|いくら|どこ|どの)",
        "reference": r"第\s*\d+\s*[条項号章節]|前項",
        "default": r"デフォルト|既定|初期値",
        "statement": r"です|ます|である|でした|だよ|だ。|とのこと|によると",
        "points_back": _OPENS_WITH_POINTER_JA,
        "points_ahead": r"(?:次|以下|下記)の(?:とおり|通り|各号)[^。]*[。.]?$",
        "defines": r"^[^、。]{1,30}?とは、.*(?:をいう|のことです|を指す)",
        "asks_meaning": r"(?<!こ)とは|意味|定義",
        "points_elsewhere": r"を参照(?:のこと|してください)?[。.]?$",
    },
}  # fmt: skip
"""Cues of a sentence's or question's shape: two questions in one ("when …, and which
channel"), a reference to a section ("第12条", "Section 4"), a default value (asked for,
and stated: "defaults to 30"), a statement of fact ("it is", "です") rather than a
narrowing of the question."""


def joined(table: Table, kind: str) -> str:
    """Every language's pattern for `kind`, one alternation, in `LANGUAGES` order."""
    return "|".join(
        f"(?:{table[language][kind]})"
        for language in LANGUAGES
        if language in table and kind in table[language]
    )


def compiled(
    table: Table, kinds: Sequence[str], *, case_sensitive: frozenset[str] = frozenset()
) -> dict[str, re.Pattern[str]]:
    """{kind: one pattern over all languages}, in `kinds` order."""
    return {
        kind: re.compile(joined(table, kind), 0 if kind in case_sensitive else re.IGNORECASE)
        for kind in kinds
    }
