"""Slack's Block Kit limits and the helpers that keep every payload inside them.

`slack_sdk.models` validates most per-element limits in `to_dict()`, but not the number of
blocks per message, duplicate action ids or the length of context texts, so
`validate_message` adds those checks: a payload that passes it is one Slack accepts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from slack_sdk.errors import SlackObjectFormationError
from slack_sdk.models.blocks import Block
from slack_sdk.models.views import View

from blocks.sanitize import escape_once, strip_invisible

MAX_BLOCKS_PER_MESSAGE = 50
MAX_BLOCKS_PER_VIEW = 100
MAX_SECTION_TEXT = 3000
MAX_HEADER_TEXT = 150
MAX_CONTEXT_ELEMENTS = 10
MAX_CONTEXT_TEXT = 3000
MAX_BUTTON_TEXT = 75
MAX_BUTTON_VALUE = 2000
MAX_ACTIONS_ELEMENTS = 25
MAX_MESSAGE_TEXT = 40000
MAX_ACTION_ID = 255
MAX_PRIVATE_METADATA = 3000
MAX_VIEW_TITLE = 24
MAX_INPUT_LABEL = 2000

ELLIPSIS = "…"

# Where a long text may be cut, best first: paragraph, line, sentence, word.
_PARAGRAPH = re.compile(r"\n\s*\n")
_LINE = re.compile(r"\n")
_SENTENCE = re.compile(r"(?<=[.!?])\s|(?<=[。！？])")
_WORD = re.compile(r"\s")
# A cut must not leave half of a mrkdwn entity such as `&amp;` at the end of a piece.
_PARTIAL_ENTITY = re.compile(r"&[a-z]{0,4}$")


class BlockLimitError(ValueError):
    """A payload Slack would reject (too many blocks, a text too long, a duplicate id…)."""


def truncate(text: str, limit: int) -> str:
    """Cut `text` to at most `limit` characters, ending with an ellipsis when cut.

    Prefers a word boundary near the end so that a label does not end mid-word.
    """
    if limit < 1:
        raise ValueError(f"limit must be at least 1, got {limit}")
    if len(text) <= limit:
        return text
    if limit == 1:
        return ELLIPSIS
    head = text[: limit - 1]
    space = head.rfind(" ")
    if not text[limit - 1].isspace() and space >= max(1, int(len(head) * 0.7)):
        head = head[:space]
    head = _PARTIAL_ENTITY.sub("", head).rstrip()
    return head + ELLIPSIS


def _cut_point(window: str, limit: int) -> int:
    """Where to end the next piece inside `window` (already at most `limit` chars)."""
    floor = limit // 2
    for pattern, min_pos in ((_PARAGRAPH, floor), (_LINE, floor), (_SENTENCE, floor)):
        ends = [m.end() for m in pattern.finditer(window) if m.end() > min_pos]
        if ends:
            return ends[-1]
    ends = [m.end() for m in _WORD.finditer(window) if m.end() > 0]
    if ends:
        return ends[-1]
    cut = len(window)
    partial = _PARTIAL_ENTITY.search(window)
    if partial and partial.start() > 0:
        cut = partial.start()
    return cut


def split_text(text: str, limit: int) -> list[str]:
    """Split `text` into pieces of at most `limit` characters, losing nothing.

    `"".join(split_text(t, n)) == t` always holds: the separator a piece was cut at stays
    at the end of that piece. Cuts prefer paragraph, then line, then sentence, then word
    boundaries; a word is only cut when it alone is longer than `limit`.
    """
    if limit < 1:
        raise ValueError(f"limit must be at least 1, got {limit}")
    pieces: list[str] = []
    start = 0
    while len(text) - start > limit:
        window = text[start : start + limit]
        cut = _cut_point(window, limit)
        pieces.append(window[:cut])
        start += cut
    if start < len(text) or not pieces:
        pieces.append(text[start:])
    return pieces


def escape_mrkdwn(text: str) -> str:
    """Escape the three characters Slack treats as control characters in mrkdwn.

    Applied to every user- or LLM-provided text so that it cannot ping `<!channel>` or
    break a link. Through the one sanitiser (`blocks.sanitize`): invisible characters
    removed, and escaped once — `&lt;` already there is not escaped again.
    """
    return escape_once(strip_invisible(text))


def to_payload(blocks: Iterable[Block | dict[str, Any]]) -> list[dict[str, Any]]:
    """Blocks as the JSON-ready dicts `chat.postMessage` takes (validated by slack_sdk)."""
    return [b if isinstance(b, dict) else b.to_dict() for b in blocks]


def _as_block(block: Block | dict[str, Any], index: int) -> Block:
    if isinstance(block, Block):
        return block
    parsed = Block.parse(block)
    if parsed is None:
        raise BlockLimitError(f"block {index} is not a block Slack knows: {block!r:.200}")
    return parsed


def _text_of(obj: Any) -> str | None:
    if isinstance(obj, dict):
        value = obj.get("text")
        return value if isinstance(value, str) else None
    return None


def _check_block_dict(data: dict[str, Any], index: int, action_ids: set[str]) -> None:
    kind = data.get("type")
    if kind == "context":
        for element in data.get("elements", []):
            text = _text_of(element)
            if text is not None and len(text) > MAX_CONTEXT_TEXT:
                raise BlockLimitError(
                    f"block {index} (context): text of {len(text)} chars > {MAX_CONTEXT_TEXT}"
                )
    if kind == "section":
        text = _text_of(data.get("text"))
        if text is not None and not text.strip():
            raise BlockLimitError(f"block {index} (section): text is blank")
    elements = data.get("elements", []) if kind == "actions" else []
    if kind == "input" and isinstance(data.get("element"), dict):
        elements = [data["element"]]
    if kind == "section" and isinstance(data.get("accessory"), dict):
        elements = [data["accessory"]]
    for element in elements:
        action_id = element.get("action_id")
        if action_id is None:
            continue
        if action_id in action_ids:
            raise BlockLimitError(f"block {index}: duplicate action_id {action_id!r}")
        action_ids.add(action_id)


def validate_message(
    blocks: Sequence[Block | dict[str, Any]], *, max_blocks: int = MAX_BLOCKS_PER_MESSAGE
) -> None:
    """Raise `BlockLimitError` unless Slack would accept `blocks` as one message.

    Runs slack_sdk's own validation (`to_dict()`) on every block, then the checks it
    lacks: the block count, unique action/block ids, context text length.
    """
    if not blocks:
        raise BlockLimitError("a message needs at least one block")
    if len(blocks) > max_blocks:
        raise BlockLimitError(f"{len(blocks)} blocks in one message; Slack allows {max_blocks}")
    action_ids: set[str] = set()
    block_ids: set[str] = set()
    for index, raw in enumerate(blocks):
        block = _as_block(raw, index)
        try:
            data = block.to_dict()
        except SlackObjectFormationError as exc:
            raise BlockLimitError(f"block {index} ({block.type}): {exc}") from exc
        block_id = data.get("block_id")
        if block_id is not None:
            if block_id in block_ids:
                raise BlockLimitError(f"block {index}: duplicate block_id {block_id!r}")
            block_ids.add(block_id)
        _check_block_dict(data, index, action_ids)


def validate_view(view: View) -> None:
    """Raise `BlockLimitError` unless Slack would accept `view` in `views.open`."""
    try:
        view.to_dict()
    except SlackObjectFormationError as exc:
        raise BlockLimitError(f"view: {exc}") from exc
    validate_message(view.blocks or [], max_blocks=MAX_BLOCKS_PER_VIEW)
