"""The pure rules behind issue 22: the run limiter, the feedback quorum, the bot filter
and the access rule, checked on their own (the HTTP tests beside them drive the app)."""

from __future__ import annotations

from agent.access import may_read, not_found
from agent.feedback_quorum import FeedbackQuorum
from agent.schemas import RunState, ThreadKey
from bot.slack.senders import RunLimiter, sender


def test_the_limiter_caps_a_window_and_tells_once() -> None:
    now = [0.0]
    limits = RunLimiter(per_thread=2, per_user=3, clock=lambda: now[0])
    assert limits.admit("t", "u") is None and limits.admit("t", "u") is None
    first, second = limits.admit("t", "u"), limits.admit("t", "u")
    assert first is not None and first.scope == "thread" and first.tell
    assert second is not None and not second.tell, "told once per window"
    assert limits.admit("t2", "u") is None
    refused = limits.admit("t3", "u")
    assert refused is not None and refused.scope == "user"
    now[0] = 61.0
    assert limits.admit("t", "u") is None, "a new minute"


def test_the_limiter_forgets_idle_keys() -> None:
    now = [0.0]
    limits = RunLimiter(clock=lambda: now[0], max_keys=5)
    for n in range(10):
        limits.admit(f"t{n}", f"u{n}")
    now[0] = 120.0
    limits.admit("t", "u")
    assert len(limits._starts) == 2


def test_the_quorum_window() -> None:
    quorum = FeedbackQuorum(3)
    alone = [(0.95, False, "U1")] * 30
    assert quorum.window(alone, 10) is None, "one person never fills it"
    two = [(0.95, False, "U1")] * 10 + [(0.95, False, "U2")] * 10
    assert quorum.window(two, 10) is None, "two are not a quorum"
    three = two + [(0.95, False, "U3")] * 2
    window = quorum.window(three, 10)
    assert window is not None and len(window) == 10
    assert FeedbackQuorum(1).window(alone, 10) == [(0.95, False)] * 10


def test_bots_and_no_one_are_not_senders() -> None:
    assert sender({"user": "U1"}, ()) == "U1"
    assert sender({"user": "U1", "bot_id": "B1"}, ()) is None
    assert sender({"user": "U1", "subtype": "bot_message"}, ()) is None
    assert sender({"bot_id": "B1"}, ()) is None
    assert sender({"user": ""}, ()) is None
    assert sender({"bot_id": "B1"}, ["B1"]) == "B1"
    assert sender({"user": "U9", "bot_id": "B1"}, ["U9"]) == "U9"


def test_the_access_rule() -> None:
    state = RunState(
        run_id="abc",
        query="q",
        asker="U1",
        thread=ThreadKey(team_id="T", channel_id="C", thread_ts="1"),
    )
    assert may_read(state, "U1", approvers=(), in_channel=False)
    assert may_read(state, "U2", approvers=("U2",), in_channel=False)
    assert may_read(state, "U3", approvers=(), in_channel=True)
    assert not may_read(state, "U3", approvers=(), in_channel=False)
    assert not may_read(state, "", approvers=("",), in_channel=True)
    assert not_found("abc") == not_found("abc")
