"""Confirm / escalate / decided / expired messages and the modify modal."""

from __future__ import annotations

import pytest

from agent.schemas import (
    ConfidenceScore,
    InterventionAction,
    InterventionAnswer,
    InterventionKind,
    InterventionLevel,
)
from blocks import ids
from blocks.details import details_modal
from blocks.explain import why_unsure
from blocks.ids import ButtonValue, ModalMetadata
from blocks.intervention import (
    confirm_message,
    decided_message,
    escalate_message,
    expired_message,
    modify_modal,
)
from blocks.limits import validate_view
from tests import samples
from tests.blocks.payloads import actions_of, all_text, assert_valid, walk


def test_confirm_message_says_what_was_found_why_unsure_and_what_choices_do() -> None:
    state = samples.state()
    state.step_results[2].sources = samples.sources(4)  # doc-0 and doc-1
    request = samples.confirm_request(state.run_id)
    payload = assert_valid(confirm_message(state, request))
    text = all_text(payload)
    assert "step 2 of 3" in text
    assert "I found 4 passages in *doc-0.md* and *doc-1.md*." in text
    assert "*Why I am unsure:* A search did not work" in text
    assert "*Proceed* goes on with what I found" in text
    assert "*Cancel* stops here without an answer" in text
    # No factor names, scores, `base`, or the weakest factors listed (twice) on the card.
    for technical in ("0.55", "0.31", "search_quality", "Weakest", "base", "×0.9", "🟠"):
        assert technical not in text, technical
    # The disagreeing documents are an alert naming both.
    (alert,) = [b for b in payload if b["type"] == "alert"]
    assert "*doc-0.md* and *doc-1.md*" in alert["text"]["text"]
    assert "<@U0APPROVER>" in text
    assert actions_of(payload) == [
        ids.DETAILS,
        ids.CONFIRM_PROCEED,
        ids.CONFIRM_MODIFY,
        ids.CONFIRM_CANCEL,
    ]
    for element in walk(payload):
        if element.get("type") == "button":
            value = ButtonValue.decode(element["value"])
            assert (value.run_id, value.intervention_id) == (
                state.run_id,
                request.intervention_id,
            )


def test_details_modal_has_the_numbers_once_without_base() -> None:
    state = samples.state()
    request = samples.confirm_request(state.run_id)
    request.confidence.breakdown["base"] = 0.61  # type: ignore[union-attr]
    view = details_modal(state, request)
    validate_view(view)
    data = view.to_dict()
    assert "submit" not in data
    text = all_text(data["blocks"])
    assert "*Score:* 0.55" in text
    assert text.count("how well the search matched 0.31") == 1
    assert "search_quality" not in text
    assert "base" not in text and "*Before penalties:* 0.61" in text
    assert "single source ×0.9" in text
    assert "threshold" not in text  # a Confirm's reason only repeats its factors
    escalation = samples.escalate_request(state.run_id).model_copy(
        update={"reason": "step 1 confidence 0.00 < 0.40; the replan limit (3) is reached"}
    )
    shown = all_text(details_modal(state, escalation).to_dict()["blocks"])
    assert "the replan limit (3) is reached" in shown  # the scorer's own reason


def test_details_modal_speaks_the_cards_words_not_factor_names() -> None:
    """Issue 23 (g): a calibrated score's breakdown holds the scorer's factors and many
    finer signals; the modal names the factors in plain words, counts the rest, and says
    the level as the cards do ("Fairly sure"), never `notify` or snake_case."""
    state = samples.state()
    finer = {f"signal_{i}_value": 0.5 for i in range(14)}
    state.overall_confidence = 0.82
    state.level = InterventionLevel.NOTIFY
    state.overall_detail = ConfidenceScore(
        score=0.82,
        breakdown={
            "steps_aggregate": 0.7,
            "tool_success": 1.0,
            "search_quality": 0.75,
            "llm_self_eval": 1.0,
            "query_coverage": 0.57,
            **finer,
            "calibrated": 0.82,
        },
    )
    request = samples.confirm_request(state.run_id)
    text = all_text(details_modal(state, request).to_dict()["blocks"])
    assert "👍 Fairly sure 0.82" in text
    assert "🤔 Not fully sure" in text
    assert "how much of the question the answer covers 0.57" in text
    assert "14 finer signals" in text
    for name in state.overall_detail.breakdown:
        assert name not in text, name
    for level in ("silent", "notify", "escalate"):
        assert level not in text, level


