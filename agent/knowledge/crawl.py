"""Crawling a documentation site: the pages on one host under one path (`grace ingest URL`).

Starting from a URL, the crawler follows links and the site's `sitemap.xml` (and the
sitemaps `robots.txt` names) to pages on the same scheme, host and port whose path lies
under the start's folder; nothing else is requested. It honours `robots.txt`
(`urllib.robotparser`; a robots.txt that answers 5xx or cannot be fetched means "crawl
nothing", as RFC 9309 says), waits `delay` seconds (or the site's `Crawl-delay`, if
longer) between requests, and stops after `max_pages` page requests.

Pages are remembered by their validators (`PageMemo`: `ETag`, `Last-Modified`, and the
page's links, so an unchanged page still leads to the rest): given the memos of the last
crawl, each page is fetched with `If-None-Match` / `If-Modified-Since` and a 304 comes
back as `unchanged`, without a body. A 404 or 410 is reported as `gone`; other errors,
redirect loops, non-HTML answers and pages over `max_page_bytes` are skipped with their
reason. Pages stream out as they are fetched, so memory holds one page at a time.

Pure of Slack and SQL; the caller stores the pages (`sources.py`).
"""

from __future__ import annotations

import asyncio
import gzip
import time
import zlib
from collections import deque
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import urldefrag, urljoin, urlsplit, urlunsplit
from urllib.robotparser import RobotFileParser
from xml.etree import ElementTree

import aiohttp
from pydantic import BaseModel, Field

from agent.errors import InvalidInputError
from agent.knowledge.chunking import CHUNKING_VERSION
from agent.knowledge.html_text import html_to_markdown

__all__ = [
    "DEFAULT_DELAY",
    "DEFAULT_MAX_PAGES",
    "USER_AGENT",
    "CrawlSettings",
    "CrawledPage",
    "Crawler",
    "PageMemo",
    "SkippedPage",
    "crawl_scope",
    "is_url",
    "normalise_url",
]

DEFAULT_MAX_PAGES = 200
DEFAULT_DELAY = 1.0
"""Seconds between two requests to the site: polite to a company's docs server."""
USER_AGENT = "GRACE-ingest/0.1"
MAX_SITEMAPS = 20
MAX_SITEMAP_BYTES = 50 << 20
_HTML_TYPES = ("text/html", "application/xhtml+xml")
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_NOINDEX = frozenset({"noindex", "none"})
_NOFOLLOW = frozenset({"nofollow", "none"})


def is_url(location: str) -> bool:
    return location.lower().startswith(("http://", "https://"))


def normalise_url(url: str) -> str:
    """One spelling per page: no fragment, lower-case scheme and host, no default port."""
    url = urldefrag(url.strip()).url
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    port = parts.port
    if port is not None and (scheme, port) not in (("http", 80), ("https", 443)):
        host = f"{host}:{port}"
    return urlunsplit((scheme, host, parts.path or "/", parts.query, ""))


@dataclass(frozen=True)
class CrawlScope:
    """Which URLs belong to the crawl: same origin, path under `prefix` (or `exact`)."""

    origin: str
    prefix: str
    exact: str

    def holds(self, url: str) -> bool:
        parts = urlsplit(url)
        if f"{parts.scheme}://{parts.netloc}" != self.origin:
            return False
        return parts.path.startswith(self.prefix) or parts.path == self.exact


def crawl_scope(start: str) -> CrawlScope:
    """`https://d.example.com/handbook/` → pages under `/handbook/`; a start naming a file
    (`/handbook/index.html`) → its folder; `/handbook` → `/handbook` and `/handbook/…`."""
    parts = urlsplit(start)
    path = parts.path or "/"
    if path.endswith("/"):
        prefix = path
    elif "." in path.rsplit("/", 1)[-1]:
        prefix = path.rsplit("/", 1)[0] + "/"
    else:
        prefix = path + "/"
    return CrawlScope(origin=f"{parts.scheme}://{parts.netloc}", prefix=prefix, exact=path)


