"""Every row of the question and value tables (agent/evidence/patterns.py) on its own: it
matches a made-up example of what it is for and rejects a made-up near miss. A row
added without examples fails `test_every_row_has_examples`."""

from __future__ import annotations

import re

import pytest

from agent.evidence.patterns import (
    ASKING_WORDS,
    CASE_SENSITIVE_VALUES,
    CUES,
    PERIOD_ANSWERS,
    PERIOD_QUESTIONS,
    TOPIC_WORDS,
    UNIT_ANSWERS,
    UNIT_QUESTIONS,
    VALUE_WORDS,
    Table,
)

TABLES: dict[str, Table] = {
    "topic": TOPIC_WORDS,
    "asking": ASKING_WORDS,
    "value": VALUE_WORDS,
    "unit_question": UNIT_QUESTIONS,
    "unit_answer": UNIT_ANSWERS,
    "period_question": PERIOD_QUESTIONS,
    "period_answer": PERIOD_ANSWERS,
    "cue": CUES,
}

EXAMPLES: dict[tuple[str, str, str], tuple[str, str]] = {
    # (table, language, kind): (matches, does not match)
    ("topic", "en", "percent"): ("what percentage goes to the fund?", "who runs the fund?"),
    ("topic", "en", "quantity"): ("is there a cap on guests?", "can guests come?"),
    ("topic", "en", "money"): ("what's the budget for snacks?", "which snacks are there?"),
    ("topic", "en", "duration"): ("how much notice do I give?", "who do I tell?"),
    ("topic", "en", "deadline"): ("what is the cut-off for orders?", "who takes orders?"),
    ("topic", "en", "date"): ("when is the picnic?", "who comes to the picnic?"),
    ("topic", "en", "count"): ("how many seats are in room B?", "is room B free?"),
    ("topic", "en", "place"): ("where are the umbrellas kept?", "are umbrellas allowed?"),
    ("topic", "ja", "percent"): ("負担の割合は？", "負担するのは誰？"),
    ("topic", "ja", "money"): ("会場の費用は？", "会場はどこ？"),
    ("topic", "ja", "duration"): ("準備の期間は？", "準備は誰がする？"),
    ("topic", "ja", "deadline"): ("申込の締切は？", "申込は誰がする？"),
    ("topic", "ja", "date"): ("発表のタイミングは？", "発表するのは誰？"),
    ("topic", "ja", "count"): ("参加者は何人？", "参加者は誰？"),
    ("topic", "ja", "place"): ("鍵はどこにある？", "鍵は必要？"),
    ("asking", "en", "percent"): ("what percent of the fee is returned?", "is the fee returned?"),
    ("asking", "en", "duration"): ("how soon will the badge arrive?", "will the badge arrive?"),
    ("asking", "en", "money"): ("how much is a locker?", "is there a locker?"),
    ("asking", "en", "quantity"): ("how big can an upload be?", "can I upload a file?"),
    ("asking", "en", "deadline"): ("by when must I sign up?", "must I sign up?"),
    ("asking", "en", "date"): ("when does the shuttle leave?", "does the shuttle leave?"),
    ("asking", "en", "count"): ("how many coupons do I get?", "do I get coupons?"),
    ("asking", "en", "place"): ("which app books the desks?", "can I book desks?"),
    ("asking", "en", "name"): ("which flag turns on the trace?", "does the trace turn on?"),
    ("asking", "en", "length"): ("how long may a title be?", "how long does approval take?"),
    ("asking", "en", "version"): ("which release is the newest?", "who releases it?"),
    ("asking", "ja", "percent"): ("還元は何割？", "還元はある？"),
    ("asking", "ja", "duration"): ("保管は何時間まで？", "保管はできる？"),
    ("asking", "ja", "money"): ("駐輪場はいくら？", "駐輪場はある？"),
    ("asking", "ja", "deadline"): ("提出期限は？", "提出先は？"),
    ("asking", "ja", "date"): ("説明会はいつ？", "説明会はある？"),
    ("asking", "ja", "count"): ("会議室は何個ある？", "会議室はある？"),
    ("asking", "ja", "place"): ("申請はどのシステムで？", "申請は必要？"),
    ("asking", "ja", "version"): ("対応するバージョンは？", "対応する端末は？"),
    ("value", "any", "percent"): ("a 15% share", "a fair share"),
    ("value", "any", "money"): ("costs $12 a head", "costs a little"),
    ("value", "any", "date"): ("opens at 8:30", "opens early"),
    ("value", "any", "deadline"): ("within 4 days", "within reason"),
    ("value", "any", "count"): ("up to 6 guests", "a few guests"),
    ("value", "any", "quantity"): ("at most 9 items", "not many items"),
    ("value", "any", "version"): ("tested on 4.2.1", "tested on Linux"),
    ("value", "any", "place"): ("ask in #helpdesk", "ask the help desk"),
    ("value", "any", "name"): ("start it with --verbose", "start it with more detail"),
    ("value", "en", "percent"): ("20 percent of the price", "part of the price"),
    ("value", "en", "money"): ("40 dollars each", "forty bucks each"),
    ("value", "en", "duration"): ("kept for 3 weeks", "kept for a while"),
    ("value", "en", "date"): ("paid on March 5", "paid on time"),
    ("value", "en", "deadline"): ("reply immediately", "reply soon"),
    ("value", "en", "count"): ("two keys per desk", "keys per desk"),
    ("value", "en", "quantity"): ("twelve chairs", "several chairs"),
    ("value", "en", "length"): ("names of 20 characters", "names of any shape"),
    ("value", "en", "version"): ("since version 7", "since the last version"),
    ("value", "en", "place"): ("stored in Dropbox", "stored in the cloud"),
    ("value", "ja", "percent"): ("料金は1.5倍", "料金は同じ"),
    ("value", "ja", "money"): ("参加費は3000円", "参加費は無料"),
    ("value", "ja", "duration"): ("保存期間は5年", "保存期間は長い"),
    ("value", "ja", "date"): ("締めは毎月末日", "締めは早め"),
    ("value", "ja", "deadline"): ("翌営業日までに提出", "提出してください"),
    ("value", "ja", "length"): ("件名は最大30文字。", "件名は短く"),
    ("value", "ja", "version"): ("バージョン 3 以降", "最新の版"),
    ("value", "ja", "place"): ("ポータルから申請", "上司に申請"),
    ("unit_question", "en", "hours"): (
        "how many overtime hours are allowed?",
        "is overtime allowed?",
    ),
    ("unit_question", "en", "minutes"): ("how many minutes is the break?", "is there a break?"),
    ("unit_question", "en", "days"): ("how many sick days do I get?", "do I get sick leave?"),
    ("unit_question", "en", "weeks"): ("how many weeks is the course?", "is there a course?"),
    ("unit_question", "en", "months"): ("how many months is probation?", "is there probation?"),
    ("unit_question", "en", "years"): ("how many years are files kept?", "are files kept?"),
    ("unit_question", "en", "age"): ("what age can interns be?", "can interns apply?"),
    ("unit_question", "en", "times"): ("how often is the backup run?", "is the backup run?"),
    ("unit_question", "en", "people"): ("how many people fit in the van?", "does the van fit?"),
    ("unit_question", "ja", "hours"): ("研修は何時間？", "研修はある？"),
    ("unit_question", "ja", "minutes"): ("休憩は何分？", "休憩はある？"),
    ("unit_question", "ja", "days"): ("有給は何日？", "有給はある？"),
    ("unit_question", "ja", "weeks"): ("研修は何週？", "研修は必須？"),
    ("unit_question", "ja", "months"): ("試用期間は何ヶ月？", "試用期間はある？"),
    ("unit_question", "ja", "years"): ("保存は何年？", "保存は必要？"),
    ("unit_question", "ja", "age"): ("何歳から対象？", "誰が対象？"),
    ("unit_question", "ja", "times"): ("点検は何回？", "点検は必要？"),
    ("unit_question", "ja", "people"): ("定員は何人？", "定員はある？"),
    ("unit_answer", "en", "hours"): ("up to 4 hours", "up to 4 days"),
    ("unit_answer", "en", "minutes"): ("a 15 minute break", "a short break"),
    ("unit_answer", "en", "days"): ("10 days a year", "10 a year"),
    ("unit_answer", "en", "weeks"): ("six weeks long", "six long"),
    ("unit_answer", "en", "months"): ("three months", "three terms"),
    ("unit_answer", "en", "years"): ("for 7 years", "for 7 terms"),
    ("unit_answer", "en", "age"): ("18 years old or more", "adults only"),
    ("unit_answer", "en", "times"): ("twice in a row", "in a row"),
    ("unit_answer", "en", "people"): ("eight people", "eight seats"),
    ("unit_answer", "ja", "hours"): ("最大8時間", "最大8日"),
    ("unit_answer", "ja", "minutes"): ("休憩は45分", "3分の1を負担"),
    ("unit_answer", "ja", "days"): ("年間10日", "年間10回"),
    ("unit_answer", "ja", "weeks"): ("2週間", "2か月"),
    ("unit_answer", "ja", "months"): ("3ヶ月", "3年"),
    ("unit_answer", "ja", "years"): ("5年間", "5回"),
    ("unit_answer", "ja", "age"): ("20歳以上", "20人以上"),
    ("unit_answer", "ja", "times"): ("年2回", "年2日"),
    ("unit_answer", "ja", "people"): ("10名まで", "10台まで"),
    ("period_question", "en", "week"): ("how many hours per week?", "how many hours in total?"),
    ("period_question", "en", "month"): ("how much is spent monthly?", "how much is spent?"),
    ("period_question", "en", "year"): ("what is the annual limit?", "what is the limit?"),
    ("period_question", "en", "day"): ("how many calls each day?", "how many calls?"),
    ("period_question", "ja", "week"): ("週に何時間？", "合計何時間？"),
    ("period_question", "ja", "month"): ("毎月いくら？", "合計いくら？"),
    ("period_question", "ja", "year"): ("年に何回？", "全部で何回？"),
    ("period_question", "ja", "day"): ("毎日何件？", "全部で何件？"),
    ("period_answer", "en", "week"): ("8 hours a week", "8 hours in total"),
    ("period_answer", "en", "month"): ("$30 a month", "$30 in total"),
    ("period_answer", "en", "year"): ("an annual fee", "a one-off fee"),
    ("period_answer", "en", "day"): ("twice a day", "twice in total"),
    ("period_answer", "ja", "week"): ("週3回", "合計3回"),
    ("period_answer", "ja", "month"): ("月2万円", "合計2万円"),
    ("period_answer", "ja", "year"): ("年2回", "合計2回"),
    ("period_answer", "ja", "day"): ("日に5件", "合計5件"),
    ("cue", "any", "two_part"): ("Is it paid? How much?", "Is it paid?"),
    ("cue", "any", "reference"): ("as in (3) above", "as in the list above"),
    ("cue", "any", "statement"): ("room 4", "room B"),
    ("cue", "en", "two_part"): ("when is it, and where do I go?", "when is the party?"),
    ("cue", "en", "reference"): ("see section 4 for details", "see the details"),
    ("cue", "en", "default"): ("what is the default port?", "what is the port?"),
    ("cue", "en", "states_default"): ("It defaults to 30.", "It is set by an admin."),
    ("cue", "en", "statement"): ("The office wiki says Friday", "for contractors only"),
    ("cue", "ja", "two_part"): ("交通費と宿泊費はそれぞれいくら？", "交通費はいくら？"),
    ("cue", "ja", "reference"): ("第12条による", "規程による"),
    ("cue", "ja", "default"): ("初期値は？", "設定値は？"),
    ("cue", "ja", "statement"): ("金曜日です", "契約社員の場合"),
    ("cue", "any", "points_ahead"): ("The rates are:", "The rates are low."),
    ("cue", "en", "points_back"): ("Always set this flag.", "Copies of this document are free."),
    ("cue", "en", "points_ahead"): ("Fees are set as follows.", "As follows from the rule, no."),
    ("cue", "ja", "points_back"): ("この制度は廃止された。", "その他の手当は別途定める。"),
    ("cue", "ja", "points_ahead"): ("区分は次のとおりとする。", "区分は毎年見直す。"),
    ("cue", "en", "defines"): ('"Member" means anyone who pays a fee.', "Members pay a fee."),
    ("cue", "en", "asks_meaning"): ("what does retainer mean here?", "what is the retainer?"),
    ("cue", "en", "points_elsewhere"): ("See the fee table.", "The fee table is below."),
    ("cue", "ja", "defines"): ("会員とは、会費を納めた者をいう。", "会員は会費を納める。"),
    ("cue", "ja", "asks_meaning"): ("会員とは何ですか？", "会員は何人ですか？"),
    ("cue", "ja", "points_elsewhere"): ("詳細は第5条を参照。", "詳細は第5条に定める。"),
}