@pytest.mark.parametrize(
    ("penalties", "breakdown", "n_sources", "sentence"),
    [
        (["no search results ×0.5"], {"search_quality": 0.0}, 0, "Nothing in the knowledge base"),
        (["single source ×0.9"], {"search_quality": 0.8}, 1, "Only one document mentions this"),
        ([], {"source_agreement": 0.2}, 4, "The two documents disagree"),
        ([], {"query_coverage": 0.3}, 4, "only partly covers your question"),
        ([], {"search_quality": 0.9}, 4, "thinner than I would like"),
    ],
)
def test_why_unsure_is_one_plain_sentence(
    penalties: list[str], breakdown: dict[str, float], n_sources: int, sentence: str
) -> None:
    detail = ConfidenceScore(
        score=0.5, breakdown=breakdown, penalties=penalties, is_search_step=True
    )
    assert sentence in why_unsure(detail, samples.sources(n_sources))


def test_a_single_dated_document_says_its_year() -> None:
    detail = ConfidenceScore(score=0.6, penalties=["single source ×0.9"], is_search_step=True)
    source = samples.sources(1)[0].model_copy(update={"source": "employee-handbook-2022.md"})
    assert why_unsure(detail, [source]) == (
        "Only one document mentions this (*employee-handbook-2022.md*), and it is from 2022."
    )


def test_confirm_message_with_huge_question() -> None:
    state = samples.state(query="q " * 20_000)
    request = samples.confirm_request(state.run_id).model_copy(
        update={"question": "why? " * 8000, "reason": "r " * 5000}
    )
    assert_valid(confirm_message(state, request))


def test_escalate_message_has_one_button_per_option() -> None:
    state = samples.state()
    request = samples.escalate_request(state.run_id).model_copy(
        update={"reason": "step 1 confidence 0.00 < 0.40; the replan limit (3) is reached"}
    )
    payload = assert_valid(escalate_message(state, request))
    actions = actions_of(payload)
    assert actions == [
        ids.DETAILS,
        ids.option_action_id(0),
        ids.option_action_id(1),
        ids.ESCALATE_PROCEED,
        ids.ESCALATE_CANCEL,
    ]
    option = next(d for d in walk(payload) if d.get("action_id") == ids.option_action_id(1))
    assert option["text"]["text"] == "2. Osaka office"
    assert ButtonValue.decode(option["value"]).option == 1
    text = all_text(payload)
    assert "I need your help to answer this" in text
    assert "*Proceed anyway* answers with what I have" in text
    assert "Reply in this thread to answer" in text
    for technical in ("replan limit", "0.40", "0.21", "🔴"):
        assert technical not in text, technical


def test_ask_user_is_a_question_not_an_alarm() -> None:
    state = samples.state()
    request = samples.escalate_request(
        state.run_id,
        kind=InterventionKind.ASK_USER,
        question="Which product or component do you mean?",
    ).model_copy(update={"reason": "the product the user means"})
    text = all_text(assert_valid(escalate_message(state, request)))
    assert "❓ *A quick question before I go on*" in text
    assert "Which product or component do you mean?" in text
    assert "the product the user means" not in text
    assert "🔴" not in text


def test_ask_user_has_options_but_no_proceed_or_cancel() -> None:
    state = samples.state()
    request = samples.escalate_request(state.run_id, kind=InterventionKind.ASK_USER)
    payload = assert_valid(escalate_message(state, request))
    assert ids.ESCALATE_PROCEED not in actions_of(payload)
    assert ids.ESCALATE_CANCEL not in actions_of(payload)


def test_ask_user_without_options_is_a_plain_question() -> None:
    state = samples.state()
    request = samples.escalate_request(state.run_id, options=(), kind=InterventionKind.ASK_USER)
    payload = assert_valid(escalate_message(state, request))
    assert actions_of(payload) == []
    assert "Reply in this thread" in all_text(payload)


def test_escalate_with_30_long_options_stays_within_limits() -> None:
    state = samples.state()
    options = [f"option {i} " + samples.words(200, seed=i) for i in range(30)]
    request = samples.escalate_request(
        state.run_id, options=options, question=samples.words(40_000)
    )
    payload = assert_valid(escalate_message(state, request))
    option_ids = [a for a in actions_of(payload) if ids.parse_option_action_id(a) is not None]
    assert len(option_ids) == 20
    text = all_text(payload)
    assert "options 21–30 have no button" in text
    assert "*30.*" in text  # the full list names every option


