"""Which sentence of the retrieved passages holds the answer.

Units (agent/evidence/segments.py) are scored against the question by IDF-weighted
overlap of content words (the IDF is taken over the candidate units, so words every
candidate shares weigh little), times a cue for the kind of value the question asks for
(agent/evidence/questions.py).
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import pairwise

from agent.evidence.patterns import CUE_KINDS, CUES, compiled
from agent.evidence.questions import (
    NAME_ONLY,
    PER_PERIOD,
    PERIOD_MISS,
    SURE_PLACE,
    asked_period,
    asked_unit,
    has_value,
    is_two_part,
    question_type,
    question_types,
    typed_value,
)
from agent.evidence.segments import split_blocks
from agent.evidence.terms import is_short_word, phrases, stem, terms
from agent.knowledge.tokenize import normalize_text
from agent.knowledge.versions import Family, source_families
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
around it in its paragraph cover: "Defaults to 30." answers with the sentence before
it ("The number of seconds a session may stay idle …"), sharing none of its words."""
BLOCK_REACH = 2
"""How many sentences either side, in the same paragraph or item, count as around it."""
BLOCK_VALUE = 0.8
"""A sentence without the kind of value asked for weighs this much when a sentence around
it holds one (it is quoted with it), instead of 0.55."""
IDF_FLOOR = 0.5
"""Every question word keeps at least this share of the rarest one's weight."""
SHORT_WORD = 0.4
"""A one-character Japanese word ("後", "日") says little about the topic."""
PHRASE_BONUS = 0.3
"""A figure of the question found verbatim in a unit ("4月12日", "$1,500") lifts it."""
CONTEXT_WEIGHT = 0.6
"""A query word found only in a unit's heading or lead-in counts this much."""
NEIGHBOUR_UNITS = 3
"""How far (in units of the same passage) a figure may sit from the sentence naming the
topic when that sentence holds none of the kind asked for."""

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
    borrowed: frozenset[str] = field(default_factory=frozenset)
    """The words of the sentence it points back at, which it speaks of."""
    referent: int | None = None
    """The order of the unit this one points back at ("Lock this cabinet at night."
    after the sentence naming the cabinet), when it has one in its paragraph."""


DEFINITION_WEIGHT = 0.7
"""A sentence defining a thing the question names, when the question does not ask what
it means, weighs this much: "how do I turn off X?" is not answered by "X is a …"."""
ELSEWHERE_WEIGHT = 0.7
"""A sentence sending the reader elsewhere ("See the manual.") weighs this much."""
IDF_SMOOTHING = 0.5
"""Added to a word's candidate count: a word in no candidate weighs like one in one."""
NO_VALUE = 0.55
"""A unit without the kind of value asked for, and none around it, weighs this much."""
LONG_UNIT = 400
"""Characters beyond which a unit is a paragraph, not a sentence: it answers less surely."""
LONG_UNIT_WEIGHT = 0.85
SHORT_UNIT = 15
"""Characters below which a unit is a fragment ("Yes.", a label)."""
SHORT_UNIT_WEIGHT = 0.8
MAX_UNITS = 3
"""An answer quotes at most this many units: the fact and what completes it."""
SECOND_PART_SCORE = 0.4
"""For a two-part question, a further unit scoring this share of the best one may answer
the other part."""
SECOND_PART_GAIN = 0.08
"""…when it adds this share of the question's (IDF-weighted) words, or holds a value."""
SAME_DOCUMENT_UNITS = 2
"""A two-part answer takes a further sentence of its own document while it has fewer."""
FIGURE_MATE = 0.6
"""A sentence of the answer's document holding the value its best sentence lacks is
quoted with it when it scores this share of the best."""

