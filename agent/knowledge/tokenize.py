"""Japanese-aware tokenisation, shared by documents and queries.

The sparse (BM25-style) vector, the offline similarity and the offline embedder all rest
on these tokens, so documents and queries must go through exactly the same function:
a token that is spelled differently on the two sides can never match.

- Text containing Japanese goes through SudachiPy (split mode C, dictionary "core"); each
  compound also contributes its mode-A parts, so "経費" in a query finds "経費精算" in a
  document. Japanese words are normalised (e.g. 締切 → 締め切り); Latin words inside
  Japanese text go through the Latin rules below so both languages meet on one spelling.
- Latin text is lower-cased, split into words and numbers ("5,000" → "5000", "4.2" stays)
  and lightly de-pluralised ("days" → "day"). A pair of small numbers joined by ":", "-"
  or "-on-" ("1:1", "1-1s", "1-on-1", "one-on-one") also gives one token "1-1": the
  asker's spelling of a meeting or a ratio is rarely the handbook's.
- `search_terms` is what retrieval indexes and searches by: today the same tokens. A
  Snowball stemmer was measured there and left out: on the dev sets it found the
  answer passage no more often (recall@5 0.958 either way, MRR 0.765 both), and it
  makes vague questions ("who approves it?") match far more passages.
- Punctuation, particles, auxiliaries and a small English + Japanese stop-word list are
  dropped. Numbers are kept: "3 days" and "1 day" must not look the same.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterator

from sudachipy import Dictionary, PosMatcher, SplitMode, Tokenizer

__all__ = [
    "ENGLISH_STOP_WORDS",
    "JAPANESE_STOP_WORDS",
    "LEXICAL_VERSION",
    "contains_japanese",
    "extract_keywords",
    "normalize_text",
    "search_terms",
    "tokenize",
]

LEXICAL_VERSION = 2
"""The index format of stored sparse vectors. Bump it whenever these tokenisation rules,
the stop words or the sparse weighting (`lexical.py`, `vectors.py`) change: a collection
stamped with an older number was tokenised differently, so the knowledge base warns and
the next `grace ingest` of all its documents re-indexes and re-stamps it (`qdrant_collections.py`).
2: "1:1", "1-1", "one-on-one" became one token "1-1"."""

ENGLISH_STOP_WORDS: frozenset[str] = frozenset(
    """
    a about above after again against all also am an and any are aren as at be because been
    before being below between both but by can cannot could couldn did didn do does doesn
    doing don down during each either else ever every few for from further get gets got had
    hadn has hasn have haven having he her here hers herself him himself his how however i
    if in into is isn it its itself just let like many me might more most much must mustn my
    myself no nor not now of off on once only or other ought our ours ourselves out over own
    please same shall shan she should shouldn so some such than that the their theirs them
    themselves then there these they this those through to too under until up upon us very
    was wasn we were weren what when where whether which while who whom whose why will with
    within without won would wouldn yes yet you your yours yourself yourselves
    per tell know want need s t d ll m re ve
    """.split()
)
"""Function words and question words: they carry no topic, so they never count as matches."""

JAPANESE_STOP_WORDS: frozenset[str] = frozenset(
    """
    する ある いる なる れる られる せる させる できる 出来る おる 居る くる 来る いう 言う
    こと もの 物 事 ため 為 よう 様 とき 時 ところ 所 ほう 方 わけ 訳 はず
    これ それ あれ どれ この その あの どの ここ そこ あそこ どこ こちら そちら どちら
    何 なに なん 何か いつ 誰 どう どんな どうして なぜ 如何 いくら いくつ
    何日 何回 何人 何時 何時間 何年 何月 何ヶ月 何か月 何件 何個 何度 何名
    です ます ください 下さい ござる
    """.split()
)
"""Common Japanese function words that Sudachi tags as nouns/verbs (particles and
auxiliaries are dropped by part of speech instead)."""

_DROPPED_POS: frozenset[str] = frozenset(
    {"助詞", "助動詞", "補助記号", "記号", "空白", "感動詞", "接続詞"}
)
"""Sudachi parts of speech that never carry topic: particles, auxiliaries, punctuation."""

_JAPANESE_RE = re.compile(r"[\u3040-\u309f\u30a0-\u30ff\u3400-\u4dbf\u4e00-\u9fff\u3005]")
_LATIN_TOKEN_RE = re.compile(
    r"(?<![\d.,:/-])\d{1,2}(?:[:-]|-on-)\d{1,2}(?![\d:/]|[.,-]\d)"
    r"|\d+(?:[.,]\d+)*|[^\W\d_]+(?:['’][^\W\d_]+)*"
)
_PAIR_RE = re.compile(r"^(\d{1,2})(?:[:-]|-on-)(\d{1,2})$")
_ONE_ON_ONE_RE = re.compile(r"\bone[- ]on[- ]one\b")
_THOUSANDS_RE = re.compile(r"(?<=\d),(?=\d{3}(?:\D|$))")
_KEYWORD_RE = re.compile(r"[\u3005\u3400-\u4dbf\u4e00-\u9fff\u30a1-\u30fa\u30fc-\u30ff]{2,}")
_KEYWORD_FULL_RE = re.compile(r"^[\u3005\u3400-\u4dbf\u4e00-\u9fff\u30a1-\u30fa\u30fc-\u30ff]+$")
_ASCII_LETTER_RE = re.compile(r"[A-Za-z]")
_SUDACHI_CHUNK = 4000
"""Characters per Sudachi call: well under its input limit (~49 KB of UTF-8)."""


@functools.cache
def _dictionary() -> Dictionary:
    """Load the Sudachi dictionary once (~0.2 s)."""
    return Dictionary(dict="core")


@functools.cache
def _sudachi() -> Tokenizer:
    return _dictionary().tokenizer(mode=SplitMode.C)


@functools.cache
def _dropped() -> PosMatcher:
    """Matches particles, auxiliaries, punctuation… in C, without building POS tuples."""
    return _dictionary().pos_matcher(lambda pos: pos[0] in _DROPPED_POS)


def normalize_text(text: str) -> str:
    """NFKC: full-width digits/letters and half-width katakana get one spelling."""
    return unicodedata.normalize("NFKC", text)


def contains_japanese(text: str) -> bool:
    """True when the text has hiragana, katakana or kanji."""
    return _JAPANESE_RE.search(text) is not None


def _singular(word: str) -> str:
    """A deliberately tiny plural folding, enough for "days"/"day", "policies"/"policy"."""
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("sses"):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is", "os")):
        return word[:-1]
    return word


def _latin_words(text: str) -> list[str]:
    """Lower-cased words and numbers, before stop-word removal."""
    text = _ONE_ON_ONE_RE.sub("1-1", _THOUSANDS_RE.sub("", text.lower()))
    return _LATIN_TOKEN_RE.findall(text.replace("’", "'"))


@functools.lru_cache(maxsize=1 << 16)
def _latin_token(word: str) -> str | None:
    """The token of one lower-cased word, or None for a stop word (cached: words repeat)."""
    if "'" in word:
        word = word.split("'", 1)[0]
    if not word or word in ENGLISH_STOP_WORDS:
        return None
    if len(word) == 1 and not word.isdigit():
        return None
    if not word.isalpha():
        return word
    return _singular(word)


def _latin_tokens(text: str) -> list[str]:
    tokens: list[str] = []
    for word in _latin_words(text):
        pair = _PAIR_RE.match(word)
        if pair:
            # "1:1", "1-1", "1-on-1" name one thing (a meeting, a ratio): one spelling,
            # and the two numbers still count on their own.
            tokens.extend((f"{pair.group(1)}-{pair.group(2)}", pair.group(1), pair.group(2)))
        elif (token := _latin_token(word)) is not None:
            tokens.append(token)
    return tokens


@functools.lru_cache(maxsize=1 << 16)
def _latin_surface_tokens(surface: str) -> tuple[str, ...]:
    """Tokens of a non-Japanese Sudachi morpheme (cached: they repeat)."""
    return tuple(_latin_tokens(surface))


def _sudachi_pieces(text: str) -> Iterator[str]:
    """Split long text on line boundaries so each Sudachi call stays small."""
    start = 0
    while start < len(text):
        end = min(len(text), start + _SUDACHI_CHUNK)
        if end < len(text):
            cut = text.rfind("\n", start, end)
            if cut > start:
                end = cut + 1
        yield text[start:end]
        start = end


def _japanese_tokens(text: str) -> Iterator[str]:
    tokenizer = _sudachi()
    dropped = _dropped()
    for piece in _sudachi_pieces(text):
        for morpheme in tokenizer.tokenize(piece):
            if dropped(morpheme):
                continue
            surface = morpheme.surface()
            if not surface.strip():
                continue
            if not contains_japanese(surface):
                yield from _latin_surface_tokens(surface)
                continue
            word = _japanese_word(morpheme.normalized_form(), surface)
            if word is None:
                continue  # a stop word: its parts ("何日" → "日") are noise too
            yield word
            if len(surface) > 2:
                parts = morpheme.split(SplitMode.A)
                if len(parts) > 1:
                    for part in parts:
                        if dropped(part):
                            continue
                        piece = _japanese_word(part.normalized_form(), part.surface())
                        if piece is not None:
                            yield piece


@functools.lru_cache(maxsize=1 << 16)
def _japanese_word(normalized: str, surface: str) -> str | None:
    """The token for one Sudachi word, or None for a stop word."""
    # Sudachi normalises some katakana loan words to English ("remote work"): keep the
    # surface then, the English words are already covered by the Latin rules.
    word = (surface if _ASCII_LETTER_RE.search(normalized) else normalized).lower()
    if not word or word in JAPANESE_STOP_WORDS or word in ENGLISH_STOP_WORDS:
        return None
    return word


def search_terms(text: str) -> list[str]:
    """The terms documents are indexed and queries searched by (see the module notes)."""
    return tokenize(text)


def tokenize(text: str) -> list[str]:
    """Content tokens of a document or a query, in text order (duplicates kept: tf counts)."""
    text = normalize_text(text)
    if contains_japanese(text):
        return list(_japanese_tokens(text))
    return list(_latin_tokens(text))


def extract_keywords(text: str) -> list[str]:
    """The seed's must-have keywords: kanji/katakana runs of ≥ 2 characters (and
    whitespace-separated tokens made only of kanji/katakana), plus Latin content words of
    ≥ 3 characters. De-duplicated; Japanese keywords first, each group in text order."""
    text = normalize_text(text)
    seen: dict[str, None] = {}
    for token in text.split():
        runs = [token] if _KEYWORD_FULL_RE.match(token) else _KEYWORD_RE.findall(token)
        for run in runs:
            if run not in JAPANESE_STOP_WORDS:
                seen.setdefault(run, None)
    for word in _latin_tokens(_JAPANESE_RE.sub(" ", text)):
        if len(word) >= 3:
            seen.setdefault(word, None)
    return list(seen)
