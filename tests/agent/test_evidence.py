"""Answer extraction and the evidence the confidence scorer reads (agent/evidence/),
on small documents written for the test, and through the real offline model."""

from __future__ import annotations

from agent.confidence import CALIBRATIONS, _feature_value, calibrated
from agent.evidence import (
    answer_features,
    families,
    gather,
    has_value,
    name_missing,
    question_type,
    question_types,
    select,
    split_units,
    supplies_facts,
    terms,
    typed_value,
)
from agent.intervention import ambiguity_options
from agent.llm.offline import NOT_FOUND, extract_answer
from agent.schemas import AnswerFeatures, Source


def passage(source: str, text: str) -> Source:
    """A passage of `source` as search ranks an ordinary match (score 10, similarity 0.7)."""
    return Source(source=source, score=10.0, similarity=0.7, text=text)


TRAVEL = Source(
    source="travel.md",
    score=12.0,
    similarity=0.8,
    text=(
        "Travel › Hotels\n\n"
        "We advise spending within reason, with a $300 USD per night maximum for hotels.\n\n"
        "Travel › Meals\n\n"
        "| Meal budget | Amount |\n| :- | -: |\n| Per day | $80 |\n| Per week | $400 |\n"
    ),
)
GIFTS = Source(
    source="celebrate.md",
    score=9.0,
    similarity=0.6,
    text=(
        "How we celebrate › Anniversaries\n\n"
        "Anniversary gift budget:\n\n- Year 1: $50 USD\n- Year 2: $100 USD\n- Year 3: $150 USD\n"
    ),
)
CURRENT = passage(
    "time-off.md",
    "PTO › Approval\n\nFor more than 10 business days in a row, ask your Department Head.",
)
STALE = Source(
    source="time-off_2022-12-19.md",
    score=10.5,
    similarity=0.7,
    text="PTO › Approval\n\nFor more than 15 business days in a row, ask your Department Head.",
)


def test_a_table_row_is_a_unit_with_its_header() -> None:
    units = [text for text, _ in split_units(TRAVEL.text)]
    assert "Meal budget: Per day; Amount: $80" in units
    assert all("| :-" not in u for u in units)


def test_the_question_type_asks_for_the_right_kind_of_value() -> None:
    assert question_type("how long is the commitment?") == "duration"
    # a limit or a minimum may be a sum, a number of days or a count: any figure answers
    assert question_type("what's the nightly hotel limit?") == "quantity"
    assert question_type("is there a minimum amount of vacation to take?") == "quantity"
    assert question_type("when someone leaves, how fast is their access cut off?") == "duration"
    assert question_type("給料日はいつですか？") == "date"
    assert question_type("which tool do we keep the inventory in?") == "place"
    assert question_type("do we have an office dog?") is None


def test_how_long_asks_for_a_length_when_nothing_in_it_is_about_time() -> None:
    assert question_types("How long must my password be?") == ("duration", "length")
    assert question_types("How long does approval take?") == ("duration",)
    rule = "Passwords must be at least 14 characters long."
    assert typed_value(rule, question_types("How long must my password be?"))
    assert not typed_value(rule, question_types("How long does approval take?"))
    assert typed_value("Approval takes 3 business days.", ("duration",))


def test_the_sentence_holding_the_fact_is_quoted_with_its_citation() -> None:
    answer = extract_answer("what's the nightly hotel limit?", [TRAVEL, GIFTS], japanese=False)
    assert answer.startswith("We advise spending within reason, with a $300 USD per night")
    assert answer.endswith("[Source: travel.md]")
    assert "$80" not in answer  # one fact, not the whole page


def test_the_questions_own_figures_and_sentence_initial_words_are_no_answer() -> None:
    meetings = passage(
        "1-1.md",
        "1-1 meetings › How we do them\n\n"
        "Every manager has a 1-1 with each of their direct reports. "
        "In most cases, 1-1s should be weekly recurring 25-minute meetings.",
    )
    answer = extract_answer("how long is a normal 1:1 with my manager?", [meetings], japanese=False)
    assert "25-minute" in answer
    assets = passage(
        "assets.md",
        "Assets › Inventory of assets\n\n"
        "Assets associated with information shall be kept in an inventory of assets. "
        "This inventory will live in our endpoint management system, Jamf.",
    )
    evidence = gather("which tool do we keep the asset inventory in?", [assets])
    typed = {u.text.split()[0]: u.typed for u in evidence.units}
    assert typed == {"Assets": False, "This": True}


