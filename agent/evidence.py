# ruff: noqa: E501  (the question-type and value tables read best one pattern a line)
"""Which sentence of the retrieved passages holds the answer, and how sure we can be.

Shared by the offline model (which quotes the best units as its answer) and the
confidence scorer (which reads the same evidence for any model's answer):

- a passage is cut into *units*: sentences, list items, and table rows carrying their
  header, each with its context (the heading trail and the line that introduces a list);
- units are scored against the question by IDF-weighted overlap of content words (the
  IDF is taken over the candidate units, so words every candidate shares weigh little),
  times a cue for the kind of value the question asks for ("how long" wants a duration,
  "いくら" an amount);
- documents are grouped into families, so a stale copy of a page (`policy_2022-12-19.md`
  next to `policy.md`) counts as the same document, and the current one is known.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

from agent.knowledge.tokenize import contains_japanese, normalize_text, tokenize
from agent.knowledge.versions import title_key, version_in
from agent.schemas import Source

PASSAGE_PRIOR = 0.5
"""A unit's score is its coverage × (PASSAGE_PRIOR + the rest × its passage's search score
relative to the best passage): the search ranked whole passages with the collection's
real IDF, which the candidates alone cannot know."""
PASSAGE_BLEND = 0.3
"""A unit's score leans this much (geometric) on how much of the question its whole
passage covers: a sentence from the page about the topic beats a stray match."""
BLOCK_BLEND = 0.2
"""A unit's score leans this much (geometric) on how much of the question the sentences
around it in its paragraph cover: "Defaults to 0700." answers with the sentence before
it ("The permissions mode for home directories …"), sharing none of its words."""
BLOCK_REACH = 2
"""How many sentences either side, in the same paragraph or item, count as around it."""
BLOCK_VALUE = 0.8
"""A sentence without the kind of value asked for weighs this much when a sentence around
it holds one (it is quoted with it), instead of 0.55."""
IDF_FLOOR = 0.5
SHORT_WORD = 0.4
"""A one-character Japanese word ("後", "日") says little about the topic."""
PHRASE_BONUS = 0.3
"""A figure of the question found verbatim in a unit ("3月21日", "$2,000") lifts it."""
CONTEXT_WEIGHT = 0.6
"""A query word found only in a unit's heading or lead-in counts this much."""
NEIGHBOUR_UNITS = 3
"""How far (in units of the same passage) a figure may sit from the sentence naming the
topic when that sentence holds none of the kind asked for."""

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(*_\[$#])|(?<=[。！？])")
_INLINE_ITEM = re.compile(r"(?<!\d)\s+[-•*]\s+(?=\S)")
_ITEM_PREFIX = re.compile(r"^\s*(?:[-*•+](?=\s)|\d+[.)]|[(（]\d+[)）]|[QA][:：])\s*")
_TABLE_SEPARATOR = re.compile(r"^\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?$")
_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|$)", re.S)
_MARKUP = re.compile(r"\*\*|__|`|\[([^\]]*)\]\([^)]*\)")
_STALE_SUFFIX = re.compile(
    r"^(?P<stem>.+?)[ _\-]+(?P<tag>(?:19|20)\d\d(?:[-_.]?\d\d){0,2}|v\d+(?:\.\d+)*|old|"
    r"(?:[a-z]+[-_ ]?)?v?\d+(?:\.\d+)+|"
    r"archive[d]?|backup|copy|draft|previous|旧版?|(?:令和|平成|昭和)\S*?年版?|\d+年版?)$",
    re.IGNORECASE,
)
_VERSION_IN_NAME = re.compile(r"\d+(?:\.\d+)+")
_DATE_IN_NAME = re.compile(r"((?:19|20)\d\d)[-_.]?(\d\d)?[-_.]?(\d\d)?")

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
    "percent": re.compile(r"\d+(?:\.\d+)?\s*(?:%|％|percent)|\d+(?:\.\d+)?\s*倍|\d割|\b\d\.\d+\b|full premium", re.I),
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
    """Every kind of value the question's asking words want ("どの時間帯で、何倍" wants a
    time and a ratio), else the first kind its topic suggests. The asking words decide
    first: "補助の申請期限はいつまで" asks for a time limit, whatever its nouns (補助) say."""
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
kind: "30日以内" is a time limit, not the amount "いくら" asks for."""

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
    # A two-part question ("何年まで…最大何日") takes a value in either unit.
    return re.compile("|".join(f"(?:{w})" for w in wanted), re.I)


_PER_PERIOD = re.compile(
    r"(?<![\d,.])1\s*(?:日|週間?|[かヶカケ]月|年)(?:の|に|あたり|当たり|につき)"
)
""""1日の労働時間" names a period ("per day"), not a number of days."""

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
"""A unit that does not name the period the question counts in ("週に何時間" → 週) weighs
this much: "1日6時間" is no answer to "per week"."""


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
        # A digit inside a name ("MD5", "ip6", "x86_64") is no figure.
        text = _NOT_A_FIGURE.sub(" ", text)
    if qtype in ("count", "quantity"):
        # "One" is far more often a pronoun ("one of the domains", "one must") than
        # the count asked for, which documents write as a digit.
        text = _PRONOUN_ONE.sub(" ", text)
    pattern = _VALUE_PATTERNS.get(qtype)
    if pattern is None:
        return True
    if pattern.search(text):
        return True
    # An amount, a duration or a count is still a number: "$300" answers "the limit".
    if qtype not in ("money", "duration", "count"):
        return False
    for other in _OTHER_KINDS.get(qtype, ()):
        text = _VALUE_PATTERNS[other].sub(" ", text)
    if qtype != "count":
        # A number that counts something else ("a 3-person meeting", "2 laptops") is
        # neither an amount nor a duration.
        text = _COUNTED.sub(" ", text)
    return bool(_NUMBER.search(text))


def is_two_part(query: str) -> bool:
    return bool(_TWO_PART.search(query))


# ---------------------------------------------------------------- documents


@dataclass(frozen=True)
class Family:
    """The current name of a document and whether a given source is an older copy."""

    key: str
    stale: bool


def families(names: Sequence[str]) -> dict[str, Family]:
    """Group sources that are versions of one document (`x.md`, `x_2022-12-19.md`,
    `x_令和2年版.md`). The copy without a version tag is current; among tagged copies
    only, the latest date is. A name with no sibling is its own current family."""
    stems: dict[str, str] = {}
    tagged: dict[str, str] = {}
    for name in names:
        base = name.rsplit(".", 1)[0] if "." in name else name
        match = _STALE_SUFFIX.match(base)
        if match:
            stems[name] = match.group("stem")
            tagged[name] = match.group("tag")
        else:
            stems[name] = base
    by_stem: dict[str, list[str]] = defaultdict(list)
    for name, stem in stems.items():
        by_stem[stem].append(name)
    out: dict[str, Family] = {}
    for stem, members in by_stem.items():
        if len(members) == 1:
            out[members[0]] = Family(key=members[0], stale=False)
            continue
        untagged = [m for m in members if m not in tagged]
        current = untagged[0] if untagged else max(members, key=lambda m: _date_key(tagged[m]))
        for m in members:
            out[m] = Family(key=stem, stale=m != current)
    return out


def source_families(passages: Sequence[Source]) -> dict[str, Family]:
    """Families of the passages' documents: what the knowledge base knows (a source
    marked stale and superseded by another) first, else what the names tell."""
    out = families(sorted({p.source for p in passages}))
    titles = {p.source: title_key(p.doc_title) for p in passages if p.doc_title}
    by_name = dict(out)
    for source, family in by_name.items():
        # Names alike, titles not ("intro-1.0.md": "Intro to X", "intro-2.0.md": "Intro to
        # Y"): two documents, not versions, unless the knowledge base says otherwise.
        kin = [s for s, f in by_name.items() if f.key == family.key and s in titles]
        if source in titles and len({titles[s] for s in kin}) > 1:
            out[source] = Family(key=source, stale=False)
    for p in passages:
        if p.stale and p.superseded_by:
            current = out.get(p.superseded_by)
            key = current.key if current else p.superseded_by
            out[p.source] = Family(key=key, stale=True)
            out[p.superseded_by] = Family(key=key, stale=False)
    return out


def _date_key(tag: str) -> tuple[int, ...]:
    match = _DATE_IN_NAME.search(tag)
    if not match:
        version = _VERSION_IN_NAME.search(tag)  # "guide_rust-1.95": newer numbers win
        return (0, *(int(n) for n in version.group(0).split("."))) if version else (0,)
    return tuple(int(g) if g else 0 for g in match.groups())


# ---------------------------------------------------------------- units


@dataclass
class Unit:
    """One quotable piece of a passage."""

    text: str
    context: str
    source: str
    rank: int
    similarity: float
    order: int
    tokens: frozenset[str] = field(default_factory=frozenset)
    context_tokens: frozenset[str] = field(default_factory=frozenset)
    score: float = 0.0
    coverage: float = 0.0
    passage_coverage: float = 0.0
    typed: bool = True
    block: tuple[int, int] = (0, 0)
    """(passage rank, block in it): the paragraph, item or row the unit came from."""
    block_coverage: float = 0.0


_CAPITALISED = re.compile(r"\b[A-Z][a-z]+\b")
_FIRST_WORD = re.compile(r"^\W*([A-Z][a-z]+)\b")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?:\D|$))")
_GIVEN_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_LOWER_WORD = re.compile(r"(?<![.!?]\s)\b[a-z]{3,}\b")
_QUOTE = re.compile(r"(?:^|\s)>\s*(?:\[!\w+\]\s*)?|\[!\w+\]")


def _clean(text: str) -> str:
    text = _MARKUP.sub(lambda m: m.group(1) or "", text)
    text = _QUOTE.sub(" ", text)  # Markdown block quotes and callouts ("> [!NOTE]")
    return re.sub(r"\s+", " ", text).strip()


def _table_row(header: list[str], cells: list[str]) -> str:
    if header and len(header) == len(cells):
        return "; ".join(f"{h}: {c}" if h else c for h, c in zip(header, cells, strict=True))
    return " | ".join(cells)


def _cells(line: str) -> list[str]:
    return [_clean(c) for c in line.strip().strip("|").split("|")]


def split_units(text: str) -> list[tuple[str, str]]:
    """(unit, context) pairs of a chunk: sentences, list items, table rows with their
    header. The context is the heading trail plus the line introducing a list."""
    return [(unit, context) for unit, context, _ in split_blocks(text)]


def split_blocks(text: str) -> list[tuple[str, str, int]]:
    """`split_units` with each unit's block: the number of the paragraph, list item or
    table row it came from. A reference page's entry is one block ("DSHELL The login
    shell … Defaults to /bin/bash."): its sentences answer together."""
    text = _HTML_COMMENT.sub(" ", text)  # a template's instructions, not its content
    lines = normalize_text(text).replace("\r", "").split("\n")
    heading = ""
    if lines and lines[0].strip() and not re.search(r"[.。!?！？]$", lines[0].strip()):
        first = lines[0].strip()
        if " › " in first or first.startswith("#") or len(lines) > 1:
            heading = first.lstrip("#").strip()
            lines = lines[1:]
    out: list[tuple[str, str, int]] = []
    lead = ""
    header: list[str] = []
    paragraph: list[str] = []

    in_item = False

    def flush() -> None:
        nonlocal in_item
        in_item = False
        if paragraph:
            _sentences_into(" ".join(paragraph), heading, lead, out)
            paragraph.clear()

    in_code = False
    for raw in lines:
        line = raw.strip()
        if line.startswith(("```", "~~~")):
            # A fenced block is quoted as text under the line that introduced it
            # ("…review unused dependencies using:"); a "# comment" in it is no heading.
            flush()
            in_code = not in_code
            lead = lead if in_code else ""
            continue
        if in_code:
            if line:
                paragraph.append(line)
            else:
                flush()
            continue
        if not line:
            flush()
            header = []
            continue
        if line.startswith("|"):
            flush()
            if _TABLE_SEPARATOR.match(line):
                continue
            cells = _cells(line)
            if not header:
                header = cells
                continue
            row = _table_row(header, cells)
            out.append((row, _join(heading, lead), _next_block(out)))
            continue
        header = []
        if line.startswith("#"):
            flush()
            heading = _join(heading.split(" › ")[0] if heading else "", line.lstrip("#").strip())
            lead = ""
            continue
        if _ITEM_PREFIX.match(raw) and not re.match(r"^\s*\d+\.\d", raw):
            flush()
            item = _ITEM_PREFIX.sub("", line)
            if item.endswith((":", "：")):
                lead = _clean(item)
                continue
            paragraph.append(item)  # its indented continuation lines join it
            in_item = True
            continue
        if in_item and paragraph and raw[:1].isspace():
            paragraph.append(line)  # "- Travel is booked\n  through the portal."
            continue
        if in_item:
            flush()
        if line.endswith((":", "：")) and len(line) < 200:
            flush()
            # Only the last sentence introduces what follows; the ones before it are
            # content ("`rustc` supports a flag … This is the maximum. For example:").
            *said, last = _SENTENCE_END.split(_clean(line)) or [""]
            if said:
                _sentences_into(" ".join(said), heading, "", out)
            lead = last
            continue
        lead = "" if not paragraph else lead
        paragraph.append(line)
    flush()
    return out


