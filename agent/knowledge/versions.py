"""Which documents are versions of one another, and which version is current.

Knowledge bases keep outdated copies next to the live page ("expenses.md" beside
"expenses_2024-03-01.md", "車両管理規程.md" beside "車両管理規程_令和3年版.md"). Search should
prefer the current one and say of the other "this is an older copy of X", so answers
and confidence can tell a stale value from a contradiction.

- Two files are versions of one document when their names match once dates and version
  marks are removed (`document_key`) and their titles (front matter or first heading)
  are the same once version numbers are removed (`title_key`: "charter-1.1.md", "Widget
  Charter, Version 1.1" and "charter-2.0.md", "…, Version 2.0").
- When every version carries a version number (in its name, else its title: "_2.0",
  "v2", "Version 3", "rev B"), the highest is current.
- A date or a release number ("_2.4", "_tool-2.4") in a file name marks a snapshot: a
  version whose name carries neither is the living document, and supersedes the others.
  When every name is dated the newest name wins; when none is, the newest date found in
  the text (front matter `date` / `updated`, "Last updated: …", 改定 / 施行 lines) wins.
  Ties decide nothing.
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from agent.schemas import Source

__all__ = [
    "DocumentInfo",
    "Family",
    "current_versions",
    "date_in_name",
    "date_in_text",
    "document_key",
    "families",
    "front_matter_fields",
    "front_matter_title",
    "is_revision_line",
    "source_families",
    "title_key",
    "version_in",
]

_ERAS = {"令和": 2018, "平成": 1988, "昭和": 1925}
_MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("jan", "january"),
            ("feb", "february"),
            ("mar", "march"),
            ("apr", "april"),
            ("may",),
            ("jun", "june"),
            ("jul", "july"),
            ("aug", "august"),
            ("sep", "sept", "september"),
            ("oct", "october"),
            ("nov", "november"),
            ("dec", "december"),
        ],
        start=1,
    )
    for name in names
}
_MONTH_RE = "|".join(sorted(_MONTHS, key=len, reverse=True))

_ISO_RE = re.compile(
    r"(?<!\d)((?:19|20)\d{2})[-_./]?(0[1-9]|1[0-2])[-_./]?(0[1-9]|[12]\d|3[01])(?!\d)"
)
_YEAR_MONTH_RE = re.compile(r"(?<!\d)((?:19|20)\d{2})[-_./](0?[1-9]|1[0-2])(?![\d])")
_YEAR_RE = re.compile(r"(?<![\d])((?:19|20)\d{2})(?![\d])")
_ERA_RE = re.compile(
    r"(令和|平成|昭和)\s*(\d{1,2}|元)\s*年(?:\s*(\d{1,2})\s*月(?:\s*(\d{1,2})\s*日)?)?"
)
_KANJI_DATE_RE = re.compile(r"((?:19|20)\d{2})\s*年\s*(\d{1,2})\s*月(?:\s*(\d{1,2})\s*日)?")
_SLASH_DATE_RE = re.compile(r"(?<!\d)((?:19|20)\d{2})/(\d{1,2})/(\d{1,2})(?!\d)")
_WORD_DATE_RE = re.compile(
    rf"\b({_MONTH_RE})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+((?:19|20)\d{{2}})\b"
    rf"|\b(\d{{1,2}})\s+({_MONTH_RE})\.?,?\s+((?:19|20)\d{{2}})\b",
    re.IGNORECASE,
)
_REVISION_LINE_RE = re.compile(
    r"last[ -]?updated|last[ -]?modified|updated|revised|revision|effective|as of"
    r"|改定|改訂|改正|更新|施行|制定|最終",
    re.IGNORECASE,
)
_VERSION_MARK_RE = re.compile(
    r"(?:^|[\s_\-.()\[\]（）【】])"
    r"(?:v\d+(?:\.\d+)*|ver\d*|version\d*|old|older|previous|prev|archived?|backup|bak|copy"
    r"|draft|final|latest|current|new|旧|旧版|最新|最新版|改訂版|改定版|版)"
    r"(?=$|[\s_\-.()\[\]（）【】])",
    re.IGNORECASE,
)
_VERSION_TAG_RE = re.compile(r"(?<=\w)[\s_\-]+(?:[a-z]+[\s_\-]?)?v?\d+(?:\.\d+)+$")
"""A release number at the end of a name ("guide_2.4", "guide_tool-2.4"): a snapshot."""
_VERSION_WORD_RE = re.compile(
    r"(?<![a-z0-9])(?:version|ver\.?|v|revision|rev\.?|release|rel\.?)\s*"
    r"(\d+(?:\.\d+)*)(?!\w|\.\d)",
    re.IGNORECASE,
)
"""An explicit version mark: "Version 1.1", "v2", "ver. 3", "release 2.3"."""
_REVISION_LETTER_RE = re.compile(
    r"(?<![A-Za-z0-9])(?:[Rr]evision|[Rr]ev\.?)\s*([A-Z])(?![A-Za-z0-9])"
)
"""A lettered revision: "rev B", "Revision C"."""
_DOTTED_RE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)+)(?!\w|\.\d)")
"""A dotted release number standing alone ("Charter 1.0", "charter-2.0"): a version."""
_NAME_VERSION_RE = re.compile(r"(?<=[a-z])[\s_\-]+v?(\d+(?:\.\d+)+)$|(?<=[a-z])[\s_\-]+v(\d+)$")
"""A version at the end of a file name ("charter-2.0", "guide_v3")."""
_FRONT_FIELD_RE = re.compile(r"^([A-Za-z_][\w-]*)\s*:\s*(.*?)\s*$")
_TITLE_FIELDS = ("title", "name")
_DATE_FIELDS = (
    "updated",
    "last_updated",
    "last-updated",
    "lastmod",
    "modified",
    "last_modified",
    "revised",
    "date",
    "effective",
    "effective_date",
)
_TEXT_SCAN_LINES = 4000
"""Lines of a document scanned for revision dates (the head and the tail)."""


def _date(year: int, month: int = 1, day: int = 1) -> dt.date | None:
    try:
        return dt.date(year, month, day)
    except ValueError:
        return None


def _era_date(match: re.Match[str]) -> dt.date | None:
    era, year, month, day = match.groups()
    number = 1 if year == "元" else int(year)
    return _date(_ERAS[era] + number, int(month or 1), int(day or 1))


def _dates_in(text: str) -> list[dt.date]:
    """Every date written in `text`, in any of the supported spellings."""
    found: list[dt.date | None] = []
    found += [_date(int(y), int(m), int(d)) for y, m, d in _ISO_RE.findall(text)]
    found += [_date(int(y), int(m), int(d)) for y, m, d in _SLASH_DATE_RE.findall(text)]
    found += [_era_date(m) for m in _ERA_RE.finditer(text)]
    found += [_date(int(y), int(m), int(d or 1)) for y, m, d in _KANJI_DATE_RE.findall(text)]
    for match in _WORD_DATE_RE.finditer(text):
        m1, d1, y1, d2, m2, y2 = match.groups()
        if m1:
            found.append(_date(int(y1), _MONTHS[m1.lower()], int(d1)))
        else:
            found.append(_date(int(y2), _MONTHS[m2.lower()], int(d2)))
    return [d for d in found if d is not None]


def date_in_name(name: str) -> dt.date | None:
    """The date a file name carries ("expenses_2024-03-01.md", "規程_令和3年版.md")."""
    stem = unicodedata.normalize("NFKC", name.rsplit(".", 1)[0])
    dates = _dates_in(stem)
    if not dates:
        dates = [d for y, m in _YEAR_MONTH_RE.findall(stem) if (d := _date(int(y), int(m)))]
    if not dates:
        dates = [d for y in _YEAR_RE.findall(stem) if (d := _date(int(y)))]
    return max(dates) if dates else None


def date_in_text(text: str, front_matter: Mapping[str, str] | None = None) -> dt.date | None:
    """The newest revision date a document states: front matter, or lines that say
    "updated", "revised", "effective", 改定, 施行 … next to a date."""
    for field in _DATE_FIELDS:
        value = (front_matter or {}).get(field)
        if value:
            dates = _dates_in(unicodedata.normalize("NFKC", value))
            if dates:
                return max(dates)
    lines = text.split("\n")
    if len(lines) > _TEXT_SCAN_LINES:
        half = _TEXT_SCAN_LINES // 2
        lines = lines[:half] + lines[-half:]
    dates: list[dt.date] = []
    for line in lines:
        if _REVISION_LINE_RE.search(line):
            dates += _dates_in(unicodedata.normalize("NFKC", line))
    return max(dates) if dates else None


def _name_stem(name: str) -> str:
    """A file name without its extension, NFKC-normalised and lower-cased."""
    return unicodedata.normalize("NFKC", name.rsplit(".", 1)[0]).lower()


def document_key(name: str) -> str:
    """The file name without extension, dates and version marks: what versions share."""
    stem = _name_stem(name)
    stem = _VERSION_TAG_RE.sub("", stem) or stem
    for pattern in (_ERA_RE, _ISO_RE, _KANJI_DATE_RE, _YEAR_MONTH_RE, _YEAR_RE):
        stem = pattern.sub(" ", stem)
    stem = re.sub(r"年度?版?", " ", stem) if "年" in stem else stem
    previous = None
    while previous != stem:
        previous = stem
        stem = _VERSION_MARK_RE.sub(" ", stem)
    return re.sub(r"[\s_\-.()\[\]（）【】]+", " ", stem).strip()


def _version_tuple(mark: str) -> tuple[int, ...]:
    if mark.isalpha():  # "rev B": letters count up
        return (ord(mark.lower()) - ord("a") + 1,)
    return tuple(int(n) for n in mark.split("."))


def version_in(text: str) -> tuple[int, ...] | None:
    """The version a file name or title states ("charter-2.0.md" → (2, 0), "Guide, Version 3"
    → (3,), "spec rev B" → (2,)), or None. A bare number ("chapter-2") is no version."""
    text = unicodedata.normalize("NFKC", text)
    stem = text.rsplit(".", 1)[0] if re.search(r"\.[A-Za-z]\w{0,4}$", text) else text
    match = _VERSION_WORD_RE.search(stem) or _REVISION_LETTER_RE.search(stem)
    if match:
        return _version_tuple(match.group(1))
    match = _NAME_VERSION_RE.search(stem.lower())
    if match:
        return _version_tuple(match.group(1) or match.group(2))
    match = _DOTTED_RE.search(stem)
    if match and not _ISO_RE.search(match.group(1)):
        return _version_tuple(match.group(1))
    return None


def title_key(title: str) -> str:
    """A title without its version numbers: what versions of one document share."""
    text = _REVISION_LETTER_RE.sub(" ", unicodedata.normalize("NFKC", title)).lower()
    text = _VERSION_WORD_RE.sub(" ", text)
    text = _DOTTED_RE.sub(" ", text)
    return " ".join(re.findall(r"\w+", text))


def front_matter_fields(lines: Sequence[str]) -> dict[str, str]:
    """Simple `key: value` lines of YAML front matter, keys lower-cased."""
    fields: dict[str, str] = {}
    for line in lines:
        match = _FRONT_FIELD_RE.match(line)
        if match:
            fields[match.group(1).lower()] = match.group(2).strip().strip("'\"")
    return fields


def front_matter_title(fields: Mapping[str, str]) -> str:
    return next((fields[f] for f in _TITLE_FIELDS if fields.get(f)), "")


def is_revision_line(line: str) -> bool:
    """Whether a line may state a revision date ("Last updated: …", 改定, 施行 …)."""
    return _REVISION_LINE_RE.search(line) is not None


@dataclass(frozen=True)
class DocumentInfo:
    """What version resolution needs to know about one stored document."""

    source: str
    key: str
    title: str = ""
    name_date: str | None = None
    """ISO date from the file name, if it has one."""
    text_date: str | None = None
    """ISO date of the newest revision the text states, if any."""


def _is_snapshot_name(source: str) -> bool:
    return _VERSION_TAG_RE.search(_name_stem(source)) is not None


def _version_of(member: DocumentInfo) -> tuple[int, ...] | None:
    return version_in(member.source) or (version_in(member.title) if member.title else None)


def _by_version(members: Sequence[DocumentInfo]) -> DocumentInfo | None:
    """The highest version, when every member states one and one is highest."""
    versions = [(v, m) for m in members if (v := _version_of(m)) is not None]
    if len(versions) != len(members):
        return None
    width = max(len(v) for v, _ in versions)
    ordered = sorted(
        ((v + (0,) * (width - len(v)), m) for v, m in versions), key=lambda p: p[0], reverse=True
    )
    return ordered[0][1] if ordered[0][0] != ordered[1][0] else None


def _pick_current(members: Sequence[DocumentInfo]) -> DocumentInfo | None:
    highest = _by_version(members)
    if highest is not None:
        return highest
    undated = [m for m in members if m.name_date is None and not _is_snapshot_name(m.source)]
    if undated and len(undated) < len(members):
        return undated[0] if len(undated) == 1 else None
    attribute = "name_date" if not undated else "text_date"
    dated = [m for m in members if getattr(m, attribute)]
    if len(dated) != len(members):
        return None
    ordered = sorted(dated, key=lambda m: getattr(m, attribute), reverse=True)
    if getattr(ordered[0], attribute) == getattr(ordered[1], attribute):
        return None
    return ordered[0]


def current_versions(documents: Sequence[DocumentInfo]) -> dict[str, str | None]:
    """For each source, the source that supersedes it (None when it is current)."""
    families = _families(documents)
    result: dict[str, str | None] = {d.source: None for d in documents}
    for members in families:
        if len(members) < 2:
            continue
        current = _pick_current(members)
        if current is None:
            continue
        for member in members:
            if member.source != current.source:
                result[member.source] = current.source
    return result


def _families(documents: Sequence[DocumentInfo]) -> list[list[DocumentInfo]]:
    """Documents grouped as versions of one another: the same name and title once dates
    and version numbers are removed. Equal titles alone are not enough ("Widget 3.10
    release notes" and "Widget 3.11 release notes" in files of their own are two documents)."""
    groups: dict[tuple[str, str], list[DocumentInfo]] = {}
    for document in documents:
        groups.setdefault((document.key, title_key(document.title)), []).append(document)
    return list(groups.values())


_STALE_WORD_RE = re.compile(
    r"(?:^|[\s_\-.()\[\]（）【】])(?:old|older|previous|prev|archived?|backup|bak|copy|draft"
    r"|旧|旧版)(?=$|[\s_\-.()\[\]（）【】])",
    re.IGNORECASE,
)
"""A word in a file name that calls it an older copy ("policy-old.md", "規程_旧版.md")."""


@dataclass(frozen=True)
class Family:
    """The document a source is a version of (`key`), and whether it is an older copy."""

    key: str
    stale: bool


def families(names: Sequence[str]) -> dict[str, Family]:
    """Versions of one document told by their names alone (`x.md`, `x_2024-03-01.md`,
    `x_令和3年版.md`), with the same rules as `current_versions`; when those leave the
    current copy open, the one name not marked old (`x-old.md`, `x_backup.md`) is
    current. A name with no sibling is its own current family."""
    groups: dict[str, list[str]] = {}
    for name in names:
        groups.setdefault(document_key(name) or name, []).append(name)
    out: dict[str, Family] = {}
    for key, members in groups.items():
        if len(members) == 1:
            out[members[0]] = Family(key=members[0], stale=False)
            continue
        current = _current_by_name(members)
        for member in members:
            out[member] = Family(key=key, stale=current is not None and member != current)
    return out


def _current_by_name(members: Sequence[str]) -> str | None:
    infos = [
        DocumentInfo(
            source=m,
            key=document_key(m),
            name_date=date.isoformat() if (date := date_in_name(m)) else None,
        )
        for m in members
    ]
    current = _pick_current(infos)
    if current is not None:
        return current.source
    fresh = [m for m in members if not _STALE_WORD_RE.search(_name_stem(m))]
    return fresh[0] if len(fresh) == 1 else None


def source_families(passages: Sequence[Source]) -> dict[str, Family]:
    """Families of the passages' documents: what the knowledge base knows (a source
    marked stale and superseded by another) first, else what the names tell."""
    out = families(sorted({p.source for p in passages}))
    titles = {p.source: title_key(p.doc_title) for p in passages if p.doc_title}
    by_name = dict(out)
    for source, family in by_name.items():
        # Names alike, titles not ("intro-1.0.md": "Intro to X", "intro-2.0.md": "Intro to
        # Y"): two documents, not versions, unless the knowledge base says otherwise.
        kin = [s for s, f in by_name.items() if f.key == family.key and s in titles]
        if source in titles and len({titles[s] for s in kin}) > 1:
            out[source] = Family(key=source, stale=False)
    for p in passages:
        if p.stale and p.superseded_by:
            current = out.get(p.superseded_by)
            key = current.key if current else p.superseded_by
            out[p.source] = Family(key=key, stale=True)
            out[p.superseded_by] = Family(key=key, stale=False)
    return out
