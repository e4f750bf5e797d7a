"""Functional behaviour of SqlRunStore on a real SQLite file."""

from __future__ import annotations

import inspect
import typing
from datetime import timedelta

import pytest

from agent.memory_store import InMemoryRunStore
from agent.ports import RunConflictError, RunEvent, RunEventType, RunStore
from agent.schemas import (
    InterventionAction,
    InterventionAnswer,
    InterventionStatus,
    RunState,
    RunStatus,
    ThreadKey,
    utcnow,
)
from storage.run_store import SqlRunStore
from tests.storage.helpers import answered, make_request, make_state


def _port_methods() -> list[str]:
    """The port's own methods, as declared (not what `Protocol` adds)."""
    return [n for n, v in vars(RunStore).items() if inspect.isfunction(v) and n[0] != "_"]


@pytest.mark.parametrize("implementation", [SqlRunStore, InMemoryRunStore])
def test_implements_the_agent_port(implementation: type) -> None:
    """Every method of the `RunStore` port is there, a coroutine as in the port, taking
    the same parameters (names, kinds, defaults) of the same types, and returning the
    same type: what a type checker would say, for a suite that runs none."""
    assert {"save", "load"} <= set(_port_methods()), "the port's methods are found"
    for name in _port_methods():
        wanted, got = getattr(RunStore, name), getattr(implementation, name, None)
        assert got is not None, f"{implementation.__name__} has no {name}"
        assert inspect.iscoroutinefunction(got) == inspect.iscoroutinefunction(wanted), name
        shape = [(p.name, p.kind, p.default) for p in inspect.signature(wanted).parameters.values()]
        assert [
            (p.name, p.kind, p.default) for p in inspect.signature(got).parameters.values()
        ] == shape, name
        assert typing.get_type_hints(got) == typing.get_type_hints(wanted), name


async def test_round_trip_keeps_everything(store: SqlRunStore) -> None:
    state = make_state(replans=2)
    await store.save(state)

    loaded = await store.load(state.run_id)

    assert loaded == state
    assert loaded is not None
    assert loaded.version == 1
    assert loaded.plan is not None and [s.step_id for s in loaded.plan.steps] == [1, 2]
    assert set(loaded.step_results) == {1, 2}
    assert loaded.step_results[1].sources[0].source == "hr/leave.md"
    assert loaded.replan_count == 2
    assert loaded.pending is not None and loaded.pending.confidence is not None
    assert loaded.query.endswith("有給休暇は何日？")


async def test_save_updates_in_place_and_counts_versions(store: SqlRunStore) -> None:
    state = make_state()
    await store.save(state)
    state.status = RunStatus.RUNNING
    state.final_answer = "20 days"
    await store.save(state)

    loaded = await store.load(state.run_id)
    assert loaded is not None
    assert (loaded.status, loaded.final_answer, loaded.version) == (RunStatus.RUNNING, "20 days", 2)
    assert await store.load("missing") is None


async def test_claim_then_losers_learn_who(store: SqlRunStore) -> None:
    state = make_state()
    await store.save(state)
    request = state.interventions[0]
    answer = InterventionAnswer(action=InterventionAction.PROCEED, user="U_ASKER")

    won = await store.claim_intervention(state.run_id, request.intervention_id, answer)
    lost = await store.claim_intervention(
        state.run_id,
        request.intervention_id,
        InterventionAnswer(action=InterventionAction.CANCEL, user="U_OTHER"),
    )
    unknown = await store.claim_intervention(state.run_id, "nope", answer)
    wrong_run = await store.claim_intervention("other-run", request.intervention_id, answer)

    assert won.claimed and won.state is not None
    assert won.state.pending is not None
    assert won.state.pending.status is InterventionStatus.ANSWERED
    assert won.state.pending.answer == answer
    assert not lost.claimed
    assert (lost.answered_by, lost.reason) == ("U_ASKER", "already answered by U_ASKER")
    assert (unknown.claimed, unknown.reason) == (False, "unknown intervention")
    assert (wrong_run.claimed, wrong_run.reason) == (False, "unknown intervention")