def test_the_figure_a_sentence_or_two_away_completes_an_answer_without_one() -> None:
    faq = passage(
        "mental-health.md",
        "Mental health › FAQ\n\n"
        "A: Unfortunately, not at this time. The maximum annual amount is $250 per "
        "teammate.\n\n**Q: How can I use the stipend?**\n\n"
        "A: The stipend covers therapy sessions, meditation classes and mental health apps.",
    )
    answer = extract_answer(
        "does the company pay for therapy or meditation apps? how much?", [faq], japanese=False
    )
    assert answer.startswith("A: The stipend covers therapy") or answer.startswith(
        "The stipend covers therapy"
    )
    assert "$250" in answer


def test_number_words_match_figures() -> None:
    answer = extract_answer(
        "what's the gift budget for a third work anniversary?", [GIFTS], japanese=False
    )
    assert "Year 3: $150 USD" in answer


def test_a_two_part_question_gets_both_parts() -> None:
    answer = extract_answer(
        "what's the max per night for a hotel, and how much per day for meals?",
        [TRAVEL],
        japanese=False,
    )
    assert "$300" in answer and "$80" in answer


def test_a_stale_copy_is_named_after_the_current_document() -> None:
    # the stale copy even ranks first in the search; the answer still leads with the current
    answer = extract_answer(
        "how many business days in a row before I need approval?",
        [STALE, CURRENT],
        japanese=False,
    )
    first, second = answer.splitlines()
    assert "10 business days" in first and first.endswith("[Source: time-off.md]")
    assert "older copy (time-off_2022-12-19.md)" in second and "15 business days" in second
    features = answer_features("how many business days in a row?", answer, [STALE, CURRENT])
    assert features.sources_conflict is True


def test_versions_of_one_document_form_a_family() -> None:
    found = families(["time-off.md", "time-off_2022-12-19.md", "02_賃金規程_令和2年版.md"])
    assert found["time-off.md"].stale is False
    assert found["time-off_2022-12-19.md"].stale is True
    assert found["time-off.md"].key == found["time-off_2022-12-19.md"].key
    assert found["02_賃金規程_令和2年版.md"].stale is False  # no current copy beside it


def test_nothing_relevant_is_not_found() -> None:
    assert extract_answer("what is the capital of Mongolia?", [GIFTS], japanese=False) == (
        NOT_FOUND
    )


def test_features_and_calibration_rank_a_grounded_answer_above_a_stray_one() -> None:
    question = "what's the nightly hotel limit?"
    good = extract_answer(question, [TRAVEL, GIFTS], japanese=False)
    stray = "Year 1: $50 USD [Source: celebrate.md]"
    p_good = calibrated(answer_features(question, good, [TRAVEL, GIFTS]), "offline")
    p_stray = calibrated(answer_features(question, stray, [TRAVEL, GIFTS]), "offline")
    assert 0.0 < p_stray < p_good < 1.0
    derived = {"vague_question", "typed_margin"}  # computed from the other features
    assert set(CALIBRATIONS["offline"].weights) - derived <= set(
        answer_features(question, good, [TRAVEL, GIFTS]).as_map()
    )


def test_a_vague_question_several_documents_answer_offers_their_titles() -> None:
    options = ambiguity_options("what's the budget?", [TRAVEL, GIFTS])
    assert options == ["Travel", "How we celebrate"]
    # a specific question is not ambiguous
    assert ambiguity_options("what's the nightly hotel limit for travel?", [TRAVEL, GIFTS]) == []


def test_a_reply_that_states_a_fact_is_told_apart_from_a_narrowing() -> None:
    assert supplies_facts("It is Ulaanbaatar, according to our travel guide.")
    assert supplies_facts("上限は5,000円です。")
    assert not supplies_facts("working from abroad")
    assert not supplies_facts("Beacon Server")


def test_units_are_scored_against_the_question() -> None:
    evidence = gather("what's the nightly hotel limit?", [TRAVEL, GIFTS])
    best = select(evidence)[0]
    assert best.source == "travel.md" and "$300" in best.text
    assert 0.0 < best.coverage <= 1.0


def test_a_value_in_another_unit_or_of_another_kind_does_not_answer() -> None:
    from agent.evidence import asked_unit, has_value

    minutes = asked_unit("休憩は最低何分取らないといけませんか？")
    assert minutes is not None
    assert has_value("6時間超; 休憩時間: 45分", "duration", minutes)
    assert not has_value("標準となる1日の労働時間は、6時間とする。", "duration", minutes)
    # "いくら" wants an amount: a time limit is a number, not an amount.
    assert not has_value("受けた日から30日以内に申請を行わなければならない。", "money")
    assert has_value("補助額の上限は、1事業年度につき5,000円までとする。", "money")
    assert asked_unit("what's the hotel limit?") is None