def _join(*parts: str) -> str:
    return " › ".join(p for p in parts if p)


def _next_block(out: list[tuple[str, str, int]]) -> int:
    return out[-1][2] + 1 if out else 0


def _sentences_into(text: str, heading: str, lead: str, out: list[tuple[str, str, int]]) -> None:
    text = _clean(text)
    block = _next_block(out)
    for piece in _INLINE_ITEM.split(text):
        for sentence in _whole_sentences(_SENTENCE_END.split(piece)):
            sentence = _ITEM_PREFIX.sub("", sentence.strip()).strip()
            if len(sentence) < 4 or not re.search(r"\w", sentence):
                continue
            if sentence.endswith("?") or sentence.endswith("？"):
                continue  # a question is not an answer
            out.append((sentence, _join(heading, lead), block))


def _whole_sentences(pieces: list[str]) -> list[str]:
    """Pieces re-joined where a split fell inside parentheses: "(resp. GID_MAX) is 1000"
    or "(e.g. Foo)" is no sentence end."""
    out: list[str] = []
    for piece in pieces:
        last = out[-1] if out else ""
        if last.count("(") + last.count("（") > last.count(")") + last.count("）"):
            out[-1] = f"{out[-1]} {piece}"
        else:
            out.append(piece)
    return out


# ---------------------------------------------------------------- scoring