class PageMemo(BaseModel):
    """What is remembered of a crawled page to ask "changed since?" next time."""

    etag: str | None = None
    last_modified: str | None = None
    links: list[str] = Field(default_factory=list)
    """Its in-scope links: an unchanged (304) page still leads the crawl on."""
    chunking: str = ""
    """The chunker version its chunks were cut with (empty: before versions were kept).
    Under another version the page is fetched whole, not asked "changed since?"."""


@dataclass(frozen=True)
class CrawlSettings:
    max_pages: int = DEFAULT_MAX_PAGES
    delay: float = DEFAULT_DELAY
    """Seconds between requests to the site (the site's Crawl-delay wins if longer)."""
    timeout: float = 30.0
    max_page_bytes: int = 10 << 20
    max_redirects: int = 5
    user_agent: str = USER_AGENT


@dataclass
class CrawledPage:
    """A page in scope: `fetched` with its body, or `unchanged` since its memo (304)."""

    url: str
    status: Literal["fetched", "unchanged"]
    memo: PageMemo
    body: bytes | None = None


@dataclass
class SkippedPage:
    """A URL not ingested and why; `gone`: it must not stay in the index (the server says
    it no longer exists, or the page asks not to be indexed)."""

    url: str
    reason: str
    gone: bool = False
    links: list[str] = field(default_factory=list)
    """Links to follow all the same (a `noindex` page that may still be followed)."""


@dataclass
class _Fetched:
    status: int
    url: str
    headers: Mapping[str, str]
    body: bytes | None
    too_large: bool = False


