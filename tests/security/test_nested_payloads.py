"""Issue 22 point 5: JSON inside string fields (button values, a modal's
`private_metadata`, stored rows) is decoded within bounds: malformed or deeply nested
text gets a polite answer, never a 500 or a traceback, and never a poison inbox row."""

from __future__ import annotations

import logging
import random

import pytest
from sqlalchemy import select

from agent.bounded_json import JsonRejected, loads_bounded, nesting_depth, outside_strings
from blocks import ids
from bot.slack.items import Command, InboxKind, ModifySubmission, stored
from storage.tables import InboxRow
from tests.bot.conftest import COMPARE_Q, BotHarness, button_values

TS = "1700240000.000100"
NESTED = "[" * 10_000 + "]" * 10_000
NESTED_OBJECT = '{"r":' * 5_000 + "1" + "}" * 5_000


async def inbox_rows(h: BotHarness) -> list[InboxRow]:
    async with h.store.engine.connect() as conn:
        rows = await conn.execute(select(InboxRow).order_by(InboxRow.id))
        return list(rows)  # type: ignore[arg-type]


def no_tracebacks(caplog: pytest.LogCaptureFixture) -> None:
    assert not [r for r in caplog.records if r.exc_info], "a traceback was logged"
    assert "RecursionError" not in caplog.text


@pytest.mark.parametrize("value", [NESTED, NESTED_OBJECT, '{"r":"' + "a" * 5000 + '"}', "{"])
async def test_a_proceed_click_with_a_hostile_value_is_answered_once_and_dropped(
    harness: BotHarness, value: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    state = await harness.ask(COMPARE_Q, ts=TS)
    plan = await harness.plan_message(state)
    assert ids.PLAN_RUN in button_values(plan)
    reply = await harness.click(ids.PLAN_RUN, value, message=plan)
    assert reply.status == 200
    assert harness.ephemerals()[-1] == (
        "This button is not one of mine, or it is damaged; nothing was changed."
    )
    rows = [r for r in await inbox_rows(harness) if r.kind == InboxKind.CLICK]
    assert [(r.status, r.attempts) for r in rows] == [("done", 0)], "one try, no poison row"
    assert (await harness.run_in(TS)).pending is not None, "the run still waits"
    no_tracebacks(caplog)


@pytest.mark.parametrize("metadata", [NESTED, NESTED_OBJECT, "x" * 10_000, "[]"])
async def test_a_modal_with_hostile_metadata_gets_a_form_error_not_a_500(
    harness: BotHarness, metadata: str, caplog: pytest.LogCaptureFixture
) -> None:
    view = {"callback_id": ids.MODIFY_MODAL_CALLBACK, "private_metadata": metadata}
    reply = await harness.submit_modal(view, "only the handbook please")
    assert reply.status == 200
    assert reply.json() == {
        "response_action": "errors",
        "errors": {ids.MODIFY_INPUT_BLOCK: "This form is damaged; close it and retry."},
    }
    no_tracebacks(caplog)


async def test_an_unreadable_stored_row_fails_at_once(
    harness: BotHarness, caplog: pytest.LogCaptureFixture
) -> None:
    """Rows another version wrote, or a damaged one: dropped on the first try."""
    bad_modify = stored(
        ModifySubmission(metadata=NESTED, user="U1", text="x"), event_id="modal:poison"
    )
    bad_command = stored(
        Command(sub="cancel", run_id="r", user="U1", channel="C1"), event_id="command:poison"
    )
    bad_command.payload["sub"] = "explode"
    assert await harness.bot.intake.accept(bad_modify)
    assert await harness.bot.intake.accept(bad_command)
    await harness.settle()
    rows = {r.event_id: (r.status, r.attempts) for r in await inbox_rows(harness)}
    assert rows == {"modal:poison": ("failed", 0), "command:poison": ("failed", 0)}
    no_tracebacks(caplog)


def _depth_char_by_char(text: str, limit: int) -> int:
    """The rule, walked one character at a time with `outside_strings`."""
    depth = deepest = 0
    for _, char in outside_strings(text):
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
            if deepest > limit:
                return deepest
        elif char in "]}":
            depth -= 1
    return deepest


def test_depth_counts_the_brackets_outside_strings_on_any_text() -> None:
    """`nesting_depth` finds brackets with regular expressions (it runs on every Slack
    request): the same answer as the character walk on random text made of the
    characters that matter — escapes, unterminated strings, stray closers included."""
    rng = random.Random(23)
    texts = ['"abc', '"ab\\', '"\\"[', '[["]]]', '{"a":"\\\\"}[', '["\\u005b"]', ""]
    texts += [
        "".join(rng.choice('[]{}"\\ a:\n') for _ in range(rng.randint(0, 40))) for _ in range(5000)
    ]
    for text in texts:
        for limit in (0, 2, 64):
            assert nesting_depth(text, limit) == _depth_char_by_char(text, limit), (text, limit)


def test_depth_is_found_without_recursion_and_strings_do_not_count() -> None:
    assert nesting_depth(NESTED, 64) == 65, "stops counting past the limit"
    assert nesting_depth('{"a": "[[[[[[[[[["}', 2) == 1
    assert nesting_depth('{"a": "\\"[[[["}', 2) == 1
    assert loads_bounded('{"r": [1, {"i": 2}]}', max_chars=100, max_depth=3) == {"r": [1, {"i": 2}]}
    for raw, reason in [
        ("[[[[[]]]]]", "too_deep"),
        ("1" * 101, "too_large"),
        ("{", "not_json"),
        ('{"a": NaN', "not_json"),
        (None, "not_text"),
    ]:
        with pytest.raises(JsonRejected) as caught:
            loads_bounded(raw, max_chars=100, max_depth=3)
        assert caught.value.reason == reason, reason
