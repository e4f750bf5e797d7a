"""How the offline model searches a question again, and how it cuts a two-part question.

A retry with the question's bare keywords finds what the question found: the search
already drops function words. So a replan tries, in turn, searches that really differ:

1. one search per part of a two-part question ("how long …, and how much …"), each
   carrying the words the question opens with ("on a work trip, …");
2. the thing the question is about: the names it spells (capitalised words, words with
   digits, acronyms) and its runs of adjacent content words ("zebra enclosure",
   "patent licence"), without the asking and linking words around them;
3. the bare keywords.

It never offers a query the run has already searched (`PlanRequest.tried`). Nothing here
knows any particular document: only the shape of questions.
"""

from __future__ import annotations

import re

from agent.knowledge.tokenize import (
    ENGLISH_STOP_WORDS,
    contains_japanese,
    extract_keywords,
    tokenize,
)
from agent.replan import normalised

MAX_PARTS = 3
MIN_PART_WORDS = 2
"""A part needs this many content words of its own to be searched and answered alone:
"…? how much?" is a follow-up that leans on the first part, not a second question."""
MIN_SUBJECT_WORDS = 2
"""A subject of one word ("Mongolia") searches far wider than the question did."""

_ASKING = (
    r"how|what|what's|which|who|whom|whose|where|when|why|whether|does|do|did|is|are|was|"
    r"were|can|could|may|might|must|should|will|would|shall"
)
_PART_BREAK = re.compile(
    r"\s*[,;]?\s+and\s+(?=(?:" + _ASKING + r")\b)|(?<=[?？])\s*(?=\S)",
    re.IGNORECASE,
)
_ASKS = re.compile(
    r"[?？]|\b(?:" + _ASKING + r")\b|何|いつ|いくら|どこ|どの|どう|誰|か[。？]?$", re.IGNORECASE
)
_FIRST_ASKING = re.compile(r"\b(?:" + _ASKING + r")\b", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z0-9][\w.+'’-]*")
_TRIED_SEARCH = re.compile(r'(?:rag_search|web_search) "(.*)"(?: in \S+)? → ')


def question_parts(query: str) -> list[str]:
    """The parts of a two- or three-part question, each searchable and answerable on its
    own (the later ones prefixed with the words the question opens with); [] for a
    question with one part, or whose later parts are follow-ups of the first."""
    pieces = [p.strip() for p in _PART_BREAK.split(query.strip()) if p and p.strip()]
    if not 1 < len(pieces) <= MAX_PARTS:
        return []
    first = pieces[0]
    lead = _lead(first)
    lead_words = set(extract_keywords(lead))
    parts = [first]
    for piece in pieces[1:]:
        own = set(extract_keywords(piece)) - lead_words
        if len(own) < MIN_PART_WORDS or not _ASKS.search(piece):
            return []  # a follow-up leaning on the first part, or a remark, not a question
        parts.append(f"{lead} {piece}".strip())
    if len(set(extract_keywords(first)) - lead_words) < MIN_PART_WORDS:
        return []
    return parts


_COMPARING = frozenset(
    {
        "compare", "compared", "comparing", "comparison", "contrast", "versus", "vs",
        "difference", "differences", "differ", "differs", "different", "between",
    }
)  # fmt: skip
"""Words that make a question a comparison; they name no side of it."""
_CLAUSE_BREAK = re.compile(r"[:;—–]|\s-\s")
_SIDE_BREAK = re.compile(r"\s*,?\s+(?:and|vs\.?|versus)\s+", re.IGNORECASE)


def compared_items(query: str) -> list[str]:
    """The sides an English comparison sets against each other, as their content words:
    "Compare the remote work policy and the employee handbook: why do they differ?" →
    ["remote work policy", "employee handbook"]. [] when the question compares nothing,
    a side has no content word of its own, or the question is Japanese."""
    if contains_japanese(query):
        return []
    if not any(m.group(0).casefold() in _COMPARING for m in _WORD.finditer(query)):
        return []
    for clause in _CLAUSE_BREAK.split(query):
        sides = _SIDE_BREAK.split(clause.strip())
        if not 1 < len(sides) <= MAX_PARTS:
            continue
        items = [" ".join(_side_words(side)) for side in sides]
        if all(items) and len(set(items)) == len(items):
            return items
    return []


def _side_words(side: str) -> list[str]:
    words = [m.group(0).rstrip(".'’-") for m in _WORD.finditer(side)]
    return [
        w
        for w in words
        if len(w) > 1
        and w.casefold() not in ENGLISH_STOP_WORDS
        and w.casefold() not in _COMPARING
        and not re.fullmatch(r"(?:" + _ASKING + r")", w.casefold())
    ]


def own_words(part: str, parts: list[str]) -> set[str]:
    """The content words of a part that the question's shared opening does not supply
    (`parts`: the question's `question_parts`)."""
    if not parts:
        return set(tokenize(part))
    return set(tokenize(part)) - set(tokenize(_lead(parts[0])))


def _lead(first: str) -> str:
    """The words a question opens with before its first asking word ("on a work trip,")."""
    asking = _FIRST_ASKING.search(first)
    return first[: asking.start()].strip() if asking and asking.start() > 0 else ""


def subject(query: str) -> str:
    """The names and noun phrases of an English question, joined; "" when it has fewer
    than `MIN_SUBJECT_WORDS` words or is Japanese (its keywords are its compounds already)."""
    if contains_japanese(query):
        return ""
    words = [(m.group(0).rstrip(".'’-"), m.start()) for m in _WORD.finditer(query)]
    picked: dict[str, None] = {}
    run: list[str] = []

    def close() -> None:
        if len(run) >= 2:
            for word in run:
                picked.setdefault(word, None)
        run.clear()

    previous_end = -1
    for word, start in words:
        lowered = word.casefold()
        content = (
            lowered not in ENGLISH_STOP_WORDS
            and not re.fullmatch(r"(?:" + _ASKING + r")", lowered)
            and not lowered.endswith(("'s", "’s"))
            and len(word) > 1
        )
        gap = query[previous_end:start] if previous_end >= 0 else ""
        if run and gap.strip():  # punctuation between two words ends a phrase
            close()
        if content:
            run.append(word)
            if _is_name(word, start):
                picked.setdefault(word, None)
        else:
            close()
        previous_end = start + len(word)
    close()
    found = list(picked)
    return " ".join(found) if len(found) >= MIN_SUBJECT_WORDS else ""


def _is_name(word: str, start: int) -> bool:
    """A capitalised word inside the sentence, an acronym, or a word with a digit."""
    return (
        (word[:1].isupper() and start > 0)
        or (len(word) > 1 and word.isupper())
        or bool(re.search(r"\d", word) and re.search(r"[A-Za-z]", word))
    )


def tried_queries(tried: list[str]) -> set[str]:
    """The searches an earlier plan of this run ran, from `PlanRequest.tried`'s lines."""
    found = set()
    for line in tried:
        match = _TRIED_SEARCH.search(line)
        if match:
            found.add(normalised(match.group(1)))
    return found


def same_words(query: str) -> frozenset[str]:
    """A search's content words, in any order and form: the search drops function words
    and folds forms ("points" → "point"), so two queries with the same words are one
    search ("key points Expense Policy" is "What are the key points of Expense Policy?")."""
    return frozenset(tokenize(query)) or frozenset({normalised(query)})


def retry_searches(query: str, tried: list[str]) -> list[str]:
    """The next strategy's searches not yet run: the parts, else the subject, else the
    keywords. A retry whose words another retry already searched is no new search ("key
    points Expense Policy", then "key point expense policy"). When every strategy is spent,
    a search already run (which the replan manager then drops as a repeat, and the run goes
    to a person)."""
    run = tried_queries(tried)
    retried = {same_words(q) for q in run if q != normalised(query)}
    keywords = " ".join(extract_keywords(query)) or query
    strategies = [question_parts(query), [subject(query)], [keywords]]
    for searches in strategies:
        new = [
            s
            for s in dict.fromkeys(searches)
            if s
            and normalised(s) not in run
            and normalised(s) != normalised(query)
            and same_words(s) not in retried
        ]
        if new:
            return new
    earlier = sorted(q for q in run if q != normalised(query))
    return [keywords] if normalised(keywords) in run or not earlier else [earlier[-1]]
