"""Whether a person's reply to an escalation states a fact or narrows the question."""

from __future__ import annotations

from agent.evidence.patterns import CUE_KINDS, CUES, compiled
from agent.knowledge.tokenize import contains_japanese

_STATEMENT = compiled(CUES, CUE_KINDS)["statement"]


STATEMENT_WORDS = 3
"""A stated fact takes at least a subject, a verb and what is said."""
STATEMENT_CHARS_JA = 8
"""Japanese has no spaces between words: eight characters make about a short sentence."""


def supplies_facts(reply: str) -> bool:
    """Does a reply to an escalation state a fact ("It is Reykjavik, according to the
    office wiki") rather than narrow the question ("for contractors")? A fact is
    a source to answer from; a narrowing is more words to search with."""
    words = reply.split()
    return (len(words) >= STATEMENT_WORDS and bool(_STATEMENT.search(reply))) or (
        contains_japanese(reply)
        and len(reply) >= STATEMENT_CHARS_JA
        and bool(_STATEMENT.search(reply))
    )
