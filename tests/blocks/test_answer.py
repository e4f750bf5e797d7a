"""The answer messages: split text, sources, confidence badge, feedback buttons."""

from __future__ import annotations

from agent.schemas import InterventionLevel, RunStatus, Source
from blocks import ids
from blocks.answer import answer_fallback_text, answer_messages, feedback_ack, to_mrkdwn
from blocks.ids import ButtonValue
from blocks.limits import to_payload
from tests import samples
from tests.blocks.payloads import actions_of, all_text, assert_valid, walk


def test_short_answer_is_one_message_with_everything() -> None:
    state = samples.state(answer="New employees get **10 days** [Source: doc-0.md].")
    messages = answer_messages(state)
    assert len(messages) == 1
    payload = assert_valid(messages[0])
    text = all_text(payload)
    assert "*10 days*" in text
    assert "doc-0.md" in text
    assert "Fairly sure" in text
    # Factor names and numbers are behind Details, not on the card.
    for technical in ("0.82", "notify", "search_quality", "×0.9", "base"):
        assert technical not in text
    assert "answered by the offline model" in text
    assert "run `run123`" in text  # the short run id, for /grace status|retry
    assert actions_of(payload) == [ids.DETAILS, ids.FEEDBACK]
    feedback = next(b for b in payload if b["type"] == "context_actions")
    (element,) = feedback["elements"]
    assert element["type"] == "feedback_buttons"
    up = ButtonValue.decode(element["positive_button"]["value"])
    down = ButtonValue.decode(element["negative_button"]["value"])
    assert (up.run_id, up.helpful) == (state.run_id, True)
    assert (down.run_id, down.helpful) == (state.run_id, False)
    details = next(d for d in walk(payload) if d.get("action_id") == ids.DETAILS)
    assert ButtonValue.decode(details["value"]).run_id == state.run_id


def test_disagreeing_sources_are_an_alert_naming_both_documents() -> None:
    state = samples.state(answer="a", n_sources=4)  # agreement 0.45: doc-0 vs doc-1
    payload = assert_valid(answer_messages(state)[0])
    (alert,) = [b for b in payload if b["type"] == "alert"]
    assert alert["level"] == "warning"
    assert "*doc-0.md* and *doc-1.md* say different things" in alert["text"]["text"]
    assert state.overall_detail is not None
    state.overall_detail.breakdown["source_agreement"] = 0.9
    agreeing = assert_valid(answer_messages(state)[0])
    assert not [b for b in agreeing if b["type"] == "alert"]


def test_sources_are_deduplicated_by_name() -> None:
    state = samples.state(answer="a", n_sources=6)  # doc-0, doc-1, doc-2 twice each
    payload = assert_valid(answer_messages(state)[0])
    (listed,) = [
        b["text"]["text"] for b in payload if "*Sources*" in b.get("text", {}).get("text", "")
    ]
    assert listed.count("*doc-0.md*") == 1
    assert listed.count("*doc-2.md*") == 1


def test_40_sources_are_capped() -> None:
    state = samples.state(answer="a", n_sources=80)  # 40 distinct names
    text = all_text(assert_valid(answer_messages(state)[0]))
    assert "…and 30 more sources" in text


def test_30000_char_answer_keeps_all_content_within_limits() -> None:
    answer = samples.words(30_000)
    state = samples.state(answer=answer, n_sources=80)
    messages = answer_messages(state)
    for message in messages:
        assert_valid(message)
    texts = [b["text"]["text"] for m in messages for b in to_payload(m) if b["type"] == "section"]
    joined = " ".join(texts)
    assert joined.split()[: len(answer.split())] == answer.split()
    assert actions_of(to_payload(messages[-1])) == [ids.DETAILS, ids.FEEDBACK]


def test_very_long_answer_spans_several_messages() -> None:
    answer = samples.words(150_000)
    state = samples.state(answer=answer)
    messages = answer_messages(state)
    assert len(messages) >= 4
    for message in messages:
        assert_valid(message)
    assert "part 1 of" in all_text(to_payload(messages[0]))
    for message in messages[:-1]:
        assert actions_of(to_payload(message)) == []
    words_out = []
    for message in messages:
        for block in to_payload(message):
            if block["type"] == "section" and not block["text"]["text"].startswith("*Sources*"):
                if block["text"]["text"].startswith("*How sure I am:*"):
                    continue
                words_out.extend(block["text"]["text"].split())
    assert words_out == answer.split()


def test_answer_escapes_and_converts_markdown() -> None:
    assert to_mrkdwn("## Title\n**bold** <!here> [link](https://x.test/a?b=1&c=2)") == (
        "*Title*\n*bold* &lt;!here&gt; link (<https://x.test/a?b=1&amp;c=2>)"
    )


def test_no_answer_says_so() -> None:
    state = samples.state(status=RunStatus.FAILED)
    state.error = "LLM quota exceeded"
    payload = assert_valid(answer_messages(state)[0])
    assert "No answer was produced: LLM quota exceeded" in all_text(payload)
    assert "could not judge how reliable" in all_text(payload)


