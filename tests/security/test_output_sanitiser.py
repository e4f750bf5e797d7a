"""Issue 22 point 6: one output sanitiser for everything posted. Bidi controls and
zero-width characters from a document never reach Slack, document marks do not format
the message, text is escaped once, and links are shown by one case-insensitive parser."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.knowledge.ingest import ingest_paths
from agent.knowledge.qdrant_kb import open_knowledge_base
from agent.safety import sanitize_answer
from blocks.answer import to_mrkdwn
from blocks.limits import escape_mrkdwn
from blocks.sanitize import INVISIBLE, document_text, quoted, rewrite_links, scrub
from bot.simulator.webapi import FakeSlack
from tests.bot.conftest import BotHarness

from .conftest import SecureFactory

TS = "1700250000.000100"
HOSTILE_DOC = (
    "# Parking refund policy\n\n"
    "The parking refund for visitors is \u202e05$\u202c per day, paid by the front desk.\n"
    "Ask re\u200bcep\u2060tion\ufeff for the parking refund form \u2066today\u2069.\n"
    "The parking refund is *always approved* and ~never late~ and _final_, see `form`.\n"
    "Already escaped text about the parking refund: &lt;!channel&gt; and &amp; more.\n"
)
QUESTION = "What is the parking refund for visitors?"


async def with_document(data_dir: Path, tmp_path: Path) -> None:
    doc = tmp_path / "parking.md"
    doc.write_text(HOSTILE_DOC, encoding="utf-8")
    kb = open_knowledge_base(path=data_dir / "qdrant", url=None)
    try:
        reports = await ingest_paths(kb, [doc])
        assert sum(r.chunks for r in reports) >= 1
    finally:
        await kb.close()


def everything_posted(fake: FakeSlack) -> str:
    """Every payload the bot sent, as one JSON text (non-ASCII kept as characters)."""
    return "\n".join(json.dumps(c.params, ensure_ascii=False) for c in fake.calls)


@pytest.mark.parametrize("plan_display", ["message", "stream"])
async def test_a_hostile_document_reaches_slack_clean(
    secure: SecureFactory, data_dir: Path, tmp_path: Path, fake: FakeSlack, plan_display: str
) -> None:
    await with_document(data_dir, tmp_path)
    h: BotHarness = await secure(slack={"plan_display": plan_display})
    await h.mention(QUESTION, ts=TS)
    posted = everything_posted(fake)
    assert "parking" in posted.lower(), "the document was used"
    assert not INVISIBLE.search(posted), "no bidi or zero-width character was posted"
    assert "&amp;lt;" not in posted and "&amp;amp;" not in posted, "escaped once"


def test_invisible_characters_are_stripped_everywhere() -> None:
    assert document_text("\u202e05$\u202c") == "05$"
    assert escape_mrkdwn("a\u200bb\u200c\u200dc\u2060d\ufeffe\u200e\u200f") == "abcde"
    assert scrub({"blocks": [{"text": {"text": "x\u2067y"}}], "text": ["\u202a"]}) == {
        "blocks": [{"text": {"text": "xy"}}],
        "text": [""],
    }


def test_escaping_happens_once() -> None:
    assert escape_mrkdwn("&lt;!channel&gt; & <!here> &amp;") == (
        "&lt;!channel&gt; &amp; &lt;!here&gt; &amp;"
    )
    assert escape_mrkdwn(escape_mrkdwn("<b> & c")) == escape_mrkdwn("<b> & c")


def test_document_marks_do_not_format() -> None:
    shown = quoted("*bold* ~strike~ _it_ `code`")
    assert not any(mark in shown for mark in "*~_`")
    assert "bold" in shown and "strike" in shown


@pytest.mark.parametrize(
    ("markdown", "url"),
    [
        ("[the form](HTTPS://evil.example/x)", "https://evil.example/x"),
        ("[the form]( https://evil.example/x )", "https://evil.example/x"),
        ("[the form](Http://evil.example/x)", "http://evil.example/x"),
        ("[the form][1]\n\n[1]: https://evil.example/x", "https://evil.example/x"),
        ('[the form][ref]\n[REF]: HTTPS://evil.example/x "title"', "https://evil.example/x"),
    ],
)
def test_every_link_shows_its_address(markdown: str, url: str) -> None:
    for shown in (to_mrkdwn(markdown), rewrite_links(escape_mrkdwn(markdown), brackets=False)):
        assert url in shown, shown
        assert "](" not in shown and "][" not in shown, shown
        assert "|" not in shown, "never a masked link"


def test_links_that_are_not_web_addresses_are_dropped_to_their_label() -> None:
    assert to_mrkdwn("[click](javascript:alert(1))").startswith("click")
    assert "javascript" not in to_mrkdwn("[click](JAVASCRIPT:alert)")


def test_a_defused_broadcast_stays_defused_after_the_sanitiser() -> None:
    posted = scrub({"text": sanitize_answer("Tell @channel and @here now")})["text"]
    assert "@channel" not in posted and "@here" not in posted
    assert "channel" in posted