@dataclass
class Evidence:
    """The question's units, scored, with what the confidence scorer needs to know."""

    query: str
    query_tokens: frozenset[str]
    idf: dict[str, float]
    units: list[Unit]
    qtype: str | None
    family: dict[str, Family]
    unit: re.Pattern[str] | None = None
    """The unit the question names, if any (`asked_unit`)."""
    kinds: tuple[str, ...] = ()
    """Every kind of value asked for (`question_types`)."""
    given: frozenset[str] = frozenset()
    """The numbers the question itself states ("a 1:1", "a $20 lunch"): no answer."""
    absent: frozenset[str] = frozenset()
    """Question words no candidate holds: the asker's paraphrase, or the very fact the
    knowledge base lacks ("volunteering days" beside "paid time off days")."""
    common: frozenset[str] = frozenset()
    """Words the candidates also write in lower case: capitalised first in a sentence
    ("Assets are…"), they are not names."""

    def holds_value(self, text: str) -> bool:
        """Does the text hold a value of a kind asked for, other than the question's own
        figures and ordinary words capitalised at a sentence start?"""
        text = _THOUSANDS.sub("", text)
        for number in self.given:
            text = re.sub(rf"(?<![\d.,]){re.escape(number)}(?![\d]|[.,]\d)", " ", text)
        if "place" in self.kinds:
            first = _FIRST_WORD.match(text)
            if first and first.group(1).lower() in self.common:
                text = text[first.end() :]
            # The thing the question asks about ("where does Cargo put…") is not where.
            text = _CAPITALISED.sub(
                lambda m: " " if _stem(m.group(0).lower()) in self.query_tokens else m.group(0),
                text,
            )
        return typed_value(text, self.kinds, self.unit)

    @cached_property
    def ranked(self) -> list[Unit]:
        return sorted(self.units, key=lambda u: (-u.score, u.rank, u.order))

    def kinds_in(self, text: str) -> set[str]:
        """The kinds of value asked for that a text holds."""
        return {k for k in self.kinds if has_value(text, k, self.unit)}

    @property
    def absent_share(self) -> float:
        """The IDF-weighted share of the question that no candidate passage holds."""
        total = self.total_weight
        return sum(self.idf[t] for t in self.absent) / total if total else 0.0

    @property
    def total_weight(self) -> float:
        return sum(self.idf.get(t, 0.0) for t in self.query_tokens)

    def coverage(self, tokens: frozenset[str], context: frozenset[str] = frozenset()) -> float:
        total = self.total_weight
        if not total:
            return 0.0
        got = 0.0
        for t in self.query_tokens:
            if t in tokens:
                got += self.idf[t]
            elif t in context:
                got += CONTEXT_WEIGHT * self.idf[t]
        return got / total

    def best_per_family(self, *, typed_only: bool = False) -> list[Unit]:
        """The best unit of each document family, best first."""
        seen: dict[str, Unit] = {}
        for unit in self.ranked:
            if typed_only and not unit.typed:
                continue
            seen.setdefault(self.family[unit.source].key, unit)
        return list(seen.values())