def test_the_asking_words_decide_the_kind_of_value() -> None:
    from agent.evidence import question_types

    # 補助 is the topic; いつまで is what is asked.
    assert question_types("機材購入補助を使いたいです。申請期限はいつまでですか？")[0] == "duration"
    assert question_types("深夜労働手当はどの時間帯が対象で、基本給に対して何倍ですか？") == (
        "percent",
        "date",
    )
    assert question_types("how much heads-up do I need to give?")[0] == "duration"
    assert question_types("do we have an office dog?") == ()


def test_an_answer_with_the_kind_of_value_asked_scores_above_an_open_one() -> None:
    """The calibration trusts a sentence holding the amount asked for more than the
    same evidence for an open question: value_asked and typed_margin are its features."""
    features = AnswerFeatures(
        answer_coverage=0.5,
        passage_coverage=0.6,
        document_margin=1.0,
        value_type_match=True,
        question_terms=6,
    )
    open_question = calibrated(features.model_copy(update={"value_asked": False}), "offline")
    value_question = calibrated(features.model_copy(update={"value_asked": True}), "offline")
    assert open_question < 0.7 <= value_question
    # a sentence without the value asked for earns no typed_margin: it is not trusted
    untyped = calibrated(
        features.model_copy(update={"value_asked": True, "value_type_match": False}), "offline"
    )
    assert untyped < 0.5 < value_question


def test_a_value_counted_in_another_period_does_not_answer() -> None:
    """ "週に何時間" is not answered by "1日の労働時間は6時間", nor "何日" by "1日の…"."""
    rules = Source(
        source="rules.md",
        text="# 労働時間\n正社員について、標準となる1日の労働時間は、6時間とする。\n"
        "正社員について、1週間の所定労働時間は、30時間とする。",
        score=1.0,
        similarity=0.8,
    )
    best = select(gather("正社員は週に何時間働きますか？", [rules]))[0]
    assert "30時間" in best.text
    from agent.evidence import asked_unit, has_value

    assert not has_value("標準となる1日の労働時間は、6時間とする。", "duration", asked_unit("何日"))


def test_a_release_number_in_a_name_is_an_older_copy_and_higher_numbers_are_newer() -> None:
    found = families(["sdk.md", "sdk_rust-1.95.md", "api_1.2.md", "api_1.10.md"])
    assert found["sdk_rust-1.95.md"].stale and not found["sdk.md"].stale
    assert found["sdk.md"].key == found["sdk_rust-1.95.md"].key
    assert found["api_1.2.md"].stale and not found["api_1.10.md"].stale


def test_sentences_before_a_closing_lead_in_are_kept_as_units() -> None:
    text = (
        "Limits › Capping\n\n"
        "The tool supports a flag, --cap LEVEL, that sets the maximum level. "
        "For example, take the code above:\n\n"
        "```\nrun --cap warn\n```\n"
    )
    units = split_units(text)
    assert ("The tool supports a flag, --cap LEVEL, that sets the maximum level.", "Capping") in [
        (u, c.split(" › ")[-1]) for u, c in units
    ]
    assert not any("For example" in u for u, _ in units)  # the lead-in itself answers nothing


def test_version_followed_by_a_whole_number_is_a_version() -> None:
    from agent.evidence import has_value

    assert has_value("At this time version 33 is the minimum needed.", "version")
    assert not has_value("Install the latest tools first.", "version")


def test_a_code_block_keeps_its_lead_in_and_its_comments_are_no_headings() -> None:
    text = (
        "Build › Unused dependencies\n\n"
        "Recommendation: review unused dependencies for removal using:\n\n"
        "```\n$ tool check --workspace\n```\n\n"
        '```\n# Package A\n[dependencies]\nlog = "0.4"\n```\n\n'
        "After the block the lead-in is over.\n"
    )
    units = dict(split_units(text))
    assert units["$ tool check --workspace"].endswith(
        "Recommendation: review unused dependencies for removal using:"
    )
    assert '# Package A [dependencies] log = "0.4"' in units
    assert units["After the block the lead-in is over."] == "Build › Unused dependencies"