def test_decided_message_replaces_buttons() -> None:
    request = samples.confirm_request("r1")
    payload = assert_valid(decided_message(request, "U123", InterventionAction.PROCEED))
    assert not [b for b in payload if b["type"] == "actions"]
    assert "✅ Approved by <@U123>" in all_text(payload)
    assert "Should I go on with step 2?" in all_text(payload)


def test_decided_message_variants() -> None:
    request = samples.confirm_request("r1")
    cancelled = all_text(assert_valid(decided_message(request, "U9", InterventionAction.CANCEL)))
    assert "🛑 Cancelled by <@U9>" in cancelled
    answered = request.model_copy(
        update={
            "answer": InterventionAnswer(action=InterventionAction.MODIFY, text="use 2024 <data>")
        }
    )
    modified = assert_valid(decided_message(answered, "U9", InterventionAction.MODIFY))
    assert "✏️ Modified by <@U9>: use 2024 &lt;data&gt;" in all_text(modified)
    free = assert_valid(decided_message(request, "U9", "👀 Looked at", detail="fine"))
    assert "👀 Looked at by <@U9>: fine" in all_text(free)


def test_decided_message_names_the_chosen_option() -> None:
    request = samples.escalate_request("r1").model_copy(
        update={"answer": InterventionAnswer(action=InterventionAction.INPUT, option=1)}
    )
    payload = assert_valid(decided_message(request, "U1", InterventionAction.INPUT))
    assert "💬 Answered by <@U1>: Osaka office" in all_text(payload)


def test_decided_message_with_huge_texts() -> None:
    request = samples.escalate_request("r1", question="x" * 40_000)
    payload = assert_valid(
        decided_message(request, "U1", InterventionAction.MODIFY, detail="y " * 20_000)
    )
    assert len(payload) == 2


@pytest.mark.parametrize(
    ("outcome", "words"),
    [(InterventionAction.PROCEED, "went ahead"), (InterventionAction.CANCEL, "cancelled")],
)
def test_expired_message(outcome: InterventionAction, words: str) -> None:
    request = samples.confirm_request("r1")
    payload = assert_valid(expired_message(request, outcome))
    assert words in all_text(payload)
    assert "<!date^" in all_text(payload)
    assert not [b for b in payload if b["type"] == "actions"]


def test_modify_modal() -> None:
    request = samples.confirm_request("r1").model_copy(update={"question": "q" * 10_000})
    view = modify_modal(request, "C0GENERAL1", "1700000000.000100")
    validate_view(view)
    data = view.to_dict()
    assert data["callback_id"] == ids.MODIFY_MODAL_CALLBACK
    meta = ModalMetadata.decode(data["private_metadata"])
    assert meta == ModalMetadata(
        run_id="r1",
        intervention_id=request.intervention_id,
        channel="C0GENERAL1",
        thread_ts="1700000000.000100",
    )
    block = next(b for b in data["blocks"] if b["type"] == "input")
    assert block["block_id"] == ids.MODIFY_INPUT_BLOCK
    assert block["element"]["action_id"] == ids.MODIFY_INPUT_ACTION
    assert block["element"]["multiline"] is True
    assert block["label"]["text"] == "How should the plan change?"


def test_modify_modal_for_plan_approval_says_edit() -> None:
    view = modify_modal(samples.plan_approval("r1"), "C1", "1.0")
    validate_view(view)
    assert view.to_dict()["title"]["text"] == "Edit plan"


@pytest.mark.parametrize("kind", [InterventionKind.ESCALATE, InterventionKind.ASK_USER])
def test_the_edited_pause_keeps_the_live_messages_title(kind: InterventionKind) -> None:
    """Issue 23 (f): "I need your help" became "GRACE needs your help" once answered."""
    state = samples.state()
    request = samples.escalate_request(state.run_id).model_copy(update={"kind": kind})
    live = all_text(assert_valid(escalate_message(state, request))).split("\n")[0]
    title = live.split("*")[1]
    for edited in (
        decided_message(request, "U9", InterventionAction.INPUT, detail="the 2024 one"),
        expired_message(request, InterventionAction.PROCEED),
    ):
        text = all_text(assert_valid(edited))
        assert title in text, (title, text)
        assert "GRACE" not in text
