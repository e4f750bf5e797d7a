"""Cutting a passage into quotable units: sentences, list items, and table rows with
their header, each with its context (the heading trail and the line introducing a list)."""

from __future__ import annotations

import re

from agent.evidence.patterns import CUE_KINDS, CUES, compiled
from agent.knowledge.chunking import QUESTION_CHARS, question_lines
from agent.knowledge.tokenize import normalize_text

_SENTENCE_END = re.compile(
    r"(?<=[.!?])(?<!\bi\.e\.)(?<!\be\.g\.)(?<!\bie\.)(?<!\beg\.)\s+(?=[A-Z0-9\"'(*_\[$#])"
    r"|(?<=[。！？])"
)
"""A sentence ends at a full stop before a capital, a digit or a quote, but not after
"i.e." or "e.g." (dotted or not): "Use the short form, eg. \"cfg\", in names." is one
sentence."""
_INLINE_ITEM = re.compile(r"(?<!\d)\s+[-•*]\s+(?=\S)")
_ITEM_PREFIX = re.compile(r"^\s*(?:[-*•+](?=\s)|\d+[.)]|[(（]\d+[)）]|[QA][:：])\s*")
_TABLE_SEPARATOR = re.compile(r"^\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?$")
_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|$)", re.S)
_MARKUP = re.compile(r"\*\*|__|`|\[([^\]]*)\]\([^)]*\)")
_QUOTE = re.compile(r"(?:^|\s)>\s*(?:\[!\w+\]\s*)?|\[!\w+\]")
_RULE = re.compile(r"^[-=*_~]{3,}$")
_QUESTION_PREFIX = re.compile(r"^\s*[QＱ][:：]")
_POINTS_AHEAD = compiled(CUES, CUE_KINDS)["points_ahead"]


LEAD_IN_CHARS = 200
"""A line ending in a colon introduces what follows only when it is shorter than this;
a longer one is content that happens to end so."""
MIN_UNIT_CHARS = 4
"""Shorter pieces ("e.g.", "1.") are no sentences."""


def _clean(text: str) -> str:
    text = _MARKUP.sub(lambda m: m.group(1) or "", text)
    text = _QUOTE.sub(" ", text)  # Markdown block quotes and callouts ("> [!NOTE]")
    return re.sub(r"\s+", " ", text).strip()


def _table_row(header: list[str], cells: list[str]) -> str:
    if header and len(header) == len(cells):
        return "; ".join(f"{h}: {c}" if h else c for h, c in zip(header, cells, strict=True) if c)
    return " | ".join(cells)


def _cells(line: str) -> list[str]:
    return [_clean(c) for c in line.strip().strip("|").split("|")]


def split_units(text: str) -> list[tuple[str, str]]:
    """(unit, context) pairs of a chunk: sentences, list items, table rows with their
    header. The context is the heading trail plus the line introducing a list."""
    return [(unit, context) for unit, context, _ in split_blocks(text)]


