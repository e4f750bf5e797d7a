"""Make a model's answer safe to post in Slack, whatever the model wrote.

A model can be talked into (or simply produce) text that Slack turns into actions: a
`<!channel>` / `<!here>` / `<!everyone>` broadcast, a `<@U123>` or `<!subteam^S1>`
mention that pings people, or a link to a place no source mentioned. `sanitize_answer`
neutralises all of these and keeps the text readable. It is a pure function so every
path that posts an answer can apply the same rule.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_URL = re.compile(r"""(?:https?|ftp)://[^\s<>|"'`)\]]+|mailto:[^\s<>|"'`)\]]+""", re.IGNORECASE)
_ANGLE = re.compile(r"<([^<>\n]{1,500})>")
_SPECIAL = re.compile(r"^[!@#]")
_BARE_BROADCAST = re.compile(r"(?<![\w&])@(channel|here|everyone)\b", re.IGNORECASE)
_TRAILING = ".,;:!?"


def urls_in(texts: Iterable[str]) -> set[str]:
    """Every URL the sources mention (the only links an answer may carry)."""
    found: set[str] = set()
    for text in texts:
        for match in _URL.finditer(text or ""):
            found.add(_normalise(match.group(0)))
    return found


def _normalise(url: str) -> str:
    return url.rstrip(_TRAILING).rstrip("/").lower()


def _allowed(url: str, allowed: set[str]) -> bool:
    return _normalise(url) in allowed


def _bare(url: str, allowed: set[str]) -> str:
    """A bare URL kept when allowed, else replaced; trailing punctuation is not the URL's."""
    core = url.rstrip(_TRAILING)
    trail = url[len(core) :]
    return (core if _allowed(core, allowed) else "(link removed)") + trail


def sanitize_answer(text: str, allowed_urls: Iterable[str] = ()) -> str:
    """The answer with no broadcasts, no mentions and only the links the sources gave.

    - `<!channel>`, `<!here>`, `<!everyone>`, `<@U…>`, `<!subteam^…>`, `<#C…>` and
      any other `<…>` Slack control sequence lose their angle brackets' power: the
      brackets become `&lt;`/`&gt;`, so Slack shows the text instead of acting on it.
    - a bare `@channel` / `@here` / `@everyone` gets a full-width `＠` (a zero-width
      joiner would not survive the output sanitiser, `blocks.sanitize`, which strips it).
    - `<url|label>` and bare URLs not among `allowed_urls` become "label (link removed)"
      / "(link removed)"; allowed ones stay.
    """
    allowed = {_normalise(u) for u in allowed_urls}

    def angle(match: re.Match[str]) -> str:
        inner = match.group(1)
        target, _, label = inner.partition("|")
        if _URL.fullmatch(target.strip()):
            if _allowed(target.strip(), allowed):
                return match.group(0)
            return f"{label.strip()} (link removed)" if label.strip() else "(link removed)"
        if _SPECIAL.match(inner):
            return f"&lt;{inner}&gt;"
        return match.group(0)

    # Links and control sequences in Slack's <…> syntax first, then bare URLs outside them.
    text = _ANGLE.sub(angle, text)
    parts = re.split(r"(<[^<>\n]{1,500}>)", text)
    for index, part in enumerate(parts):
        if index % 2 == 1:  # an allowed <url|label> kept above
            continue
        part = _URL.sub(lambda m: _bare(m.group(0), allowed), part)
        part = part.replace("<!", "&lt;!").replace("<@", "&lt;@").replace("<#", "&lt;#")
        parts[index] = _BARE_BROADCAST.sub(lambda m: "＠" + m.group(1), part)
    return "".join(parts)
