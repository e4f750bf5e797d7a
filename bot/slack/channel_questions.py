"""Whether a message posted in a channel is a question GRACE should take up unasked
(a channel whose answer mode is `all`): people also chat, announce and thank there.

Deliberately plain: a question mark (either width), an English sentence opening with an
interrogative or auxiliary verb, or a Japanese sentence ending in the particle か."""

from __future__ import annotations

import re

_OPENERS = re.compile(
    r"^(?:how|what|why|where|when|who|whom|whose|which|is|are|am|was|were|do|does|did|"
    r"can|could|should|would|will|may|might|has|have|had)\b",
    re.IGNORECASE,
)
_MENTIONS = re.compile(r"<[@!#][^>]*>")
_JA_QUESTION = re.compile(r"か[。\s]*$")


def is_question(text: str) -> bool:
    """True for a message that asks something (mentions and links ignored)."""
    plain = _MENTIONS.sub(" ", text).strip()
    if len(plain) < 3:
        return False
    if "?" in plain or "？" in plain:
        return True
    return bool(_OPENERS.match(plain) or _JA_QUESTION.search(plain))