def test_a_digit_in_a_name_or_a_pronoun_one_is_no_figure() -> None:
    assert not has_value("encrypted with the MD5-based algorithm on x86_64", "quantity")
    assert not has_value("attempted with each one of the domains in turn", "count")
    assert has_value("crates.io has a 10MB size limit", "quantity")
    assert has_value("the default pam_unix module has its own built in of 3 retries", "count")


def test_how_much_of_a_thing_is_a_quantity_and_release_asks_a_version_only_as_the_focus() -> None:
    assert question_types("how much RAM does the standard laptop come with?") == ("quantity",)
    assert question_types("how much is the referral bonus?") == ("money",)
    assert question_types("how much per day for meals?") == ("money",)
    assert "version" not in question_types("what happens when I release a crate?")
    assert "version" in question_types("which release added the resolver?")


def test_the_thing_asked_about_is_not_where_it_is() -> None:
    home = passage(
        "home.md",
        "Home › Files\n\n"
        "Cargo stores downloaded dependencies in the home directory. "
        "By default, the home is located in $HOME/.store/.",
    )
    evidence = gather("where does cargo put downloaded dependencies?", [home])
    typed = {u.text.split()[0]: u.typed for u in evidence.units}
    assert typed == {"Cargo": False, "By": True}


def test_a_definition_is_quoted_with_the_default_stated_after_it() -> None:
    conf = passage(
        "adduser.md",
        "adduser.conf › DIR_MODE\n\n"
        "The permissions mode for home directories of non-system users. "
        "Defaults to 0700. Note that some configurations will require changes.",
    )
    answer = extract_answer(
        "what permissions do new home directories of non-system users get?", [conf], japanese=False
    )
    assert "The permissions mode for home directories" in answer
    assert "Defaults to 0700." in answer


def test_a_full_stop_inside_parentheses_ends_no_sentence() -> None:
    units = [
        text
        for text, _ in split_units("The low mark for ZONE_LO (resp. ZONE_HI) is 40 (resp. 90).")
    ]
    assert units == ["The low mark for ZONE_LO (resp. ZONE_HI) is 40 (resp. 90)."]


SPOOL = passage(
    "spool.md",
    "spool.conf › Options\n\n"
    "delay:n Sets how long the spooler waits for a printer to answer before it moves "
    "the job to another printer. "
    "Measured in seconds, the default is SP_DELAY (currently 7).\n\n"
    "tries:n Sets how many times the spooler sends a job to a printer before giving up "
    "and reporting an error. The default is SP_TRIES (currently 4).\n\n"
    "mode:m Sets the permissions of new spool files. Defaults to 0640.\n\n"
    "dirmode:m Sets the permissions of new spool directories. Defaults to 0750.\n",
)


def test_a_reference_entry_is_quoted_with_its_own_value_not_its_neighbours() -> None:
    # The definition names the topic; the figure sits in the next sentence of its own
    # paragraph, while the entry before it has a figure of the same kind closer up.
    answer = extract_answer(
        "how many times does the spooler send a job before it gives up, by default?",
        [SPOOL],
        japanese=False,
    )
    assert "currently 4" in answer
    assert "currently 7" not in answer
    evidence = gather("how many times does the spooler send a job before it gives up?", [SPOOL])
    value = next(u for u in evidence.units if "currently 4" in u.text)
    other = next(u for u in evidence.units if "currently 7" in u.text)
    assert value.block_coverage > other.block_coverage


def test_each_definition_of_a_two_part_question_is_quoted_with_its_default() -> None:
    answer = extract_answer(
        "what permissions do new spool files get, and what do new spool directories get?",
        [SPOOL],
        japanese=False,
    )
    assert "0640" in answer and "0750" in answer


def test_words_for_the_least_and_most_match_min_and_max() -> None:
    evidence = gather(
        "what's the lowest zone mark?",
        [Source(source="z.md", score=1.0, similarity=0.5, text="ZONE_MIN is 40. ZONE_MAX is 90.")],
    )
    assert "min" in evidence.query_tokens
    assert question_types("what's the lowest zone mark?") == ("quantity",)
    assert question_types("how big can a spool file get?") == ("quantity",)


