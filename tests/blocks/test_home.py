"""The Home tab's Block Kit (blocks/home.py): words, links, and Slack's limits."""

from __future__ import annotations

from datetime import timedelta

from agent.config import Thresholds
from agent.inbox import AnswerRole
from agent.schemas import InterventionKind, RunStatus, utcnow
from blocks.common import LEVEL_WORDS
from blocks.home import (
    MAX_CHANNELS,
    MAX_RECENT,
    MAX_WAITING,
    ChannelSummary,
    RecentRun,
    WaitingRun,
    age,
    home_view,
    needed,
)
from blocks.limits import validate_view
from tests import samples

from .payloads import all_text

LINK = "https://acme.slack.com/archives/C0GENERAL1/p1000100?thread_ts=1.000100&cid=C0GENERAL1"


def test_what_each_pause_needs_and_how_long_it_waited() -> None:
    assert "Approve the plan" in needed(samples.plan_approval("r"))
    assert "Confirm a step" in needed(samples.confirm_request("r"))
    assert "Add details" in needed(samples.escalate_request("r"))
    ask = samples.escalate_request("r", kind=InterventionKind.ASK_USER)
    assert "Pick what was meant" in needed(ask)
    assert "Answer a question" in needed(ask.model_copy(update={"options": []}))
    now = utcnow()
    assert [age(now - timedelta(seconds=s), now) for s in (5, 600, 7200, 200000)] == [
        "just now",
        "10 min",
        "2 h",
        "2 d",
    ]


def test_the_inbox_words_its_runs_and_links_them() -> None:
    now = utcnow()
    waiting = samples.state(status=RunStatus.PAUSED, pending=samples.confirm_request("r"))
    answered = samples.state(status=RunStatus.ANSWERED, answer="Twenty days.")
    view = home_view(
        [WaitingRun(waiting, AnswerRole.APPROVER, LINK)],
        [RecentRun(answered, LINK), RecentRun(waiting, None)],
        now=now,
    )
    validate_view(view)
    text = all_text(view.to_dict()["blocks"])
    assert "Waiting for you (1)" in text and "you are an approver" in text
    assert "Confirm a step" in text and "Step 2 found weak evidence" in text
    assert f"<{LINK}|open the thread>" in text
    assert "<#C0GENERAL1>" in text and "run `run123`" in text
    assert answered.level is not None and LEVEL_WORDS[answered.level] in text
    assert "answered" in text and "waiting for input" in text


def test_a_long_inbox_stays_within_a_views_limits() -> None:
    now = utcnow()
    long_query = "why " * 2000
    waiting = samples.state(
        status=RunStatus.PAUSED, pending=samples.confirm_request("r"), query=long_query
    )
    view = home_view(
        [WaitingRun(waiting, AnswerRole.ASKER, LINK)] * (MAX_WAITING + 7),
        [RecentRun(waiting, LINK)] * (MAX_RECENT + 5),
        now=now,
    )
    validate_view(view)
    text = all_text(view.to_dict()["blocks"])
    assert f"Waiting for you ({MAX_WAITING + 7})" in text and "…and 7 more" in text
    assert text.count("you asked") == MAX_WAITING


def test_an_empty_inbox_says_so() -> None:
    view = home_view([], [], now=utcnow())
    validate_view(view)
    text = all_text(view.to_dict()["blocks"])
    assert "Nothing is waiting for you" in text
    assert "You have not asked me anything yet" in text


def test_the_admins_part_words_each_channels_settings() -> None:
    now = utcnow()
    own = ChannelSummary(
        channel_id="C0HR000001",
        collections=["hr_docs", "facilities"],
        experts=["U0EXPERT01", "S0DEVOPS01"],
        approvers=["U0APPROVE1"],
        thresholds=Thresholds(silent=0.95, notify=0.8, confirm=0.5),
        answer_mode="all",
        reply_mode="ephemeral",
        follow_ups=True,
        own=frozenset({"collections", "experts", "approvers", "thresholds", "reply_mode"}),
        changed_by="U0ADMIN001",
        changed_at=now,
    )
    defaults = ChannelSummary(channel_id="C0OPS00001", own=frozenset({"answer_mode"}))
    view = home_view([], [], now=now, channels=[own, defaults])
    validate_view(view)
    text = all_text(view.to_dict()["blocks"])
    assert "Channel settings (2)" in text
    assert "<#C0HR000001>" in text and "<#C0OPS00001>" in text
    assert "`hr_docs`, `facilities`" in text
    assert "<@U0EXPERT01>, <!subteam^S0DEVOPS01>" in text and "<@U0APPROVE1>" in text
    assert "from 0.95" in text and "from 0.80" in text and "below 0.50" in text
    assert "only the asker sees the answer" in text and "follow-ups without a mention on" in text
    assert "last changed by <@U0ADMIN001>" in text
    assert "`/grace config` in <#C0HR000001>" in text
    # the other channel: everything but its answer mode is the global setting
    assert "every collection _(default)_" in text and "nobody _(default)_" in text
    assert "the shared thresholds (`grace thresholds`) _(default)_" in text
    assert "answers when mentioned," in text, "its own answer mode: no default mark"
    for technical in ("silent", "notify", "answer_mode", "reply_mode"):
        assert technical not in text, technical


def test_the_admins_part_is_absent_for_others_and_stays_within_limits() -> None:
    now = utcnow()
    assert "Channel settings" not in all_text(home_view([], [], now=now).to_dict()["blocks"])
    waiting = samples.state(status=RunStatus.PAUSED, pending=samples.confirm_request("r"))
    many = [
        ChannelSummary(channel_id=f"C0CHAN{i:04d}", experts=[f"U0EXP{i:05d}"] * 40)
        for i in range(MAX_CHANNELS + 3)
    ]
    view = home_view(
        [WaitingRun(waiting, AnswerRole.ASKER, LINK)] * (MAX_WAITING + 7),
        [RecentRun(waiting, LINK)] * (MAX_RECENT + 5),
        now=now,
        channels=many,
    )
    validate_view(view)
    text = all_text(view.to_dict()["blocks"])
    assert f"Channel settings ({MAX_CHANNELS + 3})" in text and "…and 3 more" in text
    assert text.count("/grace config` in <#C0CHAN") == MAX_CHANNELS