_NUMBER_WORDS = {
    "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7",
    "eight": "8", "nine": "9", "ten": "10", "twelve": "12", "fifteen": "15",
    "twenty": "20", "thirty": "30", "sixty": "60", "first": "1", "second": "2",
    "third": "3", "fourth": "4", "fifth": "5", "sixth": "6", "tenth": "10",
}  # fmt: skip
QUESTION_WORDS = frozenset(
    """
    one suppose supposed need needed allowed able expect expected normal normally usually
    actually really just thing anything something someone anyone somebody okay ok sure
    exactly typically folk kind sort wonder wondering curious question quick hey hi thank
    thanks ask asking guess currently whatever
    出る 有る ある 行く 今日 予定 思う 教える 分かる 知る 頂く 貰う 貰える 良い いい 必要
    """.split()
)
"""Words of asking, not of the topic: they never decide which sentence answers."""


def _short(token: str) -> bool:
    return len(token) == 1 and contains_japanese(token)


_PHRASE = re.compile(r"\d+月\d+日|\d[\d,.]*\s*(?:%|％|時間|日|か月|ヶ月|年|円|km|歳|[a-z]+)", re.I)


def phrases(text: str) -> frozenset[str]:
    """Figures with their units, spelled one way ("3月21日", "30days")."""
    return frozenset(re.sub(r"[\s,]", "", m).lower() for m in _PHRASE.findall(normalize_text(text)))


def terms(text: str) -> frozenset[str]:
    """Content tokens with number words as digits ("third" → "3"), question words out,
    English words folded to a rough stem ("booking"/"book", "engineering"/"engineer"):
    the asker's form of a word is rarely the handbook's."""
    return frozenset(
        _stem(_SAME_WORD.get(t) or _NUMBER_WORDS.get(t, t))
        for t in tokenize(_BOUND.sub(" maximum ", text))
        if t not in QUESTION_WORDS
    )


_BOUND = re.compile(r"\b(?:at most|no more than|up to(?=\s+\d))\b", re.I)
"""An upper bound in words: "most" is a stop word, so "at most" would vanish where "at
least" keeps its "min" — "how long can a name be at most?" read as a two-word question."""


_SAME_WORD = {
    **dict.fromkeys(("minimum", "lowest", "smallest", "least", "fewest"), "min"),
    **dict.fromkeys(("maximum", "highest", "largest", "biggest"), "max"),
}
"""Words for the least and the most, spelled one way: a question's "lowest" is a
reference page's "MIN", a handbook's "maximum" an asker's "max"."""


_DOUBLE_END = re.compile(r"([b-df-hj-km-rtv-y])\1$")


def _stem(word: str) -> str:
    """A deliberately small suffix folding (-ing, -ed, a final e, a doubled consonant),
    the same on both sides; the search's own terms are left unstemmed (see tokenize)."""
    if not word.isascii() or not word.isalpha() or len(word) < 5:
        return word
    if word.endswith("ing") and len(word) >= 7:
        word = word[:-3]
    elif word.endswith("ed") and len(word) >= 6:
        word = word[:-2]
    word = _DOUBLE_END.sub(r"\1", word)
    return word[:-1] if word.endswith("e") and len(word) > 4 else word