def test_confidence_says_what_to_do_not_how_alarming() -> None:
    for level, words in [
        (InterventionLevel.SILENT, "✅ Confident"),
        (InterventionLevel.NOTIFY, "👍 Fairly sure"),
        (InterventionLevel.CONFIRM, "please check the sources"),
        (InterventionLevel.ESCALATE, "please check them"),
    ]:
        state = samples.state(answer="a")
        state.level = level
        text = all_text(to_payload(answer_messages(state)[0]))
        assert words in text
        assert "🔴" not in text and level.value not in text
    # An unsure answer says why in one sentence (the sample's score has a tool failure).
    assert "A search did not work" in text


def test_fallback_text_and_feedback_ack() -> None:
    state = samples.state(answer="x " * 30_000)
    assert len(answer_fallback_text(state)) <= 3000
    assert "continued" in answer_fallback_text(state, part=2)
    up = assert_valid(feedback_ack("U1", up=True))
    down = assert_valid(feedback_ack("U1", up=False))
    assert "👍" in all_text(up) and "<@U1>" in all_text(up)
    assert "👎" in all_text(down)


def _three_documents() -> list[Source]:
    return [
        Source(source="remote.md", text="Employees may work remotely up to 3 days per week."),
        Source(source="expenses.md", text="Home office equipment is covered by the stipend."),
        Source(source="handbook.md", text="Remote work is limited to one day per week."),
    ]


def test_the_alert_names_the_documents_whose_figures_disagree() -> None:
    """Issue 23 (d): the alert named the first two documents cited, not the two that
    state different figures."""
    state = samples.state(answer="a")
    state.sources = _three_documents()
    assert state.overall_detail is not None
    state.overall_detail.breakdown["source_agreement"] = 0.2
    payload = assert_valid(answer_messages(state)[0])
    (alert,) = [b for b in payload if b["type"] == "alert"]
    assert "*remote.md* and *handbook.md* say different things" in alert["text"]["text"]
    # The answer's evidence found no conflict: unlike documents are not disagreeing ones.
    state.overall_detail.breakdown["sources_conflict"] = 0.0
    assert not [b for b in assert_valid(answer_messages(state)[0]) if b["type"] == "alert"]


def test_disagreeing_documents_are_warned_about_once() -> None:
    """Issue 23 (f): the warning about disagreeing documents was shown twice."""
    state = samples.state(answer="a")
    state.sources = _three_documents()
    state.level = InterventionLevel.CONFIRM
    assert state.overall_detail is not None
    state.overall_detail.breakdown["source_agreement"] = 0.2
    text = all_text(assert_valid(answer_messages(state)[0]))
    assert text.count("remote.md* and *handbook.md") == 1, text
    # An answer that warns in its own words gets no second warning.
    state.final_answer = (
        "Up to 3 days [Source: remote.md]\nOne day [Source: handbook.md]\n"
        "⚠️ These sources disagree; check which one is current."
    )
    payload = assert_valid(answer_messages(state)[0])
    assert not [b for b in payload if b["type"] == "alert"]
    assert "disagree" not in all_text(payload).replace("These sources disagree", "")


def test_a_person_who_answered_is_cited_by_name_not_by_id() -> None:
    """Issue 23 (b): an answer from a person's reply cited `@U0ALICE (reply in thread)`;
    as a mention Slack shows "@alice (reply in thread)"."""
    person = Source(
        source="@U0ALICE (reply in thread)", text="It is Ulaanbaatar.", from_person=True
    )
    state = samples.state(answer="It is Ulaanbaatar. [Source: @U0ALICE (reply in thread)]")
    state.sources = [person]
    text = all_text(assert_valid(answer_messages(state)[0]))
    assert "It is Ulaanbaatar. [Source: <@U0ALICE> (reply in thread)]" in text
    assert "*<@U0ALICE> (reply in thread)*" in text
    assert "@U0ALICE" not in text.replace("<@U0ALICE>", "")
    # A document's name is never read as a person, even when it looks like an id.
    state.sources = [Source(source="U0ALICE1.md", text="x")]
    state.final_answer = "x [Source: U0ALICE1.md]"
    assert "<@" not in all_text(assert_valid(answer_messages(state)[0]))


def test_a_source_quotes_the_sentence_the_answer_used_without_its_heading() -> None:
    """Issue 23 (f): source quotes showed the section's start with the heading trail run
    into the text ("Remote Work Policy › How much remote work Employees may…")."""
    passage = Source(
        source="remote.md",
        text="Remote Work Policy › How much remote work\n\nEmployees may work remotely up "
        "to 3 days per week. The remaining days are spent in the office; each team picks "
        "at least one shared office day.",
    )
    state = samples.state(answer="a")
    state.sources = [passage]
    state.final_answer = (
        "Each team picks a day. The remaining days are spent in the office; each team "
        "picks at least one shared office day. [Source: remote.md]"
    )
    text = all_text(assert_valid(answer_messages(state)[0]))
    assert "*remote.md* — “The remaining days are spent in the office;" in text
    assert "›" not in text
    # An answer that quotes nothing word for word: the passage's text, not its heading.
    state.final_answer = "Three days. [Source: remote.md]"
    text = all_text(assert_valid(answer_messages(state)[0]))
    assert "*remote.md* — “Employees may work remotely up to 3 days per week." in text
