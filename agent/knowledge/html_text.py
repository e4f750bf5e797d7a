"""An HTML page's main content as Markdown, with its title and links (standard library only).

Why `html.parser` and not BeautifulSoup: we need one pass that drops what is not content
(scripts, styles, navigation, headers, footers, asides, forms), keeps headings, links and
table rows, and never builds a tree of a large page; the standard parser does that in a
small state machine, tolerates broken markup, never fetches or runs anything, and adds no
dependency. Markdown out means the page is chunked like any Markdown file: headings
become the sections passages are cited under, tables keep their header row.

When the page marks its main content (`<main>`, `<article>` or `role="main"`), only that
is kept; otherwise everything that is not skipped. Links in the text stay as
`[text](absolute url)`; every link on the page (navigation too) is listed for crawling.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import urldefrag, urljoin

__all__ = ["HtmlPage", "html_to_markdown"]

_SKIPPED = frozenset(
    {
        "script",
        "style",
        "noscript",
        "template",
        "nav",
        "footer",
        "header",
        "aside",
        "form",
        "svg",
        "iframe",
        "button",
        "select",
        "dialog",
        "head",
    }
)
"""Elements whose text is never content."""
_SKIPPED_ROLES = frozenset({"navigation", "banner", "contentinfo", "search", "complementary"})
_MAIN = frozenset({"main", "article"})
_VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}
)
_BLOCKS = frozenset(
    {
        "p",
        "div",
        "section",
        "ul",
        "ol",
        "dl",
        "dt",
        "dd",
        "blockquote",
        "figure",
        "figcaption",
        "pre",
        "hr",
        "address",
        "details",
        "summary",
        "main",
        "article",
    }
)
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_SPACES = re.compile(r"[ \t\r\f\v\n]+")


@dataclass
class HtmlPage:
    """What a page says and where it points."""

    title: str = ""
    markdown: str = ""
    links: list[str] = field(default_factory=list)
    """Absolute http(s) links found anywhere on the page, without fragments, in order."""
    canonical: str | None = None
    robots: frozenset[str] = frozenset()
    """Directives of `<meta name="robots">` ("noindex", "nofollow"), lower case."""


class _Output:
    """Markdown being written: inline text gathers into lines; blocks end lines."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.current: list[str] = []

    def text(self, text: str) -> None:
        self.current.append(text)

    def end_line(self, *, blank: bool = False) -> None:
        line = _SPACES.sub(" ", "".join(self.current)).strip()
        self.current = []
        if line:
            self.lines.append(line)
        if blank and self.lines and self.lines[-1] != "":
            self.lines.append("")

    def raw(self, line: str) -> None:
        self.end_line()
        self.lines.append(line)

    def markdown(self) -> str:
        self.end_line()
        return "\n".join(self.lines).strip()


