"""Cards in plain words, through the real app: what was found, why GRACE is unsure, what
each choice does; the numbers behind "Details"; the clarified query on the plan."""

from __future__ import annotations

from agent.schemas import InterventionKind
from blocks import ids

from .conftest import (
    COMPARE_Q,
    LATEST_Q,
    MONGOLIA_Q,
    BotHarness,
    button_values,
    message_text,
)

TS = "1700009000.000100"


def _opened_view_text(harness: BotHarness) -> str:
    opened = harness.fake.calls_to("views.open")
    assert opened, "no modal was opened"
    return message_text_of(opened[-1].params["view"]["blocks"])


def message_text_of(blocks: list[dict[str, object]]) -> str:
    parts: list[str] = []

    def visit(node: object) -> None:
        if isinstance(node, dict):
            text = node.get("text")
            if isinstance(text, str):
                parts.append(text)
            for value in node.values():
                visit(value)
        elif isinstance(node, list):
            for item in node:
                visit(item)

    visit(blocks)
    return "\n".join(parts)


async def test_an_escalation_speaks_plainly_and_details_open_the_numbers(
    harness: BotHarness,
) -> None:
    state, card = await harness.paused_question(MONGOLIA_Q, ts=TS, kind=InterventionKind.ESCALATE)
    assert state.pending is not None
    text = message_text(card)

    assert "I need your help to answer this" in text
    assert "*Why I am unsure:*" in text
    assert "*Proceed anyway* answers with what I have" in text
    for technical in ("replan limit", "< 0.40", "🔴", "escalate", "search_quality"):
        assert technical not in text, technical
    plan = message_text(await harness.plan_message(state))
    assert "escalate" not in plan and "0.00" not in plan

    await harness.click(ids.DETAILS, button_values(card)[ids.DETAILS], message=card)

    details = _opened_view_text(harness)
    assert "*Score:*" in details and "*Factors:*" in details
    # the run's own reason: another search would only repeat the one already run
    assert state.pending.reason and "would only repeat searches already run" in details
    assert "✅ *1.*" not in details  # a search that found nothing is not a success


async def test_a_confirm_card_says_what_each_choice_does(harness: BotHarness) -> None:
    await harness.mention(COMPARE_Q, ts=TS)
    plan = await harness.plan_message(await harness.run_in(TS))
    assert "🙋 *Run this plan?*" in message_text(plan) and "complexity" not in message_text(plan)
    await harness.click(ids.PLAN_RUN, button_values(plan)[ids.PLAN_RUN], message=plan)
    state = await harness.run_in(TS)
    assert state.pending is not None and state.pending.kind is InterventionKind.CONFIRM
    card = message_text(await harness.intervention_message(state, state.pending.intervention_id))

    assert "🤔 *Before I go on: please check step" in card
    assert "*Why I am unsure:*" in card
    assert "*Proceed* goes on with what I found" in card
    assert "*Modify…* tells me how to change the plan" in card
    for technical in (
        "finished with confidence",
        "eakest",
        "base 0",
        "base 1",
        "1.00",
        "0.60",
        "🟠",
    ):
        assert technical not in card, technical


async def test_a_clarifying_question_is_not_an_alarm_and_the_plan_shows_the_answer(
    harness: BotHarness,
) -> None:
    paused, question = await harness.paused_question(
        LATEST_Q, ts=TS, kind=InterventionKind.ASK_USER
    )
    assert paused.pending is not None
    text = message_text(question)
    assert "❓ *A quick question before I go on*" in text
    assert "the product the user means" not in text and "🔴" not in text
    choice = paused.pending.options.index("What is the latest version of Beacon Server?")
    action = ids.option_action_id(choice)
    await harness.click(action, button_values(question)[action], message=question)

    after = await harness.run_in(TS)
    plan = message_text(await harness.plan_message(after))
    assert "you answered “What is the latest version of Beacon Server?”" in plan
    assert "(with your answer “What is the latest version of Beacon Server?”)" in plan