def test_an_upper_bound_in_words_is_a_max_like_a_lower_bound_is_a_min() -> None:
    # "most" is a stop word: without this, "at most" vanished where "at least" kept its
    # "min", and a short specific question was scored as a two-word vague one.
    assert "max" in terms("how long can a label be at most?")
    assert "max" in terms("no more than 3 retries")
    assert "max" in terms("Labels may be up to 40 characters long.")
    assert "max" not in terms("it is up to you") and "min" in terms("at least 3 days")
    question = "how long can a label be at most?"
    label = Source(
        source="labels.md",
        score=1.0,
        similarity=0.6,
        text="Labels › Length\n\nLabels may be up to 40 characters long.",
    )
    answer = extract_answer(question, [label], japanese=False)
    features = answer_features(question, answer, [label])
    assert "40 characters" in answer and features.question_terms == 3
    assert _feature_value("vague_question", features.as_map()) == 0.0
    assert calibrated(features, "offline") >= 0.7


def test_a_short_question_one_document_alone_speaks_to_is_not_vague() -> None:
    """Two content words make a question short, not vague: "where is the badge office?"
    names the one page about badges; "what's the weekly limit?" could be any of them."""
    badges = Source(
        source="badges.md",
        score=2.0,
        similarity=1.0,
        text="Badges\n\nThe badge office is in room 12, next to reception.",
    )
    parking = Source(
        source="parking.md",
        score=1.0,
        similarity=0.5,
        text="Parking\n\nThe weekly limit is 3 days. The office garage opens at 7.",
    )
    meals = Source(
        source="meals.md",
        score=1.0,
        similarity=0.5,
        text="Meals\n\nThe weekly limit for meals is $80 per person.",
    )
    passages = [badges, parking, meals]
    specific = "where is the badge office?"
    answer = extract_answer(specific, passages, japanese=False)
    features = answer_features(specific, answer, passages)
    assert "room 12" in answer and features.question_terms == 2
    assert features.question_spread == 1  # "office" is on two pages, "badge" on one
    assert _feature_value("vague_question", features.as_map()) == 0.0
    vague = "what's the weekly limit?"
    answer = extract_answer(vague, passages, japanese=False)
    features = answer_features(vague, answer, passages)
    assert features.question_terms == 2 and features.question_spread == 2
    assert _feature_value("vague_question", features.as_map()) == 1.0
    # a feature map without the spread (a fit stored before it) reads as before
    assert _feature_value("vague_question", {"question_terms": 2.0}) == 1.0


def test_a_wrapped_list_item_is_one_item_and_an_option_flag_is_no_bullet() -> None:
    text = (
        "Spool › Options\n\n"
        "- Jobs are kept\n  for 3 days.\n- Nothing else.\n\n"
        "-t, --tries N\n    How many times a job is sent. Defaults to 4.\n"
    )
    units = [unit for unit, _ in split_units(text)]
    assert units[0] == "Jobs are kept for 3 days."
    assert "-t, --tries N How many times a job is sent." in units


WIDGET = Source(
    source="widget-licence.md",
    score=11.0,
    similarity=0.7,
    text=(
        "Widget Public License, version 2 › Termination\n\n"
        "The licensor may end this licence after giving you 30 days of written notice.\n\n"
        "Widget Public License, version 2 › Scope\n\n"
        "This licence covers the software and its documentation."
    ),
)


def test_a_question_naming_what_the_answers_document_never_mentions_is_flagged() -> None:
    answer = (
        "The licensor may end this licence after giving you 30 days of written notice. "
        "[Source: widget-licence.md]"
    )
    other = "how many days of notice before the licensor ends the Quartz licence?"
    same = "how many days of notice before the licensor ends the WPL licence?"
    named = answer_features(other, answer, [WIDGET])
    acronym = answer_features(same, answer, [WIDGET])
    assert named.missing_name is True
    assert acronym.missing_name is False
    # Everything else alike ("quartz" and "wpl" are both words no passage holds), the
    # answer about another licence than the one named is the less likely to be right.
    assert named.model_copy(update={"missing_name": False}) == acronym
    assert calibrated(named, "offline") < calibrated(acronym, "offline")


def test_a_name_counts_as_mentioned_in_words_or_as_an_acronym_of_its_title() -> None:
    title = "GNU General Public License, version 3 › Conveying\nYou may convey copies."
    assert not name_missing("can I sell GPLv3 software?", title)
    assert not name_missing("does the General licence allow it?", title)
    assert not name_missing("can i sell copies?", title)  # no name in the question
    assert name_missing("can I sell BSD software?", title)
    assert name_missing("is the Apache licence compatible?", title)


# ---------------------------------------------------------------- FAQ-shaped documents