class _Extractor(HTMLParser):
    def __init__(self, base_url: str | None) -> None:
        super().__init__(convert_charrefs=True)
        self.base = base_url
        self.page = HtmlPage()
        self.everything = _Output()
        self.main = _Output()
        self.main_depth = 0
        self.skip: list[str] = []
        """The skipped elements we are inside (their tag names, innermost last)."""
        self.in_title = False
        self.title_parts: list[str] = []
        self.heading: int | None = None
        self.link: str | None = None
        self.link_text: list[str] = []
        self.table: list[list[str]] | None = None
        self.cell: list[str] | None = None
        self.pre = 0
        self.seen_links: set[str] = set()

    # -- where text goes
    def _outputs(self) -> list[_Output]:
        return [self.everything, self.main] if self.main_depth else [self.everything]

    def _write(self, text: str) -> None:
        if self.cell is not None:
            self.cell.append(text)
        elif self.link is not None:
            self.link_text.append(text)
        else:
            for out in self._outputs():
                out.text(text)

    def _end_block(self) -> None:
        for out in self._outputs():
            out.end_line(blank=True)

    def _absolute(self, href: str) -> str | None:
        href = href.strip()
        if not href or href.startswith(("javascript:", "data:", "mailto:", "tel:")):
            return None
        url = urldefrag(urljoin(self.base or "", href)).url
        return url if url.startswith(("http://", "https://")) else None

    # -- parser callbacks
    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {name: value or "" for name, value in attrs}
        if tag == "base" and attributes.get("href") and self.base is not None:
            self.base = urljoin(self.base, attributes["href"])
        if tag == "meta" and attributes.get("name", "").lower() == "robots":
            directives = attributes.get("content", "").lower().replace(",", " ").split()
            self.page.robots = self.page.robots | frozenset(directives)
        if tag == "link" and "canonical" in attributes.get("rel", "").lower().split():
            self.page.canonical = self._absolute(attributes.get("href", ""))
        if tag == "a" and attributes.get("href"):
            url = self._absolute(attributes["href"])
            if url is not None and url not in self.seen_links:
                self.seen_links.add(url)
                self.page.links.append(url)
        if tag == "title":
            self.in_title = True
        if self.skip:
            if tag == self.skip[-1] and tag not in _VOID:
                self.skip.append(tag)
            return
        role = attributes.get("role", "").lower()
        hidden = attributes.get("aria-hidden", "").lower() == "true" or "hidden" in attributes
        if (tag in _SKIPPED or role in _SKIPPED_ROLES or hidden) and tag not in _VOID:
            self.skip.append(tag)
            return
        if tag in _MAIN or role == "main":
            self.main_depth += 1
        if tag in _HEADINGS:
            self._end_block()
            self.heading = _HEADINGS[tag]
        elif tag == "a" and attributes.get("href") and self.cell is None:
            self.link = self._absolute(attributes["href"])
            self.link_text = []
        elif tag == "table":
            self._end_block()
            self.table = []
        elif tag == "tr" and self.table is not None:
            self.table.append([])
        elif tag in ("td", "th") and self.table is not None:
            if not self.table:
                self.table.append([])
            self.cell = []
        elif tag == "li":
            for out in self._outputs():
                out.end_line()
                out.text("- ")
        elif tag == "br":
            self._write("\n" if self.pre else " ")
            if not self.pre and self.cell is None:
                for out in self._outputs():
                    out.end_line()
        elif tag == "pre":
            self._end_block()
            self.pre += 1
        elif tag in _BLOCKS:
            self._end_block()

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in _VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
        if self.skip:
            if tag == self.skip[-1]:
                self.skip.pop()
            return
        if tag in _HEADINGS and self.heading is not None:
            level = self.heading
            self.heading = None
            for out in self._outputs():
                text = _SPACES.sub(" ", "".join(out.current)).strip()
                out.current = []
                if text:
                    out.end_line(blank=True)
                    out.raw("#" * level + " " + text)
                    out.lines.append("")
        elif tag == "a" and self.link is not None:
            url, self.link = self.link, None
            text = _SPACES.sub(" ", "".join(self.link_text)).strip()
            if text and url and url != text:
                self._write(f"[{text}]({url})")
            elif text:
                self._write(text)
        elif tag in ("td", "th") and self.cell is not None and self.table is not None:
            cell = _SPACES.sub(" ", "".join(self.cell)).strip().replace("|", "/")
            self.cell = None
            self.table[-1].append(cell)
        elif tag == "table" and self.table is not None:
            rows = [row for row in self.table if any(row)]
            self.table = None
            self._table(rows)
        elif tag == "pre":
            self.pre = max(0, self.pre - 1)
            self._end_block()
        elif tag == "li":
            for out in self._outputs():
                out.end_line()
        elif tag in _BLOCKS:
            self._end_block()
        if tag in _MAIN:
            self.main_depth = max(0, self.main_depth - 1)

    def _table(self, rows: list[list[str]]) -> None:
        if not rows:
            return
        width = max(len(row) for row in rows)
        lines = ["| " + " | ".join(row + [""] * (width - len(row))) + " |" for row in rows]
        for out in self._outputs():
            out.end_line(blank=True)
            out.raw(lines[0])
            out.raw("|" + " --- |" * width)
            for line in lines[1:]:
                out.raw(line)
            out.lines.append("")

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title_parts.append(data)
            return
        if self.skip:
            return
        if self.pre and self.cell is None and self.link is None:
            for out in self._outputs():
                for number, line in enumerate(data.split("\n")):
                    if number:
                        out.end_line()
                    out.text(line)
            return
        self._write(data)


def html_to_markdown(html: str, base_url: str | None = None) -> HtmlPage:
    """The page's title, main content as Markdown and its links (resolved on `base_url`)."""
    parser = _Extractor(base_url)
    parser.feed(html)
    parser.close()
    page = parser.page
    page.title = _SPACES.sub(" ", "".join(parser.title_parts)).strip()
    main = parser.main.markdown()
    page.markdown = main or parser.everything.markdown()
    return page