def gather(query: str, passages: Sequence[Source]) -> Evidence:
    """Cut the passages into units and score each against the question."""
    query_tokens = terms(query)
    units: list[Unit] = []
    order = 0
    for rank, passage in enumerate(passages):
        for text, context, block in split_blocks(passage.text):
            units.append(
                Unit(
                    text=text,
                    context=context,
                    source=passage.source,
                    rank=rank,
                    similarity=passage.similarity,
                    order=order,
                    tokens=terms(text),
                    context_tokens=terms(context) if context else frozenset(),
                    block=(rank, block),
                )
            )
            order += 1
    n = len(units)
    df: dict[str, int] = defaultdict(int)
    for unit in units:
        for t in query_tokens & (unit.tokens | unit.context_tokens):
            df[t] += 1
    # A word no candidate has weighs like one only one candidate has: it may be the
    # asker's paraphrase, or the fact the knowledge base lacks.
    raw = {t: math.log(1.0 + (n + 1) / (max(1, df.get(t, 0)) + 0.5)) for t in query_tokens}
    # Flattened: a word the candidates share is often the topic itself ("laptop"), so
    # it keeps at least IDF_FLOOR of the rarest word's weight.
    top = max(raw.values(), default=1.0)
    idf = {
        t: top * (IDF_FLOOR + (1 - IDF_FLOOR) * v / top) * (SHORT_WORD if _short(t) else 1.0)
        for t, v in raw.items()
    }
    top_score = max((p.score for p in passages), default=0.0)
    qtype = question_type(query)
    evidence = Evidence(
        query=query,
        query_tokens=query_tokens,
        idf=idf,
        units=units,
        qtype=qtype,
        family=source_families(passages),
        unit=asked_unit(query),
        kinds=question_types(query),
        given=frozenset(
            n.replace(",", "")
            for n in _GIVEN_NUMBER.findall(_THOUSANDS.sub("", normalize_text(query)))
        ),
        common=frozenset(w for u in units for w in _LOWER_WORD.findall(u.text)),
        absent=frozenset(t for t in query_tokens if not df.get(t)),
    )
    query_phrases = phrases(query)
    period = asked_period(query)
    passage_coverage = []
    for rank in range(len(passages)):
        mine = [u for u in units if u.rank == rank]
        words = frozenset().union(*(u.tokens | u.context_tokens for u in mine))
        passage_coverage.append(evidence.coverage(words))
    for unit in units:
        unit.passage_coverage = passage_coverage[unit.rank]
        unit.coverage = evidence.coverage(unit.tokens, unit.context_tokens)
        unit.typed = evidence.holds_value(unit.text)
        if period is not None and not period.search(unit.text + " " + unit.context):
            # counted in another period ("1日の…6時間" for "週に何時間"): not the value asked
            unit.typed = unit.typed and not _PER_PERIOD.search(unit.text)
    blocks: dict[tuple[int, int], list[Unit]] = defaultdict(list)
    for unit in units:
        blocks[unit.block].append(unit)
    for unit in units:
        near = [u for u in blocks[unit.block] if abs(u.order - unit.order) <= BLOCK_REACH]
        words = frozenset().union(*(u.tokens for u in near))
        unit.block_coverage = max(unit.coverage, evidence.coverage(words, unit.context_tokens))
        block_typed = any(u.typed for u in near)
        missed = period is not None and not period.search(unit.text + " " + unit.context)
        factor = PERIOD_MISS if missed else 1.0
        if evidence.kinds == ("place",) and unit.typed and not _SURE_PLACE.search(unit.text):
            factor *= NAME_ONLY  # "where": a path or a channel says it more surely than a name
        factor *= 1.0 if unit.typed else BLOCK_VALUE if block_typed else 0.55
        length = len(unit.text)
        if length > 400:
            factor *= 0.85
        elif length < 15:
            factor *= 0.8
        passage = passages[unit.rank]
        relative = passage.score / top_score if top_score > 0 else 1.0 / (1 + unit.rank)
        topical = passage_coverage[unit.rank]
        if query_phrases:
            found = len(query_phrases & phrases(unit.text)) / len(query_phrases)
            factor *= 1.0 + PHRASE_BONUS * found
        unit.score = (
            unit.coverage ** (1 - PASSAGE_BLEND - BLOCK_BLEND)
            * unit.block_coverage**BLOCK_BLEND
            * topical**PASSAGE_BLEND
            * factor
            * (PASSAGE_PRIOR + (1 - PASSAGE_PRIOR) * relative)
        )
    return evidence


