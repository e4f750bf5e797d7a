"""The words of a question or a sentence that say what it is about, spelled one way."""

from __future__ import annotations

import re

from agent.knowledge.tokenize import contains_japanese, normalize_text, tokenize

NUMBER_WORDS = {
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


def is_short_word(token: str) -> bool:
    return len(token) == 1 and contains_japanese(token)


_PHRASE = re.compile(r"\d+月\d+日|\d[\d,.]*\s*(?:%|％|時間|日|か月|ヶ月|年|円|km|歳|[a-z]+)", re.I)


def phrases(text: str) -> frozenset[str]:
    """Figures with their units, spelled one way ("4月12日", "14days")."""
    return frozenset(re.sub(r"[\s,]", "", m).lower() for m in _PHRASE.findall(normalize_text(text)))


def terms(text: str) -> frozenset[str]:
    """Content tokens with number words as digits ("third" → "3"), question words out,
    English words folded to a rough stem ("booking"/"book", "engineering"/"engineer"):
    the asker's form of a word is rarely the handbook's."""
    return frozenset(
        stem(_SAME_WORD.get(t) or NUMBER_WORDS.get(t, t))
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


STEM_MIN = 5
"""Shorter words are left as they are: "used", "bed" have no suffix to fold."""
ING_MIN = 7
"""An "-ing" is folded only when four letters stay ("booking" → "book", not "ring")."""
ED_MIN = 6
"""An "-ed" is folded only when four letters stay ("listed" → "list", not "bred")."""
E_AFTER = 4
"""A final "e" goes only from words longer than this ("rate" stays, "lease" → "leas")."""


def stem(word: str) -> str:
    """A deliberately small suffix folding (-ing, -ed, a final e, a doubled consonant),
    the same on both sides; the search's own terms are left unstemmed (see tokenize)."""
    if not word.isascii() or not word.isalpha() or len(word) < STEM_MIN:
        return word
    if word.endswith("ing") and len(word) >= ING_MIN:
        word = word.removesuffix("ing")
    elif word.endswith("ed") and len(word) >= ED_MIN:
        word = word.removesuffix("ed")
    word = _DOUBLE_END.sub(r"\1", word)
    return word[:-1] if word.endswith("e") and len(word) > E_AFTER else word