def split_blocks(text: str) -> list[tuple[str, str, int]]:
    """`split_units` with each unit's block: the number of the paragraph, list item or
    table row it came from. A reference page's entry is one block ("IDLE_LIMIT The idle
    time … Defaults to 30."): its sentences answer together."""
    text = _HTML_COMMENT.sub(" ", text)  # a template's instructions, not its content
    lines = normalize_text(text).replace("\r", "").split("\n")
    heading = ""
    if (
        lines
        and lines[0].strip()
        and not re.search(r"[.。!?！？]$", lines[0].strip())
        and not _RULE.match(lines[0].strip())
    ):
        first = lines[0].strip()
        # A heading stands on its own line; a plain-text passage's first line is often
        # the start of a wrapped sentence ("The widget stores its cache in the"), no title.
        if " › " in first or first.startswith("#") or (len(lines) > 1 and not lines[1].strip()):
            heading = first.lstrip("#").strip()
            lines = lines[1:]
    out: list[tuple[str, str, int]] = []
    lead = ""
    header: list[str] = []
    paragraph: list[str] = []

    in_item = False
    # An FAQ's question is the subject of the answer below it: "Why is the build slow?"
    # then "Caching is off by default." The question's words are the answer's context,
    # as a heading's would be, until the next question, heading or rule line.
    # An entry after a rule line may open with its problem stated, not asked ("-----",
    # "The printer shows error 5.", then the fix): that short first paragraph is held,
    # and becomes the subject if an answer follows it, else is quoted as it is.
    subject = ""
    asked_last = False  # the paragraph just ended was a question (one may follow another)
    entry_start = False  # a rule line was just passed
    held: list[str] = []

    def release() -> None:
        """The held paragraph had no answer after it: it is content after all."""
        if held:
            _sentences_into(" ".join(held), _join(heading, subject), lead, out)
            held.clear()

    def flush() -> None:
        nonlocal in_item, subject, asked_last, entry_start
        was_item, in_item = in_item, False
        if not paragraph:
            return
        plain = not (was_item or in_code)
        asked, rest = _question_lines(paragraph) if plain else ([], paragraph)
        if held and asked:
            release()
        elif held:
            subject = _clean(" ".join(held))
            held.clear()
        if entry_start and plain and not asked and len(" ".join(paragraph)) <= QUESTION_CHARS:
            entry_start = False
            held.extend(paragraph)
            paragraph.clear()
            return
        entry_start = False
        if asked:
            question = _clean(" ".join(asked))
            subject = f"{subject} {question}" if asked_last else question
        asked_last = bool(asked) and not rest
        if rest:
            _sentences_into(" ".join(rest), _join(heading, subject), lead, out)
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
            release()
            heading = _join(heading.split(" › ")[0] if heading else "", line.lstrip("#").strip())
            lead = subject = ""
            continue
        if _RULE.match(line):
            # "-----" between FAQ entries ends an answer; "=====" under a question
            # underlines it (a Setext heading), so that question stays the subject.
            flush()
            release()
            entry_start = not asked_last
            subject = subject if asked_last else ""
            asked_last = False
            lead = ""
            continue
        if _ITEM_PREFIX.match(raw) and not re.match(r"^\s*\d+\.\d", raw):
            flush()
            item = _ITEM_PREFIX.sub("", line)
            if item.endswith((":", "：")):
                lead = _clean(item)
                continue
            paragraph.append(item)  # its indented continuation lines join it
            # "Q: Can I …?" is an FAQ's question, not a list item
            in_item = not _QUESTION_PREFIX.match(raw)
            if _POINTS_AHEAD.search(item):
                # "3. New staff receive leave as follows." introduces the items after it,
                # as a line ending in a colon does, and says something itself.
                flush()
                lead = _clean(item)
            continue
        if in_item and paragraph and raw[:1].isspace():
            paragraph.append(line)  # "- Travel is booked\n  through the portal."
            continue
        if in_item:
            flush()
        if line.endswith((":", "：")) and len(line) < LEAD_IN_CHARS:
            flush()
            # Only the last sentence introduces what follows; the ones before it are
            # content ("`widgetctl` takes a flag … This is the limit. For example:").
            *said, last = _SENTENCE_END.split(_clean(line)) or [""]
            if said:
                _sentences_into(" ".join(said), heading, "", out)
            lead = last
            continue
        lead = "" if not paragraph else lead
        paragraph.append(line)
        if _POINTS_AHEAD.search(line):
            flush()  # "Fees are set as follows." introduces the list or table after it
            lead = _SENTENCE_END.split(_clean(line))[-1]
    flush()
    release()
    return out


def _question_lines(lines: list[str]) -> tuple[list[str], list[str]]:
    """The question a paragraph opens with, and the rest: "2.3. Why does it hang?" on
    one line, its answer on the next, with no blank line between."""
    asked = question_lines(lines)
    return lines[:asked], lines[asked:]


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
            if len(sentence) < MIN_UNIT_CHARS or not re.search(r"\w", sentence):
                continue
            if sentence.endswith("?") or sentence.endswith("？"):
                continue  # a question is not an answer
            out.append((sentence, _join(heading, lead), block))


def _whole_sentences(pieces: list[str]) -> list[str]:
    """Pieces re-joined where a split fell inside parentheses: "(resp. PORT_MAX) is 9000"
    or "(e.g. Foo)" is no sentence end."""
    out: list[str] = []
    for piece in pieces:
        last = out[-1] if out else ""
        if last.count("(") + last.count("（") > last.count(")") + last.count("）"):
            out[-1] = f"{out[-1]} {piece}"
        else:
            out.append(piece)
    return out
