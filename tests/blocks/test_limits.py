"""Limits helpers: truncation, lossless splitting, message validation."""

from __future__ import annotations

import random

import pytest
from slack_sdk.models.blocks import ActionsBlock, ButtonElement, DividerBlock, SectionBlock

from blocks.limits import (
    ELLIPSIS,
    MAX_BLOCKS_PER_MESSAGE,
    BlockLimitError,
    escape_mrkdwn,
    split_text,
    to_payload,
    truncate,
    validate_message,
)
from tests.samples import words


def test_truncate_keeps_short_text() -> None:
    assert truncate("hello", 5) == "hello"


def test_truncate_cuts_with_ellipsis_at_a_word_boundary() -> None:
    text = "the quick brown fox jumps over the lazy dog"
    cut = truncate(text, 20)
    assert len(cut) <= 20
    assert cut.endswith(ELLIPSIS)
    assert cut == "the quick brown fox" + ELLIPSIS


def test_truncate_hard_cuts_a_single_long_word() -> None:
    cut = truncate("x" * 100, 10)
    assert cut == "x" * 9 + ELLIPSIS


def test_truncate_does_not_leave_half_an_entity() -> None:
    cut = truncate(escape_mrkdwn("a" * 8 + "<b>"), 11)
    assert not cut.rstrip(ELLIPSIS).endswith(("&", "&l", "&lt"))
    assert len(cut) <= 11


def test_truncate_rejects_a_zero_limit() -> None:
    with pytest.raises(ValueError, match="limit"):
        truncate("abc", 0)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("limit", [1, 7, 50, 3000])
def test_split_text_is_lossless_and_within_limit(seed: int, limit: int) -> None:
    rng = random.Random(seed)
    text = words(rng.randint(0, 12_000), seed=seed) + "\n" + "z" * rng.randint(0, 4000)
    pieces = split_text(text, limit)
    assert "".join(pieces) == text
    assert all(len(p) <= limit for p in pieces)
    assert all(p for p in pieces) or text == ""


def test_split_text_prefers_paragraphs_then_words() -> None:
    text = "first paragraph here.\n\nsecond paragraph is here"
    assert split_text(text, 30) == ["first paragraph here.\n\n", "second paragraph is here"]
    pieces = split_text("aaaa bbbb cccc dddd", 10)
    assert pieces == ["aaaa bbbb ", "cccc dddd"]


def test_split_text_never_cuts_mid_word_when_avoidable() -> None:
    text = words(30_000, seed=3)
    for piece in split_text(text, 3000)[:-1]:
        assert piece[-1].isspace() or piece.endswith(".")


def test_split_text_cuts_japanese_after_sentence_ends() -> None:
    text = "これは日本語の文です。" * 400
    pieces = split_text(text, 3000)
    assert "".join(pieces) == text
    assert all(p.endswith("。") for p in pieces)


def test_split_text_of_empty_text() -> None:
    assert split_text("", 10) == [""]


def test_validate_message_rejects_51_blocks() -> None:
    blocks = [DividerBlock() for _ in range(MAX_BLOCKS_PER_MESSAGE + 1)]
    with pytest.raises(BlockLimitError, match="51 blocks"):
        validate_message(blocks)
    validate_message(blocks[:MAX_BLOCKS_PER_MESSAGE])


def test_validate_message_rejects_long_section_text() -> None:
    with pytest.raises(BlockLimitError, match="block 0"):
        validate_message([SectionBlock(text="x" * 3001)])


def test_validate_message_checks_dict_blocks_too() -> None:
    with pytest.raises(BlockLimitError):
        validate_message([{"type": "section", "text": {"type": "mrkdwn", "text": "x" * 3001}}])
    validate_message([{"type": "section", "text": {"type": "mrkdwn", "text": "ok"}}])


def test_validate_message_rejects_duplicate_action_ids() -> None:
    button = ButtonElement(text="a", action_id="same", value="1")
    blocks = [
        ActionsBlock(elements=[button]),
        ActionsBlock(elements=[ButtonElement(text="b", action_id="same", value="2")]),
    ]
    with pytest.raises(BlockLimitError, match="duplicate action_id"):
        validate_message(blocks)


def test_validate_message_rejects_empty_message() -> None:
    with pytest.raises(BlockLimitError):
        validate_message([])


def test_to_payload_returns_dicts() -> None:
    payload = to_payload([DividerBlock(), {"type": "divider"}])
    assert payload == [{"type": "divider"}, {"type": "divider"}]


def test_escape_mrkdwn() -> None:
    assert escape_mrkdwn("<!channel> & <@U1>") == "&lt;!channel&gt; &amp; &lt;@U1&gt;"
