"""The terminal prompt of `grace ask` speaks like the Slack cards: plain words, no
scores or internal field notes (those are in `grace show RUN`)."""

from __future__ import annotations

import pytest

from agent.errors import InvalidInputError
from agent.schemas import InterventionKind
from bot.cli.answers import option_index
from bot.cli.prompts import prompt_lines
from tests import samples


def test_a_confirm_prompt_says_what_was_found_and_why_without_numbers() -> None:
    state = samples.state()
    state.step_results[2].sources = samples.sources(2)
    request = samples.confirm_request(state.run_id)
    text = "\n".join(prompt_lines(state, request))
    assert "Should I go on with step 2?" in text
    assert "I found 2 passages in doc-0.md." in text
    assert "why I am unsure: A search did not work" in text
    for technical in ("0.55", "threshold", "search_quality", "*", "&lt;"):
        assert technical not in text, technical


def test_a_clarifying_question_shows_no_internal_note() -> None:
    state = samples.state()
    request = samples.escalate_request(
        state.run_id, kind=InterventionKind.ASK_USER, question="Which product do you mean?"
    ).model_copy(update={"reason": "the product the user means"})
    text = "\n".join(prompt_lines(state, request))
    assert "Which product do you mean?" in text
    assert "the product the user means" not in text


def test_option_numbers_count_from_1() -> None:
    options = ["a", "b", "c"]
    assert option_index(1, options) == 0 and option_index(3, options) == 2
    assert option_index(None, options) is None
    for bad, words in ((0, "numbered from 1"), (4, "between 1 and 3"), (-1, "between 1 and 3")):
        with pytest.raises(InvalidInputError, match=words):
            option_index(bad, options)
