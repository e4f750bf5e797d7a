"""Checks of Block Kit payloads: what Slack would accept, and what a reader sees."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from slack_sdk.models.blocks import Block

from blocks.limits import (
    MAX_BLOCKS_PER_MESSAGE,
    MAX_BUTTON_TEXT,
    MAX_BUTTON_VALUE,
    MAX_HEADER_TEXT,
    MAX_SECTION_TEXT,
    to_payload,
    validate_message,
)


def walk(value: Any) -> Iterator[dict[str, Any]]:
    """Every dict inside a payload, depth first."""
    if isinstance(value, dict):
        yield value
        for child in value.values():
            yield from walk(child)
    elif isinstance(value, list):
        for child in value:
            yield from walk(child)


def assert_valid(blocks: Sequence[Block]) -> list[dict[str, Any]]:
    """Slack would accept `blocks` as one message; checked twice (sdk + by hand)."""
    validate_message(blocks)
    payload = to_payload(blocks)
    assert 1 <= len(payload) <= MAX_BLOCKS_PER_MESSAGE
    for block in payload:
        if block["type"] == "section" and "text" in block:
            assert 0 < len(block["text"]["text"]) <= MAX_SECTION_TEXT
        if block["type"] == "header":
            assert len(block["text"]["text"]) <= MAX_HEADER_TEXT
        for element in walk(block):
            if element.get("type") == "button":
                assert len(element["text"]["text"]) <= MAX_BUTTON_TEXT
                assert len(element.get("value", "")) <= MAX_BUTTON_VALUE
    return payload


def all_text(payload: list[dict[str, Any]]) -> str:
    """Every text string of a payload joined, to search what a reader sees."""
    texts = [d["text"] for d in walk(payload) if isinstance(d.get("text"), str)]
    return "\n".join(texts)


def actions_of(payload: list[dict[str, Any]]) -> list[str]:
    """The action ids of every interactive element, in order."""
    return [d["action_id"] for d in walk(payload) if "action_id" in d]
