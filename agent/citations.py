"""The citation mark an answer ends a statement with: "… [Source: handbook.md]". Every
model is asked for it (agent/prompts.py) and the offline one writes it itself; what reads
an answer's words (to compare, to measure, to save) takes the marks out here."""

from __future__ import annotations

import re

_MARK = r"\[Source: [^\]]*\]"
CITATION = re.compile(_MARK)
"""One citation mark, whatever it names."""
_SPACED_CITATION = re.compile(r"\s*" + _MARK)


def strip_citations(text: str, *, gap: str = "", with_space: bool = False) -> str:
    """The text without its citation marks: what the answer says, not where it comes
    from. Each mark becomes `gap` (a space keeps the words around it apart);
    `with_space` takes the spaces before a mark too, so that saved text reads as
    written ("Kept 30 days [Source: a]." → "Kept 30 days.")."""
    return (_SPACED_CITATION if with_space else CITATION).sub(gap, text)
