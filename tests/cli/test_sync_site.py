"""`grace sync` on a remembered web site: unchanged pages are asked "changed since?" and
not read; a page no link or sitemap entry leads to any more is removed."""

from __future__ import annotations

from tests.durable.helpers import grace_here_async
from tests.knowledge.test_crawl import page

from .conftest import Handbook


async def test_sync_of_a_site_reads_only_what_changed(handbook: Handbook) -> None:
    site, env, start = handbook.site, handbook.env, handbook.start
    code, out, err = await grace_here_async(env, "ingest", start)
    assert code == 0, err
    assert f"added {site.base}/handbook/remote.html" in out

    assert site.sitemap is not None
    site.sitemap = site.sitemap.replace(
        f"<url><loc>{site.base}/handbook/remote.html</loc></url>", ""
    )
    site.pages["/handbook/leave.html"] = page(
        "Leave policy", "<h1>Leave</h1><p>Parents receive 20 weeks of parental leave.</p>"
    )
    site.etags["/handbook/leave.html"] = '"leave-2"'
    site.requests.clear()

    code, out, err = await grace_here_async(env, "sync")
    assert code == 0, err
    assert f"unchanged {start}" in out
    assert f"changed {site.base}/handbook/leave.html (1 chunk)" in out
    assert f"removed {site.base}/handbook/remote.html" in out  # no longer reached
    assert "/handbook/remote.html" not in site.paths()
    assert dict(site.requests)["/handbook/"]["If-None-Match"] == '"home-1"'
    assert out.splitlines()[-1].startswith("Synced 1 source: 0 added, 1 changed, 1 removed,")

    code, out, err = await grace_here_async(env, "sources")
    assert code == 0, err
    row = out.splitlines()[1].split()
    assert row[1:3] == ["url", "2"] and row[-1] == start