def select(evidence: Evidence, *, max_units: int = 3) -> list[Unit]:
    """The units that answer: the best one, then others that cover what it leaves out
    (the second half of a two-part question, the figure a heading-only match lacks)."""
    ranked = [u for u in evidence.ranked if u.score > 0]
    if not ranked:
        return []
    best = ranked[0]
    chosen = [best]
    # What the quoted text itself says (a heading shared by a list covers no item).
    covered = set(best.tokens) & evidence.query_tokens
    total = evidence.total_weight or 1.0
    two_part = is_two_part(evidence.query)
    best_family = evidence.family[best.source].key
    held = evidence.kinds_in(best.text)
    if evidence.kinds and not best.typed:
        # A reference entry's value sits in its own paragraph ("timeout:n Sets the amount
        # of time … Measured in seconds, the default is … (currently 5)"): quote it
        # before any other passage's figure.
        mates = [
            u
            for u in evidence.units
            if u.block == best.block and u.typed and abs(u.order - best.order) <= NEIGHBOUR_UNITS
        ]
        if mates:
            mate = min(mates, key=lambda u: (abs(u.order - best.order), -u.score))
            chosen.append(mate)
            covered |= mate.tokens & evidence.query_tokens
            held |= evidence.kinds_in(mate.text)
    for unit in ranked[1:]:
        if len(chosen) >= max_units:
            break
        if any(unit.text == c.text for c in chosen):
            continue
        new = unit.tokens & evidence.query_tokens - covered
        gain = sum(evidence.idf[t] for t in new) / total
        same_doc = evidence.family[unit.source].key == best_family
        # A value of a kind asked for that no chosen unit holds yet ("when …, and which
        # channel": a time beside the channel) is the other half of the answer.
        new_kind = evidence.kinds_in(unit.text) - held if len(evidence.kinds) > 1 else set()
        if two_part and unit.score >= 0.4 * best.score and (gain >= 0.08 or unit.typed):
            if (
                gain > 0
                or new_kind
                or (unit.typed and not all(c.typed for c in chosen))
                or (same_doc and unit.typed and len(chosen) < 2)
            ):
                chosen.append(unit)
                covered |= new
                held |= evidence.kinds_in(unit.text)
                continue
        typed_yet = any(c.typed for c in chosen)
        if not typed_yet and unit.typed and same_doc and unit.score >= 0.6 * best.score:
            chosen.append(unit)
            covered |= new
            break
    mine = [c for c in chosen if evidence.family[c.source].key == best_family]
    if evidence.kinds and not any(c.typed for c in mine):
        # "Is X covered? How much?": the figure often sits a sentence or two from the
        # one that names the topic, in the same passage, sharing none of the words.
        near = [
            u
            for u in evidence.units
            if u.rank == best.rank and u.typed and abs(u.order - best.order) <= NEIGHBOUR_UNITS
        ]
        if near:
            # Its own paragraph first: a reference entry's value ("The default is …
            # (currently 2)") belongs to its definition, not to the entry before it.
            closest = min(
                near, key=lambda u: (u.block != best.block, abs(u.order - best.order), -u.score)
            )
            chosen = [best, closest, *chosen[1:]][:max_units]
    return _with_defaults(evidence, chosen, max_units)


def _with_defaults(evidence: Evidence, chosen: list[Unit], max_units: int) -> list[Unit]:
    """Reference pages define a setting in one sentence and give its default in the next
    ("Defaults to 0700."), sharing no word with the question: quote it after its
    definition, or a little further on when the question asks for the default. Each
    chosen definition gets its own ("… for normal users, and for system users?")."""
    asks_default = bool(_DEFAULT.search(evidence.query))
    reach = NEIGHBOUR_UNITS if asks_default else 1
    best = chosen[0]
    out: list[Unit] = []
    extra = 0
    for index, unit in enumerate(chosen):
        out.append(unit)
        if any(
            _DEFAULT.search(c.text)
            for c in chosen
            if c.rank == unit.rank and (c is unit or c.block == unit.block)
        ):
            continue
        if index > 0 and unit.source != best.source:
            continue
        near = [
            u
            for u in evidence.units
            if u.rank == unit.rank
            and (index == 0 or u.block == unit.block)
            and 0 < u.order - unit.order <= reach
            and (reach > 1 or _STATES_DEFAULT.match(u.text))
            and _DEFAULT.search(u.text)
            and evidence.holds_value(u.text)
            and _NUMBER_OR_NAME.search(u.text)
            and all(u.text != c.text for c in [*chosen, *out])
        ]
        if near:
            out.append(min(near, key=lambda u: u.order))
            extra += index > 0
    return out[: max_units + extra]


_DEFAULT = re.compile(r"\bdefaults?\b|デフォルト|既定|初期値", re.I)
"""A question about a default value, and the sentence that states one."""
_STATES_DEFAULT = re.compile(r"(?:defaults? (?:to|is)|the default (?:is|value is)|default:)", re.I)
_NUMBER_OR_NAME = re.compile(
    r"\d|(?<![\w.])[~$]?/\w|\"\w|\b(?:yes|no|true|false|none|empty)\b", re.I
)


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
        if jaccard >= 0.5 and (best is None or jaccard > best[0]):
            best = (jaccard, other)
    if best is None:
        return None
    other = best[1]
    if _comparable(other) == _comparable(unit):
        return None  # "…Version 1.2 … (Section 6.1)" beside "…Version 1.3 … (Section 10.3)"
    return other


def _comparable(unit: Unit) -> str:
    """What a sentence says once its document's own version number and its section
    references are blanked: versions name themselves and renumber their sections."""
    return _norm(_REFERENCE_NUMBER.sub(" ", _own_version_masked(unit)))


