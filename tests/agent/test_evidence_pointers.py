"""Sentences that cannot be read alone (agent/evidence/scoring.py): one pointing back at
the sentence before it, one introducing what follows, one naming a place that the next
sentences locate; and ties between sentences of one paragraph. Made-up documents."""

from __future__ import annotations

from agent.evidence import (
    gather,
    has_value,
    question_types,
    reading_order,
    select,
    split_units,
)
from agent.llm.offline import extract_answer
from agent.schemas import Source


def passage(source: str, text: str, score: float = 10.0) -> Source:
    return Source(source=source, score=score, similarity=0.7, text=text)


def quoted(question: str, *passages: Source) -> list[str]:
    return [u.text for u in reading_order(select(gather(question, list(passages))))]


PROOFS = passage(
    "printing.md",
    "Printing › Proofs\n\n"
    "The --draft switch prints pages at half resolution. "
    "Pass this switch for every proof you print in colour.\n\n"
    "Proofs are collected at the front desk.",
)


def test_a_sentence_pointing_back_is_quoted_after_the_one_it_points_at() -> None:
    asked = "which switch should I pass for every proof I print in colour?"
    said = quoted(asked, PROOFS)
    assert said[:2] == [
        "The --draft switch prints pages at half resolution.",
        "Pass this switch for every proof you print in colour.",
    ]
    reply = extract_answer(asked, [PROOFS], japanese=False)
    assert reply.index("--draft") < reply.index("Pass this switch")


def test_a_sentence_pointing_back_speaks_with_its_referents_words() -> None:
    """ "This register is kept offline because …" is about the asset register the
    sentence before names: it counts those words too, wins, and is quoted after it."""
    doc = passage(
        "assets.md",
        "Assets › Records\n\n"
        "Every laptop the company buys is recorded in the asset register of the office. "
        "This register is kept offline because it lists serial numbers.\n\n"
        "Laptops of the office are replaced every three years.",
    )
    said = quoted("why is the asset register of laptops kept offline?", doc)
    assert said == [
        "Every laptop the company buys is recorded in the asset register of the office.",
        "This register is kept offline because it lists serial numbers.",
    ]


def test_a_pointer_must_name_what_the_sentence_before_names() -> None:
    """A sentence with no fee in it is not what "this fee" points at: nothing is added."""
    doc = passage(
        "fees.md",
        "Fees › Printing\n\n"
        "The lobby printer is free for visitors. "
        "Members pay this fee only for colour pages.",
    )
    assert quoted("what do members pay for colour pages?", doc) == [
        "Members pay this fee only for colour pages."
    ]


def test_a_document_naming_itself_is_no_pointer() -> None:
    """A text naming itself ("this document", "this Agreement") points at no sentence."""
    doc = passage(
        "terms.md",
        "Terms › Copies\n\n"
        "Each member receives a printed handbook. "
        "Copies of this document may be shared with contractors.",
    )
    assert quoted("may copies be shared with contractors?", doc) == [
        "Copies of this document may be shared with contractors."
    ]


def test_a_sentence_introducing_what_follows_is_quoted_with_it() -> None:
    doc = passage(
        "refunds.md",
        "Refunds › Amount\n\n"
        "The refund for a cancelled course is calculated as follows.\n\n"
        "Refund = price paid minus a handling charge of 5 EUR.",
    )
    said = quoted("how is the refund for a cancelled course calculated?", doc)
    assert said[:2] == [
        "The refund for a cancelled course is calculated as follows.",
        "Refund = price paid minus a handling charge of 5 EUR.",
    ]


def test_a_named_place_is_quoted_with_the_sentence_saying_where_it_is() -> None:
    doc = passage(
        "tool.md",
        "Tool › Cache\n\n"
        "When syncing, the tool keeps downloaded archives in the tool cache. "
        "You can move the tool cache with the TOOL_CACHE variable. "
        "By default, the tool cache is located in ~/.toolcache/.",
    )
    said = quoted("where does the tool keep downloaded archives?", doc)
    assert said[0].startswith("When syncing")
    assert "By default, the tool cache is located in ~/.toolcache/." in said


def test_a_tie_goes_to_the_sentence_sharing_more_of_the_question() -> None:
    doc = passage(
        "garden.md",
        "Garden › Fees\n\n"
        "Visitors pay fees for guided tours of the garden. "
        "Visitors pay no fee for the garden itself.",
    )
    assert quoted("do visitors pay a fee for the garden itself?", doc)[0] == (
        "Visitors pay no fee for the garden itself."
    )


def test_a_question_opening_with_a_condition_asks_no_time() -> None:
    assert "date" not in question_types("when I join the team, which laptop do I get?")
    assert "date" not in question_types("When the office is closed, who locks up?")
    assert question_types("when is the picnic?") == ("date",)
    assert "date" in question_types("when do I get my first payslip?")


def test_a_table_row_leaves_out_its_empty_cells() -> None:
    units = split_units("| Month | Rate | Note |\n| - | - | - |\n| May | 30% | |\n")
    assert units[0][0] == "Month: May; Rate: 30%"


def test_a_question_for_an_option_wants_its_written_name() -> None:
    """ "Which flag …?" is answered by the sentence naming the flag as documents write
    one (--name, NAME_X, key = value, C<Name>), not by one only talking about it."""
    assert question_types("which flag turns on the protocol trace?") == ("name",)
    assert question_types("what environment variable moves the cache?") == ("name",)
    assert question_types("which app books the desks?") != ("name",)
    assert question_types("what max_conns should a small server use?") == ("name",)
    doc = passage(
        "client.md",
        "Client › Tracing\n\n"
        "The client can trace every request it sends when a flag is given. "
        "Start the client with --trace-wire to turn the protocol trace on.",
    )
    said = quoted("which flag turns on the protocol trace of the client?", doc)
    assert said[0] == "Start the client with --trace-wire to turn the protocol trace on."
    for written in ("use --quiet", "set MAX_SIZE", "level = 2", "pass C<Fast>", "init()", "4"):
        assert has_value(written, "name"), written
    assert not has_value("set the level to high", "name")


def test_a_definition_of_what_the_question_names_gives_way_to_what_it_asks() -> None:
    """ "How do I turn off X?" is not answered by "X is a …", nor by "See …"."""
    doc = passage(
        "builder.md",
        "Builder › Manifests\n\n"
        "The build manifest is a summary file written by the builder on every run. "
        "See the reference chapter.\n\n"
        "To turn off the build manifest, pass the quiet flag to the builder.",
    )
    said = quoted("how do I turn off the build manifest of the builder?", doc)
    assert said[0] == "To turn off the build manifest, pass the quiet flag to the builder."
    asked = quoted("what is a build manifest, what does it mean?", doc)
    assert asked[0].startswith("The build manifest is a summary file")


def test_until_when_asks_for_a_deadline() -> None:
    assert "deadline" in question_types("until when can I switch plans?")


def test_a_range_is_asked_as_numbers() -> None:
    assert question_types("what port range does the relay listen on?") == ("quantity",)
