"""Tokeniser and seed keyword extraction."""

from __future__ import annotations

from agent.knowledge.tokenize import contains_japanese, extract_keywords, tokenize


def test_english_tokens_are_lowercased_content_words() -> None:
    tokens = tokenize("How many Vacation days do new employees get?")
    assert tokens == ["vacation", "day", "new", "employee"]


def test_english_numbers_are_kept_and_normalised() -> None:
    tokens = tokenize("The limit is $5,000 per year for Beacon 4.2, it's 3 days.")
    assert "5000" in tokens
    assert "4.2" in tokens
    assert "3" in tokens
    assert "the" not in tokens and "," not in tokens and "per" not in tokens


def test_a_pair_of_numbers_is_one_token_however_it_is_spelled() -> None:
    for spelling in ("my 1:1", "weekly 1-1s", "a 1-on-1", "a one-on-one"):
        assert "1-1" in tokenize(spelling), spelling
    # dates and decimals are not pairs
    assert tokenize("2023-11-08, 1.5-2 hrs") == ["2023", "11", "08", "1.5", "2", "hrs"]


def test_japanese_drops_particles_and_punctuation() -> None:
    tokens = tokenize("経費精算の締め切りはいつですか？")
    assert "経費精算" in tokens
    assert "締め切り" in tokens
    for noise in ("の", "は", "です", "か", "？", "?", "いつ"):
        assert noise not in tokens


def test_japanese_compounds_also_yield_their_parts() -> None:
    """A query saying 経費 must be able to find a document saying 経費精算."""
    tokens = tokenize("経費精算")
    assert tokens[0] == "経費精算"
    assert {"経費", "精算"} <= set(tokens)


def test_question_words_and_their_parts_are_dropped() -> None:
    assert tokenize("有給休暇は何日ですか") == ["有給休暇", "有給", "休暇"]


def test_full_width_text_is_normalised() -> None:
    assert tokenize("週３日") == tokenize("週3日")
    assert "3" in tokenize("週３日")


def test_latin_words_in_japanese_text_match_english_tokens() -> None:
    ja = tokenize("Beacon Server の最新バージョン")
    en = tokenize("Beacon Server latest version")
    assert {"beacon", "server"} <= set(ja)
    assert {"beacon", "server"} <= set(en)


def test_tokenize_is_deterministic_and_handles_empty_text() -> None:
    text = "在宅勤務は週3日まで。Remote work up to 3 days."
    assert tokenize(text) == tokenize(text)
    assert tokenize("") == []
    assert tokenize("?!。、") == []


def test_contains_japanese() -> None:
    assert contains_japanese("休暇")
    assert contains_japanese("ノースウィンド")
    assert not contains_japanese("vacation policy")


def test_keywords_are_kanji_katakana_runs_of_two_or_more() -> None:
    keywords = extract_keywords("新入社員の有給休暇は何日？リモートワークは週に何回？")
    assert keywords[:3] == ["新入社員", "有給休暇", "リモートワーク"]
    assert "週" not in keywords  # a single kanji inside a sentence is not a keyword
    assert "何日" not in keywords and "何回" not in keywords  # question words


def test_keywords_include_space_separated_kanji_tokens_like_the_seed() -> None:
    assert extract_keywords("リモート勤務 週") == ["リモート勤務", "週"]


def test_keywords_for_latin_text_are_content_words_of_three_or_more() -> None:
    keywords = extract_keywords("What is the meal expense limit per day in NY?")
    assert keywords == ["meal", "expense", "limit", "day"]


def test_keywords_are_deduplicated_in_order() -> None:
    keywords = extract_keywords("経費精算と経費精算 expense Expense expenses")
    assert keywords == ["経費精算", "expense"]