def _own_version_masked(unit: Unit) -> str:
    """The unit's text with its own document's version number ("1.2" in a passage of
    `gfdl-1.2.md`) blanked: that versions name themselves differently is no conflict."""
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
        r"\b(one|" + "|".join(_NUMBER_WORDS) + r")\b",
        lambda m: _NUMBER_WORDS.get(m.group(1).lower(), "1"),
        normalize_text(text),
        flags=re.IGNORECASE,
    )
    for number, unit in _FIGURE.findall(spelled):
        key = unit.lower()
        key = key[:-1] if key.endswith("s") and len(key) > 3 else key
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
        if other.score < 0.4 * best.score:
            break
        if evidence.family[other.source].key in families_chosen:
            continue
        if _similar_shape(best.text, other.text) < SAME_TOPIC:
            continue  # "20 working days a year abroad" is no rival to "paid in 10 working days"
        theirs = figures(other.text)
        for key, numbers in theirs.items():
            if key in mine and numbers.isdisjoint(mine[key]):
                return other
    return None


OLDER_RIVAL = 0.5
"""An older version's sentence is weighed against the answer when it scores at least
this share of the answer's best unit: it is then an answer to the same question."""
_NAME = re.compile(r"[A-Z][\w&'’-]*(?:\s+(?:of\s+|de\s+|&\s+)?[A-Z][\w&'’-]*)*")
_NOT_A_UNIT = frozenset(
    "a an and are as at be by for from in is it no not of on or the this that to with".split()
)
"""Words after a number that are no unit of measure ("Section 6.1 of this License")."""


def names(text: str, evidence: Evidence) -> set[str]:
    """Proper names and defined terms a text uses ("Netscape Communications
    Corporation", "Mozilla Foundation"), lower-cased: runs of capitalised words, less
    ordinary words the passages also write in lower case and the question's own words."""
    found: set[str] = set()
    for match in _NAME.finditer(text):
        words = match.group(0).split()
        if (
            len(words) == 1
            and (
                re.match(r"\s*\d", text[match.end() :])  # "Section 10.3": a reference
                or not text[: match.start()].strip()
                or text[: match.start()].rstrip()[-1] in ".!?:;"
            )
        ):
            continue  # one capitalised word opening a sentence ("Except", "Each")
        while words and (words[0].lower() in evidence.common or words[0].lower() in _NOT_A_UNIT):
            words = words[1:]
        while words and words[-1].lower() in evidence.common:
            words = words[:-1]
        if not words or all(w.lower() in evidence.common for w in words):
            continue
        if not all(_stem(w.lower()) in evidence.query_tokens for w in words):
            found.add(" ".join(words).lower())
    return found


_REFERENCE_NUMBER = re.compile(
    r"\b(?:sections?|articles?|clauses?|chapters?|parts?|exhibits?|appendix|§)\s*\d+(?:\.\d+)*",
    re.I,
)
"""'Section 10.3': where a rule sits, renumbered between versions; no value of it."""


_RELEASE = re.compile(r"(?<![\w.])v?(\d+\.\d+(?:\.\d+)*)(?!\w|\.\d)")


def _measured(text: str, *, releases: bool = False) -> dict[str, set[str]]:
    """Figures by unit; with `releases`, release numbers too ("1.70": the version asked)."""
    text = _REFERENCE_NUMBER.sub(" ", text)
    found = {k: v for k, v in figures(text).items() if k not in _NOT_A_UNIT}
    numbers = set(_RELEASE.findall(text)) if releases else set()
    if numbers:
        found["#release"] = numbers
    return found


def version_conflict(evidence: Evidence, chosen: Sequence[Unit]) -> tuple[Unit, list[Unit]] | None:
    """When the passages hold an older version of the answer's document and its best
    sentence for the question says something else — another figure for the same unit, or
    a name the current version does not use while the current one names another
    ("Netscape … may publish new versions" against "Mozilla Foundation is the license
    steward") — that older sentence, and the current version's sentences near the
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
        if any(u.rank == m.rank and abs(u.order - m.order) <= 2 for m in mine) and _quotable(u)
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
    """A sentence, not a heading trail ("Mozilla Public License › 6.")."""
    return " › " not in unit.text and len(re.findall(r"[^\W\d_]{2,}", unit.text)) >= 4


MIN_ANSWER_COVERAGE = 0.2
"""Below this share of the question's (IDF-weighted) words, no unit answers it."""