async def test_terminal_status_in_db_beats_a_stale_pending_save(store: SqlRunStore) -> None:
    state = make_state()
    await store.save(state)
    request = state.interventions[0]
    answer = InterventionAnswer(action=InterventionAction.INPUT, text="Tokyo", user="U_ASKER")
    assert (await store.claim_intervention(state.run_id, request.intervention_id, answer)).claimed

    state.final_answer = "still working"  # the stale in-memory copy still says pending
    await store.save(state)

    row = await store.get_intervention(request.intervention_id)
    assert row is not None
    assert row.status is InterventionStatus.ANSWERED
    assert row.answer == answer and row.answered_by == "U_ASKER"
    loaded = await store.load(state.run_id)
    assert loaded is not None and loaded.final_answer == "still working"
    assert loaded.interventions[0].status is InterventionStatus.ANSWERED


async def test_saved_answer_and_new_interventions_reach_the_table(store: SqlRunStore) -> None:
    state = make_state()
    await store.save(state)
    first = answered(state.interventions[0], "U_ASKER")
    second = make_request(state.run_id, step_id=3)
    state.interventions = [first, second]
    state.pending = second
    await store.save(state)

    rows = await store.intervention_rows(state.run_id)
    assert [(r.intervention_id, r.status) for r in rows] == [
        (first.intervention_id, InterventionStatus.ANSWERED),
        (second.intervention_id, InterventionStatus.PENDING),
    ]
    assert rows[1].options == ["Proceed", "Modify", "Cancel"]
    assert rows[1].allowed_responders == ["U_ASKER", "U_APPROVER"]
    assert rows[1].confidence is not None and rows[1].confidence.score == 0.55


async def test_finishing_a_run_cancels_its_pending_interventions(store: SqlRunStore) -> None:
    state = make_state()
    await store.save(state)
    state.status = RunStatus.FAILED
    await store.save(state)

    request = state.interventions[0]
    late = await store.claim_intervention(
        state.run_id,
        request.intervention_id,
        InterventionAnswer(action=InterventionAction.PROCEED, user="U_ASKER"),
    )
    assert (late.claimed, late.reason) == (False, "cancelled")
    loaded = await store.load(state.run_id)
    assert loaded is not None and loaded.pending is not None
    assert loaded.pending.status is InterventionStatus.CANCELLED


async def test_queries_by_status_channel_and_thread(store: SqlRunStore) -> None:
    base = utcnow() - timedelta(hours=1)
    old = make_state(thread_ts="1.1", status=RunStatus.ANSWERED, created_at=base)
    follow_up = make_state(
        thread_ts="1.1", status=RunStatus.RUNNING, created_at=base + timedelta(minutes=5)
    )
    elsewhere = make_state(
        thread_ts="2.2",
        channel_id="C2",
        status=RunStatus.RUNNING,
        created_at=base + timedelta(minutes=1),
    )
    for state in (old, follow_up, elsewhere):
        await store.save(state)

    latest = await store.latest_run_in_thread(
        ThreadKey(team_id="T1", channel_id="C1", thread_ts="1.1")
    )
    assert latest is not None and latest.run_id == follow_up.run_id
    assert await store.latest_run_in_thread(ThreadKey(channel_id="C9", thread_ts="x")) is None

    newest_first = await store.list_runs()
    assert [s.run_id for s in newest_first] == [follow_up.run_id, elsewhere.run_id, old.run_id]
    assert [s.run_id for s in await store.list_runs(channel_id="C2")] == [elsewhere.run_id]
    assert [s.run_id for s in await store.list_runs(status=RunStatus.ANSWERED)] == [old.run_id]
    assert len(await store.list_runs(limit=2)) == 2
    running = await store.runs_with_status(RunStatus.RUNNING)
    assert [s.run_id for s in running] == [elsewhere.run_id, follow_up.run_id]


async def test_mutate_reads_and_writes_in_one_go(store: SqlRunStore) -> None:
    state = make_state()
    await store.save(state)

    def cancel(s: RunState) -> None:
        s.status = RunStatus.CANCELLED

    changed = await store.mutate(state.run_id, cancel)

    assert changed is not None and changed.status is RunStatus.CANCELLED
    assert changed.version == 2
    assert await store.mutate("missing", cancel) is None
    assert (await store.get_intervention(state.interventions[0].intervention_id)) is not None