TIE_DIGITS = 6
"""Scores equal to this many digits tie."""
POINTER_VERBS = frozenset(
    "is was are were be been may might can could will would should must has have had "
    "does did do also means ensures allows makes helps applies happens works gives "
    "includes lets requires causes prevents avoids explains".split()
)
"""Words after "this"/"that" that make it a pronoun for the sentence before ("This is
why …"), not a determiner naming a thing ("this option")."""
_ARTICLES = frozenset({"a", "an"})
_WORD = re.compile(r"[^\W\d_]+")
_PLAIN_WORD = re.compile(r"[^\W_]+")
"""A word with its digits ("v2"): ties are broken on the question's own words as written."""
_CAPITALISED = re.compile(r"\b[A-Z][a-z]+\b")
_FIRST_WORD = re.compile(r"^\W*([A-Z][a-z]+)\b")
"""A sentence's capitalised first word: a name only if the candidates never write it in
lower case."""
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?:\D|$))")
"""The comma of "1,500": a figure the question gives is matched however it is written."""
_GIVEN_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_LOWER_WORD = re.compile(r"(?<![.!?]\s)\b[a-z]{3,}\b")


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
    """The numbers the question itself states ("a 2-hour workshop", "a $15 taxi"): no answer."""
    absent: frozenset[str] = frozenset()
    """Question words no candidate holds: the asker's paraphrase, or the very fact the
    knowledge base lacks ("mentoring hours" beside "training hours")."""
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
            # The thing the question asks about ("where does Widgetctl put…") is not where.
            text = _CAPITALISED.sub(
                lambda m: " " if stem(m.group(0).lower()) in self.query_tokens else m.group(0),
                text,
            )
        return typed_value(text, self.kinds, self.unit)

    @cached_property
    def ranked(self) -> list[Unit]:
        """Best first. Sentences of one paragraph often tie (they share its heading and
        its neighbours' words): then the one sharing more of the question's own words,
        small ones included, wins ("… a fee for the course itself?" → "There is no fee
        for the course itself.", not "There is a fee for each course book."); a sentence
        pointing back says its referent's words too."""
        asked = set(_PLAIN_WORD.findall(self.query.lower()))

        def shared(unit: Unit) -> int:
            said = (
                unit.text
                if unit.referent is None
                else f"{self.units[unit.referent].text} {unit.text}"
            )
            return len(asked & set(_PLAIN_WORD.findall(said.lower())))

        return sorted(
            self.units, key=lambda u: (-round(u.score, TIE_DIGITS), -shared(u), u.rank, u.order)
        )

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