def test_an_faq_question_is_the_context_of_the_answer_below_it() -> None:
    text = (
        "How do I reset my badge?\n\n"
        "\tVisit the front desk with photo ID.\n"
        "\tIt takes a minute.\n\n"
        "2.3. Where are the\nlogs kept?\nThey go to the archive folder.\n"
    )
    assert split_units(text) == [
        ("Visit the front desk with photo ID.", "How do I reset my badge?"),
        ("It takes a minute.", "How do I reset my badge?"),
        ("They go to the archive folder.", "2.3. Where are the logs kept?"),
    ]


def test_consecutive_faq_questions_share_the_answer_and_a_rule_ends_it() -> None:
    text = (
        "Q. Why does the banner say beta?\n\n"
        "Q. And why does the footer?\n\n"
        "A. Both follow the release channel.\n\n"
        "--------\n\n"
        "Colours follow the theme.\n\n"
        "Can I pick a theme?\n"
        "===================\n\n"
        "Yes, in the settings page.\n"
    )
    assert split_units(text) == [
        (
            "Both follow the release channel.",
            "Q. Why does the banner say beta? Q. And why does the footer?",
        ),
        ("Colours follow the theme.", ""),
        ("Yes, in the settings page.", "Can I pick a theme?"),
    ]


def test_a_wrapped_first_line_of_plain_text_is_no_heading() -> None:
    """A plain-text passage starts mid-paragraph, its first line cut where the file was
    wrapped: that line is the start of a sentence, not a title for the rest."""
    text = "The widget keeps its cache in the\nsystem folder by default.\n\nIt holds a week."
    assert split_units(text) == [
        ("The widget keeps its cache in the system folder by default.", ""),
        ("It holds a week.", ""),
    ]
    titled = "Widget › Cache\n\nIt holds a week."
    assert split_units(titled) == [("It holds a week.", "Widget › Cache")]


def test_the_answer_is_taken_under_the_faq_question_the_asker_means() -> None:
    """The answer shares no word with the question: only its FAQ question does."""
    faq = Source(
        source="office-faq.txt",
        score=5.0,
        similarity=0.5,
        text=(
            "How do I reset my badge?\n\nVisit the front desk with photo ID.\n\n"
            "How do I book a meeting room?\n\nOpen the calendar and pick a free slot.\n"
        ),
    )
    answer = extract_answer("how can I book a meeting room?", [faq], japanese=False)
    assert answer == "Open the calendar and pick a free slot. [Source: office-faq.txt]"


def test_a_figure_is_not_quoted_beside_the_answer_for_its_heading_words_alone() -> None:
    """Both passages sit under the heading "Refunds?": it lifts every sentence alike, so
    a date about the shop must not ride along with the answer to "when … refund"."""
    docs = [
        Source(
            source="refunds.md",
            score=5.0,
            similarity=0.5,
            text="Refunds?\n\nA refund goes back to the card you paid with.\n",
        ),
        Source(
            source="refunds.md",
            score=1.0,
            similarity=0.4,
            text="Refunds?\n\nThe shop opened in March 2019.\n",
        ),
    ]
    chosen = select(gather("when does a refund from the shop reach my card?", docs))
    assert [u.text for u in chosen] == ["A refund goes back to the card you paid with."]


def test_a_sentence_goes_on_after_ie_and_eg() -> None:
    text = 'Say it with a short vowel, ie. "bin" (as in "tin"). Pick a colour, e.g. Teal or so.'
    assert [u for u, _ in split_units(text)] == [
        'Say it with a short vowel, ie. "bin" (as in "tin").',
        "Pick a colour, e.g. Teal or so.",
    ]


def test_a_q_prefixed_faq_question_is_the_answers_context() -> None:
    text = "Q: Can I carry it over?\nA: No, it lapses in December.\n"
    assert split_units(text) == [("No, it lapses in December.", "Can I carry it over?")]


def test_an_entry_stating_its_problem_after_a_rule_is_the_answers_subject() -> None:
    """FAQ entries between rule lines may state the problem instead of asking: "If you
    press the red key, the program stops." The answer below is about it; the statement
    itself is no answer. A short paragraph with nothing after it stays a sentence."""
    text = (
        "Intro to the list.\n\n"
        "********\n\n"
        "If you press the red key, the program\nstops at once.\n\n"
        "The keyboard maps that key to a break. No bug here.\n\n"
        "********\n\n"
        "A closing note.\n"
    )
    subject = "If you press the red key, the program stops at once."
    assert split_units(text) == [
        ("Intro to the list.", ""),
        ("The keyboard maps that key to a break.", subject),
        ("No bug here.", subject),
        ("A closing note.", ""),
    ]
