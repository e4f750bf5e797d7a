"""Documents grouped into families, so a stale copy of a page (`policy_2024-01-31.md`
next to `policy.md`) counts as the same document, and the current one is known."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from agent.knowledge.versions import title_key
from agent.schemas import Source

_STALE_SUFFIX = re.compile(
    r"^(?P<stem>.+?)[ _\-]+(?P<tag>(?:19|20)\d\d(?:[-_.]?\d\d){0,2}|v\d+(?:\.\d+)*|old|"
    r"(?:[a-z]+[-_ ]?)?v?\d+(?:\.\d+)+|"
    r"archive[d]?|backup|copy|draft|previous|旧版?|(?:令和|平成|昭和)\S*?年版?|\d+年版?)$",
    re.IGNORECASE,
)
_VERSION_IN_NAME = re.compile(r"\d+(?:\.\d+)+")
_DATE_IN_NAME = re.compile(r"((?:19|20)\d\d)[-_.]?(\d\d)?[-_.]?(\d\d)?")


# ---------------------------------------------------------------- documents


@dataclass(frozen=True)
class Family:
    """The current name of a document and whether a given source is an older copy."""

    key: str
    stale: bool


def families(names: Sequence[str]) -> dict[str, Family]:
    """Group sources that are versions of one document (`x.md`, `x_2022-12-19.md`,
    `x_令和2年版.md`). The copy without a version tag is current; among tagged copies
    only, the latest date is. A name with no sibling is its own current family."""
    stems: dict[str, str] = {}
    tagged: dict[str, str] = {}
    for name in names:
        base = name.rsplit(".", 1)[0] if "." in name else name
        match = _STALE_SUFFIX.match(base)
        if match:
            stems[name] = match.group("stem")
            tagged[name] = match.group("tag")
        else:
            stems[name] = base
    by_stem: dict[str, list[str]] = defaultdict(list)
    for name, stem in stems.items():
        by_stem[stem].append(name)
    out: dict[str, Family] = {}
    for stem, members in by_stem.items():
        if len(members) == 1:
            out[members[0]] = Family(key=members[0], stale=False)
            continue
        untagged = [m for m in members if m not in tagged]
        current = untagged[0] if untagged else max(members, key=lambda m: _date_key(tagged[m]))
        for m in members:
            out[m] = Family(key=stem, stale=m != current)
    return out


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


def _date_key(tag: str) -> tuple[int, ...]:
    match = _DATE_IN_NAME.search(tag)
    if not match:
        version = _VERSION_IN_NAME.search(tag)  # "guide_tool-2.4": newer numbers win
        return (0, *(int(n) for n in version.group(0).split("."))) if version else (0,)
    return tuple(int(g) if g else 0 for g in match.groups())
