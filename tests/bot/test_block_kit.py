"""Acceptance 8: every message the bot sends is valid Block Kit within Slack's limits.

The `fake` fixture checks every chat.postMessage / chat.update / chat.postEphemeral of
every test in this folder when it tears down; this module drives the widest mix of
messages through one bot and checks them (and the modal) explicitly, and makes sure the
checker itself rejects what Slack would reject.
"""

from __future__ import annotations

from typing import Any

import pytest
from slack_sdk.models.views import View

from blocks import ids
from blocks.limits import BlockLimitError, validate_view
from bot.simulator.webapi import FakeSlack

from .conftest import (
    COMPARE_Q,
    LATEST_Q,
    MONGOLIA_Q,
    OTHER,
    VACATION_Q,
    BotHarness,
    assert_valid_block_kit,
    button_values,
    check_block_kit,
    proceed_through_confirms,
)


async def test_every_kind_of_message_is_valid_block_kit(
    harness: BotHarness, fake: FakeSlack
) -> None:
    # answers, a long question near the limit, plan approval with Edit, confirm, escalate,
    # ask_user, refusals, feedback, cancellation
    await harness.mention(VACATION_Q, ts="1700008000.000001")
    long_question = ("Explain the vacation policy for new employees in detail, please. " * 70)[
        :3990
    ]
    await harness.mention(long_question, ts="1700008000.000002")
    approval = await harness.ask(COMPARE_Q, ts="1700008000.000003")
    plan = await harness.plan_message(approval)
    buttons = button_values(plan)
    await harness.click(ids.PLAN_RUN, buttons[ids.PLAN_RUN], message=plan, user=OTHER)
    await harness.click(ids.PLAN_EDIT, buttons[ids.PLAN_EDIT], message=plan)
    view = fake.calls_to("views.open")[-1].params["view"]
    await harness.submit_modal(view, "Focus on equipment " * 100)
    await proceed_through_confirms(harness, "1700008000.000003")
    await harness.mention(MONGOLIA_Q, ts="1700008000.000004")
    await harness.thread_reply("Try the atlas", thread_ts="1700008000.000004", ts="1.1")
    await harness.mention(LATEST_Q, ts="1700008000.000005")
    await harness.mention(COMPARE_Q, ts="1700008000.000006")
    to_cancel = await harness.plan_message(await harness.run_in("1700008000.000006"))
    await harness.click(
        ids.PLAN_CANCEL, button_values(to_cancel)[ids.PLAN_CANCEL], message=to_cancel
    )
    answered = await harness.run_in("1700008000.000001")
    answer = await harness.answer_message(answered)
    await harness.vote(answer, up=False)

    long_run = await harness.run_in("1700008000.000002")
    assert long_run.query == long_question.strip()
    assert (await harness.plan_message(long_run)).blocks
    checked = assert_valid_block_kit(fake.calls)
    assert checked >= 30, f"only {checked} messages with blocks were sent"
    methods = {c.method for c in fake.calls if c.params.get("blocks")}
    assert methods == {"chat.postMessage", "chat.update", "chat.postEphemeral"}
    for call in fake.calls_to("views.open"):
        validate_view(View(**call.params["view"]))
    # The Home tab links a run that has no message yet to the asker's own message, which
    # this fake never saw (events are delivered, not posted): that permalink is refused.
    assert all(
        c.response.get("ok")
        for c in fake.calls
        if c.method != "chat.update" and not _unseen_permalink(c)
    )


def _unseen_permalink(call: Any) -> bool:
    return call.method == "chat.getPermalink" and call.response.get("error") == "message_not_found"


def _section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def _button(text: str, value: str) -> dict[str, Any]:
    return {
        "type": "actions",
        "elements": [
            {
                "type": "button",
                "action_id": "a",
                "text": {"type": "plain_text", "text": text},
                "value": value,
            }
        ],
    }


@pytest.mark.parametrize(
    "blocks",
    [
        [_section("ok")] * 51,
        [_section("x" * 3001)],
        [_button("x" * 76, "v")],
        [_button("ok", "v" * 2001)],
        [{"type": "no_such_block"}],
    ],
    ids=["51 blocks", "long section", "long button text", "long button value", "unknown block"],
)
def test_the_checker_rejects_what_slack_rejects(blocks: list[dict[str, Any]]) -> None:
    with pytest.raises((AssertionError, BlockLimitError)):
        check_block_kit(blocks, "sample")