@dataclass
class Crawler:
    """One crawl of `start`; iterate `pages()`; afterwards `limit_reached` and `notes`."""

    start: str
    memos: Mapping[str, PageMemo] = field(default_factory=dict)
    settings: CrawlSettings = field(default_factory=CrawlSettings)
    limit_reached: bool = False
    notes: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not is_url(self.start):
            raise InvalidInputError(f"cannot crawl {self.start!r}: not an http(s) URL")
        self.start = normalise_url(self.start)
        if not urlsplit(self.start).hostname:
            raise InvalidInputError(f"cannot crawl {self.start!r}: no host in the URL")
        if self.settings.max_pages < 1:
            raise InvalidInputError("--max-pages must be at least 1")
        self.scope = crawl_scope(self.start)
        self._last_request = 0.0
        self._delay = max(0.0, self.settings.delay)
        self._robots_file: RobotFileParser | None = None

    def _robots_allow(self, url: str) -> bool:
        robots = self._robots_file
        return robots is not None and robots.can_fetch(self.settings.user_agent, url)

    async def pages(self) -> AsyncIterator[CrawledPage | SkippedPage]:
        """Pages in scope, in crawl order (start, links breadth-first, sitemap entries)."""
        timeout = aiohttp.ClientTimeout(total=self.settings.timeout)
        headers = {"User-Agent": self.settings.user_agent}
        async with aiohttp.ClientSession(timeout=timeout, headers=headers) as session:
            robots = await self._robots(session)
            if robots is None:
                return
            self._robots_file = robots
            crawl_delay = robots.crawl_delay(self.settings.user_agent)
            if crawl_delay is not None:
                self._delay = max(self._delay, float(crawl_delay))
            queue: deque[str] = deque([self.start])
            seen = {self.start}

            def enqueue(urls: list[str]) -> None:
                for url in urls:
                    url = normalise_url(url)
                    if url not in seen and self.scope.holds(url):
                        seen.add(url)
                        queue.append(url)

            sitemap_urls = await self._sitemaps(session, robots)
            requested = 0
            done: set[str] = set()
            while queue:
                url = queue.popleft()
                if not self._robots_allow(url):
                    yield SkippedPage(url, "disallowed by robots.txt")
                    continue
                if requested >= self.settings.max_pages:
                    self.limit_reached = True
                    self.notes.append(
                        f"stopped after {self.settings.max_pages} pages (--max-pages); "
                        f"{len(queue) + 1} more in scope were not read"
                    )
                    return
                requested += 1
                page = await self._page(session, url)
                if page.url in done:
                    continue  # a redirect to a page already read
                done.add(page.url)
                seen.add(page.url)
                enqueue(page.memo.links if isinstance(page, CrawledPage) else page.links)
                yield page
                if url == self.start:
                    enqueue(sitemap_urls)  # after the start page's own links

    # ------------------------------------------------------------------ robots, sitemaps

    async def _robots(self, session: aiohttp.ClientSession) -> RobotFileParser | None:
        robots = RobotFileParser()
        url = f"{self.scope.origin}/robots.txt"
        try:
            fetched = await self._get(session, url, {}, limit=1 << 20)
        except (aiohttp.ClientError, TimeoutError) as exc:
            self.notes.append(
                f"robots.txt at {url} could not be fetched ({_error(exc)}): nothing was "
                "crawled, as the robots.txt rules require"
            )
            return None
        if fetched.status >= 500:
            self.notes.append(
                f"robots.txt at {url} answered HTTP {fetched.status}: nothing was crawled, "
                "as the robots.txt rules require; try again later"
            )
            return None
        if fetched.status >= 400 or fetched.body is None:
            robots.parse([])  # no robots.txt: everything is allowed
        else:
            robots.parse(fetched.body.decode("utf-8", "replace").splitlines())
        return robots

    async def _sitemaps(self, session: aiohttp.ClientSession, robots: RobotFileParser) -> list[str]:
        """Page URLs the sitemaps list (nested sitemap indexes followed, a few at most)."""
        candidates = list(robots.site_maps() or [])
        candidates.append(f"{self.scope.origin}/sitemap.xml")
        candidates.append(f"{self.scope.origin}{self.scope.prefix}sitemap.xml")
        queue = deque(dict.fromkeys(normalise_url(url) for url in candidates))
        done: set[str] = set()
        pages: list[str] = []
        while queue and len(done) < MAX_SITEMAPS:
            url = queue.popleft()
            if url in done or urlsplit(url).netloc != urlsplit(self.start).netloc:
                continue
            done.add(url)
            if not robots.can_fetch(self.settings.user_agent, url):
                continue
            try:
                fetched = await self._get(session, url, {}, limit=MAX_SITEMAP_BYTES)
            except (aiohttp.ClientError, TimeoutError):
                continue
            if fetched.status != 200 or fetched.body is None or fetched.too_large:
                continue
            kind, locations = _sitemap_entries(fetched.body)
            if kind == "index":
                queue.extend(normalise_url(loc) for loc in locations)
            else:
                pages.extend(locations)
        return pages

    # ------------------------------------------------------------------ pages

    async def _page(self, session: aiohttp.ClientSession, url: str) -> CrawledPage | SkippedPage:
        memo = self.memos.get(url)
        if memo is not None and memo.chunking != CHUNKING_VERSION:
            memo = None  # cut into chunks by another version: read it again
        conditional: dict[str, str] = {}
        if memo is not None and memo.etag:
            conditional["If-None-Match"] = memo.etag
        if memo is not None and memo.last_modified:
            conditional["If-Modified-Since"] = memo.last_modified
        hops = [url]
        while True:
            try:
                fetched = await self._get(
                    session, url, conditional, limit=self.settings.max_page_bytes, follow=False
                )
            except (aiohttp.ClientError, TimeoutError) as exc:
                return SkippedPage(hops[0], f"could not be fetched ({_error(exc)})")
            location = fetched.headers.get("Location")
            if fetched.status not in _REDIRECTS or not location:
                break
            # Each hop is checked before it is requested: never off the site, never where
            # robots.txt forbids, never round in circles.
            target = normalise_url(urljoin(url, location))
            if not self.scope.holds(target):
                return SkippedPage(hops[0], f"redirects outside the crawl to {target}")
            if not self._robots_allow(target):
                return SkippedPage(hops[0], f"redirects to {target}, disallowed by robots.txt")
            if target in hops:
                return SkippedPage(hops[0], "redirect loop")
            if len(hops) > self.settings.max_redirects:
                return SkippedPage(hops[0], f"more than {self.settings.max_redirects} redirects")
            hops.append(target)
            url = target  # the page is known by where it lives
            memo = self.memos.get(url, memo)
        if fetched.status == 304 and memo is not None:
            return CrawledPage(url, "unchanged", memo)
        if fetched.status in (404, 410):
            return SkippedPage(url, f"HTTP {fetched.status} (the page is gone)", gone=True)
        if fetched.status >= 400 or fetched.status < 200 or fetched.status == 304:
            return SkippedPage(url, f"HTTP {fetched.status}")
        kind = fetched.headers.get("Content-Type", "").split(";")[0].strip().lower()
        if kind and kind not in _HTML_TYPES:
            return SkippedPage(url, f"not an HTML page ({kind})")
        if fetched.too_large or fetched.body is None:
            return SkippedPage(url, f"page larger than {_size(self.settings.max_page_bytes)}")
        page = html_to_markdown(fetched.body.decode("utf-8", "replace"), url)
        links = list(dict.fromkeys(normalise_url(link) for link in page.links))
        memo = PageMemo(
            etag=fetched.headers.get("ETag"),
            last_modified=fetched.headers.get("Last-Modified"),
            links=[] if _NOFOLLOW & page.robots else [u for u in links if self.scope.holds(u)],
            chunking=CHUNKING_VERSION,
        )
        if _NOINDEX & page.robots:
            return SkippedPage(
                url,
                "the page asks not to be indexed (meta robots noindex)",
                gone=True,
                links=memo.links,
            )
        return CrawledPage(url, "fetched", memo, body=fetched.body)

    async def _get(
        self,
        session: aiohttp.ClientSession,
        url: str,
        headers: Mapping[str, str],
        *,
        limit: int,
        follow: bool = True,
    ) -> _Fetched:
        """One polite GET: waits out the delay since the last request, reads at most
        `limit` bytes of the body (`too_large` when there was more); `follow`: let the
        client follow redirects (robots.txt, sitemaps), else hand them back."""
        wait = self._last_request + self._delay - time.monotonic()
        if wait > 0:
            await asyncio.sleep(wait)  # the crawl rate: a pause between requests
        try:
            async with session.get(
                url,
                headers=dict(headers),
                max_redirects=self.settings.max_redirects,
                allow_redirects=follow,
            ) as response:
                body: bytes | None = None
                too_large = False
                if response.status == 200:
                    declared = response.content_length
                    if declared is not None and declared > limit:
                        too_large = True
                    else:
                        body, too_large = await _read_at_most(response, limit)
                return _Fetched(
                    status=response.status,
                    url=str(response.url),
                    headers=response.headers.copy(),  # case-insensitive keys
                    body=body,
                    too_large=too_large,
                )
        finally:
            self._last_request = time.monotonic()


