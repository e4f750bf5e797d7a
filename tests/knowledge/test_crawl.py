"""Crawling a documentation site served by a local aiohttp server, into the real
knowledge base: scope, robots.txt, sitemap, conditional GETs, errors."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from aiohttp import web

from agent.errors import NetworkError
from agent.knowledge.chunking import CHUNKING_VERSION
from agent.knowledge.crawl import (
    CrawledPage,
    Crawler,
    CrawlSettings,
    PageMemo,
    SkippedPage,
    crawl_scope,
)
from agent.knowledge.qdrant_kb import QdrantKnowledgeBase
from agent.knowledge.source_ingest import IngestOptions, ingest_source
from agent.sources import (
    FileSourceCatalog,
    InMemorySourceCatalog,
    KnowledgeSource,
    SourceKind,
    SourceOptions,
)
from blocks.answer import source_lines

NO_DELAY = IngestOptions(delay=0)


def page(title: str, body: str) -> str:
    return (
        f"<html><head><title>{title}</title></head><body>"
        f"<nav><a href='/handbook/'>Handbook</a></nav><main>{body}</main>"
        f"<footer>Northwind docs footer</footer></body></html>"
    )


@dataclass
class Site:
    """A docs site: pages by path, what was requested, validators it honours."""

    pages: dict[str, str]
    requests: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    etags: dict[str, str] = field(default_factory=dict)
    modified: dict[str, str] = field(default_factory=dict)
    statuses: dict[str, int] = field(default_factory=dict)
    redirects: dict[str, str] = field(default_factory=dict)
    types: dict[str, str] = field(default_factory=dict)
    robots: str | None = None
    sitemap: str | None = None
    base: str = ""

    def paths(self) -> list[str]:
        return [path for path, _ in self.requests]

    async def handle(self, request: web.Request) -> web.StreamResponse:
        path = request.path_qs
        self.requests.append((path, dict(request.headers)))
        if path in self.statuses:
            return web.Response(status=self.statuses[path], text="error")
        if path == "/robots.txt":
            if self.robots is None:
                raise web.HTTPNotFound()
            return web.Response(text=self.robots)
        if path == "/sitemap.xml":
            if self.sitemap is None:
                raise web.HTTPNotFound()
            return web.Response(text=self.sitemap, content_type="application/xml")
        if path in self.redirects:
            raise web.HTTPFound(self.redirects[path])
        if path not in self.pages:
            raise web.HTTPNotFound()
        etag = self.etags.get(path)
        if etag is not None and request.headers.get("If-None-Match") == etag:
            return web.Response(status=304)
        modified = self.modified.get(path)
        if modified is not None and request.headers.get("If-Modified-Since") == modified:
            return web.Response(status=304)
        headers = {}
        if etag:
            headers["ETag"] = etag
        if modified:
            headers["Last-Modified"] = modified
        kind = self.types.get(path, "text/html")
        return web.Response(text=self.pages[path], content_type=kind, headers=headers)


Serve = Callable[[Site], Awaitable[str]]


@pytest.fixture
async def serve() -> AsyncIterator[Serve]:
    runners: list[web.AppRunner] = []

    async def start(site: Site) -> str:
        app = web.Application()
        app.router.add_route("GET", "/{tail:.*}", site.handle)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        tcp = web.TCPSite(runner, "127.0.0.1", 0)
        await tcp.start()
        runners.append(runner)
        port = runner.addresses[0][1]
        site.base = f"http://127.0.0.1:{port}"
        return site.base

    yield start
    for runner in runners:
        await runner.cleanup()


def handbook(elsewhere: str) -> Site:
    return Site(
        pages={
            "/handbook/": page(
                "Handbook",
                "<h1>Handbook</h1><p>Start here.</p>"
                "<a href='leave.html'>Leave</a> <a href='private/salaries.html'>Pay</a> "
                "<a href='/blog/post.html'>Blog</a> "
                f"<a href='{elsewhere}/handbook/other.html'>Elsewhere</a> "
                "<a href='missing.html'>Missing</a> <a href='broken.html'>Broken</a> "
                "<a href='loop.html'>Loop</a> <a href='away.html'>Away</a> "
                "<a href='sneaky.html'>Sneaky</a> <a href='moved.html'>Moved</a>",
            ),
            "/handbook/leave.html": page(
                "Leave policy",
                "<h1>Leave</h1><h2>Parental leave</h2>"
                "<p>Parents receive 16 weeks of parental leave at full pay.</p>",
            ),
            "/handbook/remote.html": page(
                "Remote work",
                "<h1>Remote work</h1><p>Staff may work remotely three days a week.</p>",
            ),
            "/handbook/private/salaries.html": page("Salaries", "<p>secret salaries</p>"),
            "/blog/post.html": page("Blog", "<p>A blog post outside the handbook.</p>"),
        },
        etags={"/handbook/": '"home-1"', "/handbook/leave.html": '"leave-1"'},
        modified={"/handbook/remote.html": "Wed, 25 Nov 2026 10:00:00 GMT"},
        statuses={"/handbook/broken.html": 500},
        redirects={
            "/handbook/away.html": f"{elsewhere}/handbook/other.html",
            "/handbook/sneaky.html": "/handbook/private/salaries.html",
            "/handbook/moved.html": "/handbook/leave.html",
            "/handbook/loop.html": "/handbook/loop2.html",
            "/handbook/loop2.html": "/handbook/loop.html",
        },
        robots="User-agent: *\nDisallow: /handbook/private/\n",
        sitemap=(
            '<?xml version="1.0" encoding="UTF-8"?>'
            '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            "<url><loc>{base}/handbook/remote.html</loc></url>"
            "<url><loc>{base}/blog/post.html</loc></url>"
            "</urlset>"
        ),
    )


async def start_handbook(serve: Serve) -> tuple[Site, Site]:
    other = Site(pages={"/handbook/other.html": page("Other", "<p>other site</p>")})
    site = handbook(await serve(other))
    base = await serve(site)
    assert site.sitemap is not None
    site.sitemap = site.sitemap.replace("{base}", base)
    return site, other


def test_the_scope_is_the_start_folder() -> None:
    scope = crawl_scope("https://d.example.com/handbook/")
    assert scope.holds("https://d.example.com/handbook/a/b.html")
    assert not scope.holds("https://d.example.com/blog/")
    assert not scope.holds("http://d.example.com/handbook/a.html")
    assert not scope.holds("https://other.example.com/handbook/a.html")
    named = crawl_scope("https://d.example.com/handbook/index.html")
    assert named.holds("https://d.example.com/handbook/leave.html")
    bare = crawl_scope("https://d.example.com/handbook")
    assert bare.holds("https://d.example.com/handbook")
    assert bare.holds("https://d.example.com/handbook/leave.html")
    assert not bare.holds("https://d.example.com/handbook-old/leave.html")


async def test_a_crawl_ingests_the_site_and_a_second_one_asks_what_changed(
    kb: QdrantKnowledgeBase, serve: Serve
) -> None:
    site, other = await start_handbook(serve)
    catalog = InMemorySourceCatalog()
    start = f"{site.base}/handbook/"

    report = await ingest_source(kb, start, NO_DELAY, catalog=catalog)

    added = sorted(r.source for r in report.added)
    assert added == [start, f"{site.base}/handbook/leave.html", f"{site.base}/handbook/remote.html"]
    skipped = {s.path.removeprefix(site.base): s.reason for s in report.skipped}
    assert skipped == {
        "/handbook/private/salaries.html": "disallowed by robots.txt",
        "/handbook/missing.html": "HTTP 404 (the page is gone)",
        "/handbook/broken.html": "HTTP 500",
        "/handbook/loop.html": "redirect loop",
        "/handbook/away.html": f"redirects outside the crawl to {other.base}/handbook/other.html",
        "/handbook/sneaky.html": f"redirects to {site.base}/handbook/private/salaries.html, "
        "disallowed by robots.txt",
    }
    requested = site.paths()
    assert "/handbook/private/salaries.html" not in requested  # robots.txt honoured
    assert "/blog/post.html" not in requested  # outside the path, even from the sitemap
    assert other.requests == []  # another host is never asked
    assert report.unchanged == [] and report.removed == []

    hits = await kb.search("How many weeks of parental leave?")
    assert hits[0].source == f"{site.base}/handbook/leave.html"
    assert hits[0].url == hits[0].source
    assert hits[0].citation == "Leave policy"
    line = source_lines(hits[:1])[0]
    assert line.startswith(
        f"• *Leave policy* (<{site.base}/handbook/leave.html>) — “Parents receive 16 weeks"
    )
    assert hits[0].section == "Leave › Parental leave"
    assert "footer" not in hits[0].text

    remembered = await catalog.get(start)
    assert remembered is not None and remembered.kind is SourceKind.URL
    assert remembered.pages[f"{site.base}/handbook/leave.html"].etag == '"leave-1"'

    # The next crawl sends the validators; unchanged pages answer 304 and are not re-read.
    site.requests.clear()
    site.pages["/handbook/leave.html"] = page(
        "Leave policy", "<h1>Leave</h1><p>Parents receive 20 weeks of parental leave.</p>"
    )
    site.etags["/handbook/leave.html"] = '"leave-2"'
    del site.pages["/handbook/remote.html"]
    site.statuses["/handbook/remote.html"] = 404

    again = await ingest_source(kb, start, NO_DELAY, catalog=catalog)

    sent = dict(site.requests)
    assert sent["/handbook/"]["If-None-Match"] == '"home-1"'
    assert sent["/handbook/remote.html"]["If-Modified-Since"] == "Wed, 25 Nov 2026 10:00:00 GMT"
    assert again.unchanged == [start]
    assert [r.source for r in again.changed] == [f"{site.base}/handbook/leave.html"]
    assert again.removed == [f"{site.base}/handbook/remote.html"]
    assert again.added == []
    gone = f"{site.base}/handbook/remote.html"
    assert gone not in {hit.source for hit in await kb.search("remote work three days a week")}
    assert "20 weeks" in (await kb.search("parental leave weeks"))[0].text
    lines = again.lines()
    assert f"unchanged {start}" in lines
    assert f"removed {site.base}/handbook/remote.html" in lines
    assert lines[-1].startswith(f"{start}: 0 added, 1 changed, 1 removed, 1 unchanged, 6 skipped")


async def test_pages_cut_by_an_older_chunker_are_fetched_whole_once(
    kb: QdrantKnowledgeBase, serve: Serve
) -> None:
    """A new GRACE may cut the same page into other chunks: a page whose memo names
    another chunker version is fetched without its validators (no 304) and stored again;
    the crawl after that asks "changed since?" again."""
    site, _ = await start_handbook(serve)
    catalog = InMemorySourceCatalog()
    start = f"{site.base}/handbook/"
    await ingest_source(kb, start, NO_DELAY, catalog=catalog)
    known = await catalog.get(start)
    assert known is not None
    assert {memo.chunking for memo in known.pages.values()} == {CHUNKING_VERSION}
    older = {url: memo.model_copy(update={"chunking": ""}) for url, memo in known.pages.items()}
    await catalog.save(known.model_copy(update={"pages": older}))

    site.requests.clear()
    again = await ingest_source(kb, start, NO_DELAY, catalog=catalog)
    sent = dict(site.requests)
    assert "If-None-Match" not in sent["/handbook/"]
    assert "If-Modified-Since" not in sent["/handbook/remote.html"]
    assert again.unchanged == []
    assert {r.source for r in again.changed} == {
        start,
        f"{site.base}/handbook/leave.html",
        f"{site.base}/handbook/remote.html",
    }

    site.requests.clear()
    third = await ingest_source(kb, start, NO_DELAY, catalog=catalog)
    assert dict(site.requests)["/handbook/"]["If-None-Match"] == '"home-1"'
    assert start in third.unchanged


async def test_max_pages_stops_the_crawl(kb: QdrantKnowledgeBase, serve: Serve) -> None:
    site, _ = await start_handbook(serve)
    options = IngestOptions(delay=0, max_pages=2)
    report = await ingest_source(kb, f"{site.base}/handbook/", options)
    assert len(report.added) + len(report.skipped) - 1 == 2  # the robots skip is not fetched
    assert any("stopped after 2 pages (--max-pages)" in note for note in report.notes)


async def test_robots_txt_forbidding_everything_reads_nothing(
    kb: QdrantKnowledgeBase, serve: Serve
) -> None:
    site = Site(
        pages={"/docs/": page("Docs", "<p>text</p>")}, robots="User-agent: *\nDisallow: /\n"
    )
    await serve(site)
    with pytest.raises(NetworkError, match=r"disallowed by robots\.txt"):
        await ingest_source(kb, f"{site.base}/docs/", NO_DELAY)
    assert site.paths() == ["/robots.txt"]  # not even the sitemaps


async def test_robots_txt_answering_503_means_no_crawl(serve: Serve) -> None:
    site = Site(pages={"/docs/": page("Docs", "<p>text</p>")}, statuses={"/robots.txt": 503})
    await serve(site)
    crawler = Crawler(f"{site.base}/docs/", settings=CrawlSettings(delay=0))
    found = [item async for item in crawler.pages()]
    assert found == []
    assert "answered HTTP 503: nothing was crawled" in crawler.notes[0]
    assert site.paths() == ["/robots.txt"]


async def test_delay_spaces_requests(serve: Serve) -> None:
    site = Site(
        pages={
            "/docs/": page("Docs", "<a href='a.html'>a</a>"),
            "/docs/a.html": page("A", "<p>a</p>"),
        }
    )
    await serve(site)
    stamps: list[float] = []
    crawler = Crawler(f"{site.base}/docs/", settings=CrawlSettings(delay=0.2))
    async for item in crawler.pages():
        assert isinstance(item, CrawledPage | SkippedPage)
        stamps.append(time.monotonic())
    assert len(stamps) == 2
    assert stamps[1] - stamps[0] >= 0.19


async def test_sources_are_kept_in_a_file(tmp_path: Path) -> None:
    catalog = FileSourceCatalog(tmp_path / "data" / "sources.json")
    now = dt.datetime(2026, 11, 26, tzinfo=dt.UTC)
    source = KnowledgeSource(
        kind=SourceKind.URL,
        location="https://d.example.com/handbook/",
        options=SourceOptions(max_pages=50),
        added_at=now,
        pages={"https://d.example.com/handbook/": PageMemo(etag='"x"')},
    )
    await catalog.save(source)
    again = FileSourceCatalog(tmp_path / "data" / "sources.json")
    assert await again.list() == [source]
    assert (tmp_path / "data" / "sources.json").stat().st_mode & 0o777 == 0o600
    assert await again.remove(source.location)
    assert await again.list() == []
    assert not await again.remove(source.location)


async def test_meta_robots_noindex_and_nofollow_are_honoured(serve: Serve) -> None:
    site = Site(
        pages={
            "/docs/": page("Docs", "<a href='hub.html'>hub</a> <a href='quiet.html'>q</a>"),
            "/docs/hub.html": "<meta name='robots' content='noindex'><a href='a.html'>a</a>",
            "/docs/quiet.html": "<meta name='robots' content='nofollow'><a href='b.html'>b</a>",
            "/docs/a.html": page("A", "<p>a</p>"),
            "/docs/b.html": page("B", "<p>b</p>"),
        }
    )
    await serve(site)
    crawler = Crawler(f"{site.base}/docs/", settings=CrawlSettings(delay=0))
    found = {item.url.removeprefix(site.base): item async for item in crawler.pages()}
    hub = found["/docs/hub.html"]
    assert isinstance(hub, SkippedPage) and "noindex" in hub.reason
    assert isinstance(found["/docs/a.html"], CrawledPage)  # a noindex page is still followed
    assert isinstance(found["/docs/quiet.html"], CrawledPage)
    assert "/docs/b.html" not in site.paths()  # nofollow


async def test_large_and_non_html_pages_are_skipped_with_their_reason(serve: Serve) -> None:
    site = Site(
        pages={
            "/docs/": page("Docs", "<a href='big.html'>big</a> <a href='data.json'>data</a>"),
            "/docs/big.html": page("Big", "<p>" + "word " * 50_000 + "</p>"),
            "/docs/data.json": '{"a": 1}',
        },
        types={"/docs/data.json": "application/json"},
    )
    await serve(site)
    crawler = Crawler(f"{site.base}/docs/", settings=CrawlSettings(delay=0, max_page_bytes=100_000))
    found = {item.url.removeprefix(site.base): item async for item in crawler.pages()}
    assert isinstance(found["/docs/"], CrawledPage)
    big, data = found["/docs/big.html"], found["/docs/data.json"]
    assert isinstance(big, SkippedPage) and big.reason == "page larger than 97 KB"
    assert isinstance(data, SkippedPage) and data.reason == "not an HTML page (application/json)"
