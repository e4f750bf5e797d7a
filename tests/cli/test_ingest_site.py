"""`grace ingest https://…` as a person runs it: the site is crawled under the address,
each page reported, the page validators remembered in the data dir so that a second
ingest reads nothing that did not change, and an answer cites the page's address."""

from __future__ import annotations

from tests.durable.helpers import grace_here_async

from .conftest import Handbook


async def test_ingest_a_site_then_again_with_nothing_changed(handbook: Handbook) -> None:
    site, env, start = handbook.site, handbook.env, handbook.start
    code, out, err = await grace_here_async(env, "ingest", start)
    assert code == 0, err
    assert f"added {site.base}/handbook/leave.html" in out
    assert "salaries.html (disallowed by robots.txt)" in out
    assert "/handbook/private/salaries.html" not in site.paths()  # never fetched
    assert "/blog/post.html" not in site.paths()  # outside the start folder
    assert "Traceback" not in err

    asked_before = len(site.requests)
    code, out, err = await grace_here_async(env, "ingest", start)
    assert code == 0, err
    assert f"unchanged {site.base}/handbook/leave.html" in out
    again = site.requests[asked_before:]
    leave = [headers for path, headers in again if path == "/handbook/leave.html"]
    assert leave and leave[0].get("If-None-Match") == '"leave-1"'

    code, out, err = await grace_here_async(
        env, "ask", "How many weeks of parental leave do parents receive?", "--no-input"
    )
    assert "16 weeks" in out, out + err
    assert f"{site.base}/handbook/leave.html" in out


async def test_max_pages_limits_the_crawl(handbook: Handbook) -> None:
    code, out, err = await grace_here_async(
        handbook.env, "ingest", handbook.start, "--max-pages", "1"
    )
    assert code == 0, err
    assert out.count("added ") == 1, out