def answer_features(query: str, answer: str, passages: Sequence[Source]) -> dict[str, float]:
    """What predicts that an answer is right, read from the answer and its passages
    (for any model): how much of the question the quoted evidence covers, whether it
    holds the kind of value asked for, how clearly one document wins, how well the
    search matched, whether sources disagree, and whether a person supplied it."""
    if any(p.from_person for p in passages) and any(
        f"[Source: {p.source}]" in answer for p in passages if p.from_person
    ):
        return {"from_person": 1.0}
    evidence = gather(query, passages)
    text = re.sub(r"\[Source: [^\]]*\]", " ", answer)
    if "[Source: " not in answer:
        # Nothing cited: "not found", or an answer from no passage. No evidence at all.
        return {
            "answer_coverage": 0.0,
            "value_type_match": 0.0,
            "document_margin": 0.0,
            "competing_documents": 0.0,
            "search_match": round(max((p.similarity for p in passages), default=0.0), 4),
            "sources_conflict": 0.0,
            "passage_coverage": 0.0,
            "answer_score": 0.0,
            "unit_margin": 0.0,
            "question_terms": float(len(evidence.query_tokens)),
            "value_asked": 1.0 if evidence.kinds else 0.0,
            "absent_terms": round(evidence.absent_share, 4),
            "missing_name": 0.0,
        }
    quoted = [u for u in evidence.units if u.text and u.text in answer]
    if quoted:
        best = max(quoted, key=lambda u: u.score)
        coverage = max(u.coverage for u in quoted)
        typed = any(evidence.holds_value(u.text) for u in quoted)
        sources = {u.source for u in quoted}
    else:
        best = evidence.ranked[0] if evidence.ranked else None
        cited = [p for p in passages if f"[Source: {p.source}]" in answer] or list(passages)
        context = frozenset().union(*(terms(p.text.split("\n", 1)[0]) for p in cited))
        coverage = evidence.coverage(terms(text), context) if text.strip() else 0.0
        typed = evidence.holds_value(text)
        sources = {p.source for p in cited}
    # The answer's document, as far as the search returned it: its headings and text.
    document = "\n".join(f"{u.context}\n{u.text}" for u in evidence.units if u.source in sources)
    margin = 0.0
    competing = 0.0
    if best is not None and best.score > 0:
        mine = evidence.family[best.source].key
        # Only candidate answers compete: a passage without the kind of value asked
        # for ("how many days?" → a number) is no rival, however many words it shares.
        others = [
            u
            for u in evidence.best_per_family(typed_only=True)
            if evidence.family[u.source].key != mine
        ]
        runner_up = others[0].score if others else 0.0
        margin = max(0.0, 1.0 - runner_up / best.score)
        competing = float(sum(1 for u in others if u.score >= 0.85 * best.score))
    conflict = 1.0 if "⚠️" in answer or versions_disagree(evidence, quoted) else 0.0
    # How clearly the quoted unit beats the next candidate answer not quoted.
    unit_margin = 0.0
    if best is not None and best.score > 0:
        rivals = [
            u.score for u in evidence.ranked if u.typed and u.text not in answer and u is not best
        ]
        unit_margin = max(0.0, 1.0 - (rivals[0] if rivals else 0.0) / best.score)
    return {
        "answer_coverage": round(coverage, 4),
        "value_type_match": 1.0 if typed else 0.0,
        "document_margin": round(margin, 4),
        "competing_documents": competing,
        "search_match": round(max((p.similarity for p in passages), default=0.0), 4),
        "sources_conflict": conflict,
        "passage_coverage": round(best.passage_coverage if best is not None else 0.0, 4),
        "answer_score": round(best.score if best is not None else 0.0, 4),
        "unit_margin": round(unit_margin, 4),
        "question_terms": float(len(evidence.query_tokens)),
        "value_asked": 1.0 if evidence.kinds else 0.0,
        "absent_terms": round(evidence.absent_share, 4),
        "missing_name": 1.0 if name_missing(query, document) else 0.0,
    }


def _squash(text: str) -> str:
    return re.sub(r"[\W_]+", "", normalize_text(text).lower())


_QUESTION_NAME = re.compile(r"(?<=\s)(?:[A-Z][\w.-]*\w|[a-z]+[A-Z][\w.-]*\w)")
"""A capitalised word past the question's first ("Apache", "BSD", "GPLv3", "iPhone"): a
name of the thing asked about."""
_NAME_VERSION = re.compile(r"v?\d[\d.]*$")
_CAPITAL_RUN = re.compile(r"\b[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*")


def _initials(text: str) -> set[str]:
    """Every acronym a run of capitalised words spells ("GNU Free Documentation License"
    → "gfdl", "fdl", …): a question's "GFDL" names that document."""
    out: set[str] = set()
    for run in _CAPITAL_RUN.findall(text):
        letters = "".join(w[0] for w in run.split()).lower()
        for i in range(len(letters)):
            for j in range(i + 2, len(letters) + 1):
                out.add(letters[i:j])
    return out


def name_missing(query: str, document: str) -> bool:
    """Does the question name something (a capitalised word past its first: "Apache",
    "BSD") that the answer's document never mentions, in its words or as an acronym of
    them? Then the answer is about another thing than the one asked about, however many
    other words it shares with the question ("the Apache licence" answered from the GPL)."""
    names = [n for n in _QUESTION_NAME.findall(normalize_text(query)) if len(n) > 1]
    if not names:
        return False
    words = terms(document)
    acronyms = _initials(document)
    for name in names:
        bare = _NAME_VERSION.sub("", name)
        if not terms(name) or terms(name) & words or terms(bare) & words:
            continue
        if len(bare) >= 2 and _squash(bare) in acronyms:
            continue
        return True
    return False


_STATEMENT = re.compile(
    r"\b(?:is|are|was|were|it's|according|says|said|will|has|have|must|should|costs?|"
    r"takes?|gets?|pays?|means?)\b|\d|です|ます|である|でした|だよ|だ。|とのこと|によると",
    re.I,
)


def supplies_facts(reply: str) -> bool:
    """Does a reply to an escalation state a fact ("It is Ulaanbaatar, according to our
    travel guide") rather than narrow the question ("working from abroad")? A fact is
    a source to answer from; a narrowing is more words to search with."""
    words = reply.split()
    return (len(words) >= 3 and bool(_STATEMENT.search(reply))) or (
        contains_japanese(reply) and len(reply) >= 8 and bool(_STATEMENT.search(reply))
    )
