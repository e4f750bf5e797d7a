"""The one output sanitiser: every text GRACE posts passes through here.

- `strip_invisible`: bidi controls (U+202A–U+202E, U+2066–U+2069, U+200E/F) and
  zero-width characters (U+200B–U+200D, U+2060, U+FEFF) are removed — a document's
  `\\u202e05$\\u202c` would otherwise display as "$50". `scrub` applies it to a whole
  payload (blocks, `text`, stream chunks, views): the Slack client does, on every call.
- `escape_once`: `&`, `<`, `>` escaped for mrkdwn exactly once — an already escaped
  `&lt;!channel&gt;` stays as it is instead of showing as `&amp;lt;`.
- `rewrite_links`: one case-insensitive parser for links in model or document text —
  inline `[label](url)` (with spaces, any scheme case), reference-style `[label][ref]`
  with its `[ref]: url` line, and bare `HTTPS://…` — each shown with its address; a
  link that is not http(s) is dropped to its label.
- `literal`: Slack mrkdwn marks (`*`, `_`, `~`, backticks) in quoted document text are
  shown literally (as look-alike characters) so a source cannot style the message.

Pure functions, no Slack: `blocks.limits.escape_mrkdwn` and the answer builders use them.
"""

from __future__ import annotations

import re
from typing import Any

INVISIBLE = re.compile("[\u202a-\u202e\u2066-\u2069\u200e\u200f\u200b-\u200d\u2060\ufeff]")
_UNESCAPED_AMP = re.compile(r"&(?!(?:amp|lt|gt);)")
_MARKS = str.maketrans({"*": "∗", "_": "ˍ", "~": "∼", "`": "ˋ"})
"""mrkdwn has no escape character: marks become look-alikes that do not format."""

_URL = r"[a-z][a-z0-9+.-]*:[^\s<>()\[\]]*(?:\([^\s<>()]*\)[^\s<>()\[\]]*)*"
"""Any scheme (a non-web one is dropped to its label), one level of parentheses."""
_INLINE = re.compile(r"\[([^\]\n]+)\]\(\s*(" + _URL + r")\s*\)", re.IGNORECASE)
_REF_DEF = re.compile(r"^[ \t]*\[([^\]\n]+)\]:[ \t]*(\S+)[^\n]*\n?", re.IGNORECASE | re.MULTILINE)
_REF_USE = re.compile(r"\[([^\]\n]+)\]\[([^\]\n]*)\]")
_SCHEME = re.compile(r"\b(https?)://", re.IGNORECASE)


def strip_invisible(text: str) -> str:
    """`text` without bidi controls and zero-width characters."""
    return INVISIBLE.sub("", text)


def escape_once(text: str) -> str:
    """`&`, `<`, `>` escaped for mrkdwn; the entities `&amp;` `&lt;` `&gt;` already
    there are kept, not escaped again."""
    return _UNESCAPED_AMP.sub("&amp;", text).replace("<", "&lt;").replace(">", "&gt;")


def literal(text: str) -> str:
    """Quoted document text whose `*`, `_`, `~` and backticks do not format."""
    return text.translate(_MARKS)


def _is_web(url: str) -> bool:
    return url.lower().startswith(("http://", "https://"))


def _shown(label: str, url: str, *, brackets: bool) -> str:
    if not _is_web(url):
        return label  # javascript:, slack://, file://…: the label only
    url = _SCHEME.sub(lambda m: f"{m.group(1).lower()}://", url, count=1)
    target = f"<{url}>" if brackets else url
    return target if label.strip().lower() == url.lower() else f"{label} ({target})"


def rewrite_links(text: str, *, brackets: bool = True) -> str:
    """Every Markdown link shown with its address (`label (<url>)`; `brackets=False`
    for Markdown output, `label (url)`), reference-style ones resolved, non-web links
    reduced to their label, bare URLs' schemes lower-cased so Slack links them plainly."""
    refs: dict[str, str] = {}

    def define(match: re.Match[str]) -> str:
        refs[match.group(1).strip().lower()] = match.group(2)
        return ""

    text = _REF_DEF.sub(define, text)
    text = _INLINE.sub(lambda m: _shown(m.group(1), m.group(2), brackets=brackets), text)

    def use(match: re.Match[str]) -> str:
        label, ref = match.group(1), (match.group(2) or match.group(1)).strip().lower()
        url = refs.get(ref)
        return match.group(0) if url is None else _shown(label, url, brackets=brackets)

    text = _REF_USE.sub(use, text)
    return _SCHEME.sub(lambda m: f"{m.group(1).lower()}://", text)


def document_text(text: str, *, brackets: bool = True) -> str:
    """Model or document text for mrkdwn: invisible characters gone, escaped once,
    links shown by `rewrite_links`."""
    return rewrite_links(escape_once(strip_invisible(text)), brackets=brackets)


def quoted(text: str) -> str:
    """A passage quoted from a document: `document_text` with its marks literal."""
    return literal(document_text(text))


def scrub(value: Any) -> Any:
    """A payload (dicts, lists, strings) with `strip_invisible` applied to every string:
    what the Slack client does to every call, whoever built the payload."""
    if isinstance(value, str):
        return strip_invisible(value)
    if isinstance(value, dict):
        return {k: scrub(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [scrub(v) for v in value]
    return value