def gather(query: str, passages: Sequence[Source]) -> Evidence:
    """Cut the passages into units and score each against the question."""
    query_tokens = terms(query)
    headings: dict[str, frozenset[str]] = {"": frozenset()}  # a passage's units share one
    units: list[Unit] = []
    order = 0
    for rank, passage in enumerate(passages):
        for text, context, block in split_blocks(_quotable(passage)):
            if context not in headings:
                headings[context] = terms(context)
            units.append(
                Unit(
                    text=text,
                    context=context,
                    source=passage.source,
                    rank=rank,
                    similarity=passage.similarity,
                    order=order,
                    tokens=terms(text),
                    context_tokens=headings[context],
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
    raw = {
        t: math.log(1.0 + (n + 1) / (max(1, df.get(t, 0)) + IDF_SMOOTHING)) for t in query_tokens
    }
    # Flattened: a word the candidates share is often the topic itself ("monitor"), so
    # it keeps at least IDF_FLOOR of the rarest word's weight.
    top = max(raw.values(), default=1.0)
    idf = {
        t: top * (IDF_FLOOR + (1 - IDF_FLOOR) * v / top) * (SHORT_WORD if is_short_word(t) else 1.0)
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
    _resolve_pointers(units)  # after the IDF: a word read twice is no commoner
    asks_meaning = bool(_ASKS_MEANING.search(query))
    query_phrases = phrases(query)
    period = asked_period(query)
    passage_coverage = []
    for rank in range(len(passages)):
        mine = [u for u in units if u.rank == rank]
        words = frozenset().union(*(u.tokens | u.context_tokens for u in mine))
        passage_coverage.append(evidence.coverage(words))
    for unit in units:
        unit.passage_coverage = passage_coverage[unit.rank]
        unit.coverage = evidence.coverage(unit.tokens | unit.borrowed, unit.context_tokens)
        unit.typed = evidence.holds_value(unit.text)
        if period is not None and not period.search(unit.text + " " + unit.context):
            # counted in another period ("1日の…2回" for "月に何回"): not the value asked
            unit.typed = unit.typed and not PER_PERIOD.search(unit.text)
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
        if evidence.kinds == ("place",) and unit.typed and not SURE_PLACE.search(unit.text):
            factor *= NAME_ONLY  # "where": a path or a channel says it more surely than a name
        factor *= 1.0 if unit.typed else BLOCK_VALUE if block_typed else NO_VALUE
        length = len(unit.text)
        if length > LONG_UNIT:
            factor *= LONG_UNIT_WEIGHT
        elif length < SHORT_UNIT:
            factor *= SHORT_UNIT_WEIGHT
        if not asks_meaning and _defines_asked(unit.text, evidence.query_tokens):
            factor *= DEFINITION_WEIGHT
        elif _POINTS_ELSEWHERE.search(unit.text):
            factor *= ELSEWHERE_WEIGHT
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


def _defines_asked(text: str, query_tokens: frozenset[str]) -> bool:
    """Does the text define a thing the question names ("\"Site\" means any server …",
    "A widget is a …")? The question asks something about it, not what it is."""
    found = _DEFINES.match(text)
    return found is not None and bool(terms(found.group(0)) & query_tokens)


def _resolve_pointers(units: list[Unit]) -> None:
    """A sentence that points back ("Lock this cabinet at night.", "This is why the
    door stays shut.") speaks of what the sentence before it in its paragraph says: it
    counts that sentence's words as its own, and quotes it (`_with_pointers`).
    A sentence that points ahead ("… is set as follows:") lends its words to the unit
    it introduces, in the same passage, as its context."""
    for before, unit in pairwise(units):
        if before.rank != unit.rank:
            continue
        if unit.block == before.block and _points_back(unit.text, before):
            unit.referent = before.order
            unit.borrowed = before.tokens
        elif _points_ahead(before):
            unit.context_tokens = unit.context_tokens | before.tokens


def _points_back(text: str, before: Unit) -> bool:
    """Does the text point at the sentence before it: a demonstrative standing alone
    ("This is why …", "… is meant for this.") or naming a thing that sentence names
    ("this option" after "the Foo option")?"""
    found = _POINTS_BACK.search(text)
    if found is None:
        return False
    rest = _WORD.findall(text[found.start() :])
    if not rest or not rest[0].isascii():
        return True  # "これは…", "この制度は…": no noun to check
    word = rest[1].lower() if len(rest) > 1 else ""
    if rest[0].lower() == "such" and word in _ARTICLES:
        word = rest[2].lower() if len(rest) > 2 else ""
    return not word or word in POINTER_VERBS or bool(terms(word) & before.tokens)


def _points_ahead(unit: Unit) -> bool:
    return bool(_POINTS_AHEAD.search(unit.text))


def _quotable(passage: Source) -> str:
    """A passage's text as its units are cut from. A verified answer's first line is the
    question it was saved for: it answers that question alone (`verified_for`), so the
    question is no subject that would lend its words to the answer for another one
    ("the currency of X?" answered with "It is Y." saved for "the capital of X?")."""
    if passage.verified is None:
        return passage.text
    first, _, rest = passage.text.partition("\n")
    return rest if first.strip() == passage.verified.question.strip() else passage.text


def select(evidence: Evidence, *, max_units: int = MAX_UNITS) -> list[Unit]:
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
        # A reference entry's value sits in its own paragraph ("retries:n Sets how
        # often … Counted per request, the default is … (currently 3)"): quote it
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
        if (
            two_part
            and unit.score >= SECOND_PART_SCORE * best.score
            and (gain >= SECOND_PART_GAIN or unit.typed)
        ):
            if (
                gain > 0
                or new_kind
                or (unit.typed and not all(c.typed for c in chosen))
                or (same_doc and unit.typed and len(chosen) < SAME_DOCUMENT_UNITS)
            ):
                chosen.append(unit)
                covered |= new
                held |= evidence.kinds_in(unit.text)
                continue
        typed_yet = any(c.typed for c in chosen)
        if (
            not typed_yet
            and unit.typed
            and same_doc
            and unit.score >= FIGURE_MATE * best.score
            and _own_coverage(evidence, unit) >= FIGURE_MATE * _own_coverage(evidence, best)
        ):
            chosen.append(unit)
            covered |= new
            break
    chosen = _with_located_place(evidence, chosen, max_units)
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
            # (currently 4)") belongs to its definition, not to the entry before it.
            closest = min(
                near, key=lambda u: (u.block != best.block, abs(u.order - best.order), -u.score)
            )
            chosen = [best, closest, *chosen[1:]][:max_units]
    return _with_pointers(evidence, _with_defaults(evidence, chosen, max_units))


def _with_located_place(evidence: Evidence, chosen: list[Unit], max_units: int) -> list[Unit]:
    """For "where …?", when no chosen sentence says where surely (a path, a channel): "Files
    go to the cache directory." only names a place, and the sentence of its paragraph
    that says where that is ("The cache directory is ~/.cache/foo.") comes second. It
    must share a word with the best one beyond the question's own, or it locates
    something else."""
    if "place" not in evidence.kinds or any(SURE_PLACE.search(c.text) for c in chosen):
        return chosen
    best = chosen[0]
    named = best.tokens - evidence.query_tokens
    where = [
        u
        for u in evidence.units
        if u.block == best.block
        and 0 < abs(u.order - best.order) <= NEIGHBOUR_UNITS
        and SURE_PLACE.search(u.text)
        and (u.tokens - evidence.query_tokens) & named
    ]
    if not where:
        return chosen
    located = min(where, key=lambda u: abs(u.order - best.order))
    if any(c is located for c in chosen):
        return chosen
    return [best, located, *chosen[1:]][:max_units]


def _with_pointers(evidence: Evidence, chosen: list[Unit]) -> list[Unit]:
    """One sentence more when the best one cannot be read alone: the sentence it points
    back at ("The spare keys hang in the blue cabinet." before "Lock this cabinet at
    night."), or the unit it introduces after it ("… on the following days:")."""
    best = chosen[0]
    units = evidence.units
    extra: Unit | None = None
    if best.referent is not None:
        extra = units[best.referent]
    else:
        after = units[best.order + 1] if best.order + 1 < len(units) else None
        if after is not None and after.rank == best.rank and _points_ahead(best):
            extra = after
    if extra is None or any(c.text == extra.text for c in chosen):
        return chosen
    return [best, extra, *chosen[1:]]


def reading_order(chosen: list[Unit]) -> list[Unit]:
    """The chosen units as a reply quotes them: the best first (it holds the answer),
    except that the sentence it points back at comes before it, as in the document."""
    if len(chosen) > 1 and chosen[0].referent == chosen[1].order:
        return [chosen[1], chosen[0], *chosen[2:]]
    return chosen


def _own_coverage(evidence: Evidence, unit: Unit) -> float:
    """How much of the question a unit's own words cover, its heading aside: a heading
    ("Why are refunds slow?") lifts every sentence under it alike, the one about
    another thing too ("In May the office moved." for "when do refunds arrive?")."""
    return evidence.coverage(unit.tokens)


def _with_defaults(evidence: Evidence, chosen: list[Unit], max_units: int) -> list[Unit]:
    """Reference pages define a setting in one sentence and give its default in the next
    ("Defaults to 30."), sharing no word with the question: quote it after its
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


_CUES = compiled(CUES, CUE_KINDS)
_DEFINES = _CUES["defines"]
_ASKS_MEANING = _CUES["asks_meaning"]
_POINTS_ELSEWHERE = _CUES["points_elsewhere"]
_POINTS_BACK = _CUES["points_back"]
_POINTS_AHEAD = _CUES["points_ahead"]
_DEFAULT = _CUES["default"]
"""A question about a default value, and the sentence that states one."""
_STATES_DEFAULT = _CUES["states_default"]
_NUMBER_OR_NAME = re.compile(
    r"\d|(?<![\w.])[~$]?/\w|\"\w|\b(?:yes|no|true|false|none|empty)\b", re.I
)

MIN_ANSWER_COVERAGE = 0.2
"""Below this share of the question's (IDF-weighted) words, no unit answers it."""
