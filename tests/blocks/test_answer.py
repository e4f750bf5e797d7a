"""The answer messages: split text, sources, confidence badge, feedback buttons."""

from __future__ import annotations

from agent.schemas import InterventionLevel, RunStatus
from blocks import ids
from blocks.answer import answer_fallback_text, answer_messages, feedback_ack, to_mrkdwn
from blocks.ids import ButtonValue
from tests.blocks import samples
from tests.blocks.samples import actions_of, all_text, assert_valid


def test_short_answer_is_one_message_with_everything() -> None:
    state = samples.state(answer="New employees get **10 days** [Source: doc-0.md].")
    messages = answer_messages(state)
    assert len(messages) == 1
    payload = assert_valid(messages[0])
    text = all_text(payload)
    assert "*10 days*" in text
    assert "doc-0.md" in text
    assert "🟡 notify 0.82" in text
    assert "search_quality 0.31" in text and "single source ×0.9" in text
    assert "answered by offline model" in text
    assert actions_of(payload) == [ids.FEEDBACK_UP, ids.FEEDBACK_DOWN]
    button = next(d for d in samples.walk(payload) if d.get("action_id") == ids.FEEDBACK_UP)
    assert ButtonValue.decode(button["value"]).run_id == state.run_id


def test_sources_are_deduplicated_by_name() -> None:
    state = samples.state(answer="a", n_sources=6)  # doc-0, doc-1, doc-2 twice each
    text = all_text(assert_valid(answer_messages(state)[0]))
    assert text.count("*doc-0.md*") == 1
    assert text.count("*doc-2.md*") == 1


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
    texts = [
        b["text"]["text"] for m in messages for b in samples.to_payload(m) if b["type"] == "section"
    ]
    joined = " ".join(texts)
    assert joined.split()[: len(answer.split())] == answer.split()
    assert actions_of(samples.to_payload(messages[-1])) == [ids.FEEDBACK_UP, ids.FEEDBACK_DOWN]


def test_very_long_answer_spans_several_messages() -> None:
    answer = samples.words(150_000)
    state = samples.state(answer=answer)
    messages = answer_messages(state)
    assert len(messages) >= 4
    for message in messages:
        assert_valid(message)
    assert "part 1 of" in all_text(samples.to_payload(messages[0]))
    for message in messages[:-1]:
        assert actions_of(samples.to_payload(message)) == []
    words_out = []
    for message in messages:
        for block in samples.to_payload(message):
            if block["type"] == "section" and not block["text"]["text"].startswith("*Sources*"):
                if block["text"]["text"].startswith("*Confidence:*"):
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
    assert "not scored" in all_text(payload)


def test_badges_per_level() -> None:
    for level, emoji in [
        (InterventionLevel.SILENT, "🟢"),
        (InterventionLevel.NOTIFY, "🟡"),
        (InterventionLevel.CONFIRM, "🟠"),
        (InterventionLevel.ESCALATE, "🔴"),
    ]:
        state = samples.state(answer="a")
        state.level = level
        assert f"{emoji} {level.value} 0.82" in all_text(
            samples.to_payload(answer_messages(state)[0])
        )


def test_fallback_text_and_feedback_ack() -> None:
    state = samples.state(answer="x " * 30_000)
    assert len(answer_fallback_text(state)) <= 3000
    assert "continued" in answer_fallback_text(state, part=2)
    up = assert_valid(feedback_ack("U1", up=True))
    down = assert_valid(feedback_ack("U1", up=False))
    assert "👍" in all_text(up) and "<@U1>" in all_text(up)
    assert "👎" in all_text(down)
