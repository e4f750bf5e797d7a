"""`sanitize_answer`: whatever the model writes, the posted answer pings nobody and
links only where a source did."""

from __future__ import annotations

from agent.safety import sanitize_answer, urls_in


def test_broadcasts_and_mentions_are_neutralised() -> None:
    text = (
        "<!channel> <!here> <!everyone> <!here|here> hi <@U123ABC> and <@W9|bob>, "
        "see <!subteam^S42|@oncall> in <#C0123|general>; also @channel and @here!"
    )

    safe = sanitize_answer(text)

    for control in ("<!channel>", "<!here", "<!everyone>", "<@U123ABC>", "<@W9", "<!subteam"):
        assert control not in safe
    assert "<#C0123" not in safe
    assert "@channel" not in safe and "@here" not in safe
    assert "&lt;!channel&gt;" in safe and "&lt;@U123ABC&gt;" in safe
    assert "hi" in safe and "general" in safe


def test_only_links_from_the_sources_survive() -> None:
    sources = ["Book leave at https://hr.example.com/leave. Questions: mailto:hr@example.com"]
    text = (
        "Book it at <https://hr.example.com/leave|the HR portal> or "
        "https://hr.example.com/leave, not <https://evil.example/phish|here> "
        "nor http://evil.example/x. Mail mailto:hr@example.com."
    )

    safe = sanitize_answer(text, urls_in(sources))

    assert "<https://hr.example.com/leave|the HR portal>" in safe
    assert "https://hr.example.com/leave," in safe
    assert "evil.example" not in safe
    assert "here (link removed)" in safe and "nor (link removed)." in safe
    assert "mailto:hr@example.com" in safe


def test_plain_answers_are_unchanged() -> None:
    text = "New employees get *15 days* [Source: vacation-policy.md].\n• a < b and c > d"

    assert sanitize_answer(text) == text