async def _read_at_most(response: aiohttp.ClientResponse, limit: int) -> tuple[bytes | None, bool]:
    """The body if it is at most `limit` bytes (else None, True), read in pieces so a
    server that lies about its length cannot fill the memory."""
    parts: list[bytes] = []
    size = 0
    async for part in response.content.iter_chunked(1 << 16):
        size += len(part)
        if size > limit:
            return None, True
        parts.append(part)
    return b"".join(parts), False


def _sitemap_entries(data: bytes) -> tuple[Literal["urls", "index"], list[str]]:
    """The `<loc>`s of a sitemap (gzipped or not) and whether it is an index of sitemaps."""
    if data[:2] == b"\x1f\x8b":
        try:
            inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
            data = inflater.decompress(data, MAX_SITEMAP_BYTES)
        except (zlib.error, gzip.BadGzipFile):
            return "urls", []
    try:
        root = ElementTree.fromstring(data)
    except ElementTree.ParseError:
        return "urls", []
    kind: Literal["urls", "index"] = "index" if root.tag.endswith("sitemapindex") else "urls"
    locations = [
        (element.text or "").strip()
        for element in root.iter()
        if element.tag.endswith("}loc") or element.tag == "loc"
    ]
    return kind, [loc for loc in locations if is_url(loc)]


def _size(count: int) -> str:
    return f"{count >> 20} MB" if count >= 1 << 20 else f"{count >> 10} KB"


def _error(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