async def test_message_refs(store: SqlRunStore) -> None:
    await store.set_message_ref(run_id="r1", kind="plan", channel_id="C1", ts="1.0001")
    await store.set_message_ref(run_id="r1", kind="answer", channel_id="C1", ts="1.0002")
    await store.set_message_ref(run_id="r1", kind="plan", channel_id="C1", ts="1.0003")

    assert await store.get_message_ref(run_id="r1", kind="plan") == ("C1", "1.0003")
    assert await store.get_message_ref(run_id="r1", kind="intervention:x") is None
    assert await store.message_refs("r1") == {"plan": ("C1", "1.0003"), "answer": ("C1", "1.0002")}
    assert await store.message_refs("r2") == {}


async def test_a_workspace_note_holds_until_it_expires(store: SqlRunStore) -> None:
    """E.g. "this workspace refused streaming": read back by another process until it
    expires; a newer note replaces it; it is nobody's run message."""
    now = utcnow()
    assert await store.workspace_note("T1", "stream_refused") is None
    await store.note_workspace(
        "T1",
        "stream_refused",
        "feature_not_enabled (HTTP 200) and more",
        until=now + timedelta(hours=1),
    )
    note = await store.workspace_note("T1", "stream_refused")
    assert note is not None and note[0] == "feature_not_enabled (HTTP 200) a"  # 32 characters
    assert now + timedelta(minutes=59) < note[1] <= now + timedelta(hours=1)
    assert await store.workspace_note("T1", "stream_refused", now=now + timedelta(hours=2)) is None
    assert await store.workspace_note("T2", "stream_refused") is None

    await store.note_workspace(
        "T1", "stream_refused", "not_allowed", until=now - timedelta(seconds=5)
    )
    assert await store.workspace_note("T1", "stream_refused") is None
    long_team = "E" + "9" * 80
    await store.note_workspace(long_team, "stream_refused", "x", until=now + timedelta(hours=1))
    assert (await store.workspace_note(long_team, "stream_refused") or ("", now))[0] == "x"
    assert await store.list_runs(limit=5) == []


async def test_the_audit_trail_is_written_with_each_transition(store: SqlRunStore) -> None:
    state = make_state(status=RunStatus.RUNNING, with_intervention=False)
    for event in (RunEventType.RUN_STARTED, RunEventType.PLAN_CREATED):
        await store.save(state, RunEvent(type=event, run_id=state.run_id, message=event.value))
    await store.save(state)  # a save with no transition to record
    state.status = RunStatus.ANSWERED
    await store.save(state, RunEvent(type=RunEventType.ANSWER_READY, run_id=state.run_id))
    other = make_state(thread_ts="2.0")
    await store.save(other, RunEvent(type=RunEventType.RUN_STARTED, run_id=other.run_id))

    events = await store.events(state.run_id)
    assert [(e.seq, e.event_type, e.status) for e in events] == [
        (1, "run_started", "running"),
        (2, "plan_created", "running"),
        (4, "answer_ready", "answered"),
    ]
    assert events[1].message == "plan_created"
    assert [e.seq for e in await store.events(other.run_id)] == [1]


async def test_a_refused_save_leaves_no_audit_record(store: SqlRunStore) -> None:
    state = make_state(status=RunStatus.RUNNING, with_intervention=False)
    await store.save(state, RunEvent(type=RunEventType.RUN_STARTED, run_id=state.run_id))
    stale = state.model_copy(deep=True)
    await store.save(state, RunEvent(type=RunEventType.RUN_CANCELLED, run_id=state.run_id))
    with pytest.raises(RunConflictError):
        await store.save(stale, RunEvent(type=RunEventType.ANSWER_READY, run_id=state.run_id))
    assert [e.event_type for e in await store.events(state.run_id)] == [
        "run_started",
        "run_cancelled",
    ]


async def test_dedupe_marks_once(store: SqlRunStore) -> None:
    assert await store.mark_processed("Ev1") is True
    assert await store.mark_processed("Ev1") is False
    assert await store.mark_processed("Ev2", "action") is True
    assert await store.prune_processed(before=utcnow() + timedelta(seconds=1)) == 2
    assert await store.mark_processed("Ev1") is True