ROWS = [
    (table, language, kind)
    for table, rows in TABLES.items()
    for language, patterns in rows.items()
    for kind in patterns
]


def _pattern(table: str, language: str, kind: str) -> re.Pattern[str]:
    flags = 0 if table == "value" and kind in CASE_SENSITIVE_VALUES else re.IGNORECASE
    return re.compile(TABLES[table][language][kind], flags)


def test_every_row_has_examples() -> None:
    assert set(ROWS) == set(EXAMPLES)


@pytest.mark.parametrize(("table", "language", "kind"), ROWS, ids=["/".join(r) for r in ROWS])
def test_a_row_matches_its_example_and_rejects_the_near_miss(
    table: str, language: str, kind: str
) -> None:
    positive, negative = EXAMPLES[(table, language, kind)]
    pattern = _pattern(table, language, kind)
    assert pattern.search(positive), positive
    assert not pattern.search(negative), negative


ORDINARY_TEXT: list[tuple[str, str, str, str]] = [
    # (table, language, kind, ordinary text the row must not take for what it is for)
    ("cue", "en", "points_elsewhere", "Seek approval from your manager before booking."),
    ("cue", "en", "points_elsewhere", "Refer tourists to the front desk."),
    ("cue", "en", "points_ahead", "Entry is free for children aged 5 and below."),
    ("cue", "ja", "points_back", "それぞれの部署で申請する。"),
    ("cue", "ja", "asks_meaning", "有給休暇を翌年に繰り越すことはできますか？"),
    ("value", "any", "name", "you should I<always> pass it"),
]
"""A cue's word inside another word ("Seek", "それぞれ", "ことは"), "below" after "and"
(a bound, not what follows), and emphasis marked up (I<…>, not code)."""


@pytest.mark.parametrize(
    ("table", "language", "kind", "text"), ORDINARY_TEXT, ids=[r[3] for r in ORDINARY_TEXT]
)
def test_a_row_leaves_ordinary_text_alone(table: str, language: str, kind: str, text: str) -> None:
    assert not _pattern(table, language, kind).search(text), text
