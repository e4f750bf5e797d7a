"""The citation mark taken out of an answer's words (agent/citations.py)."""

from __future__ import annotations

from agent.citations import strip_citations


def test_a_mark_is_taken_out_with_or_without_the_space_before_it() -> None:
    said = "Kept 30 days [Source: a.md]. Then deleted [Source: b.md]"
    assert strip_citations(said) == "Kept 30 days . Then deleted "
    assert strip_citations(said, gap=" ") == "Kept 30 days  . Then deleted  "
    assert strip_citations(said, with_space=True) == "Kept 30 days. Then deleted"
