"""Intervention claims (storage/interventions.py): exactly one winner of any number of
concurrent answers and expiries, in one process, two engines or two real processes;
the table's terminal status beats a stale copy; stranded questions are found."""

from __future__ import annotations

import asyncio
import sys
from datetime import timedelta
from pathlib import Path

from sqlalchemy.ext.asyncio import AsyncEngine

from agent.schemas import (
    InterventionAction,
    InterventionAnswer,
    InterventionStatus,
    RunStatus,
    utcnow,
)
from storage.run_store import SqlRunStore
from tests.samples import answered, make_request, make_state


def _answer(user: str) -> InterventionAnswer:
    return InterventionAnswer(action=InterventionAction.PROCEED, user=user)


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


async def test_stranded_questions_are_closed_ones_a_paused_run_still_waits_on(
    store: SqlRunStore,
) -> None:
    answer = InterventionAnswer(action=InterventionAction.PROCEED, user="U_ASKER")
    stranded = make_state(thread_ts="1.0")
    moved_on = make_state(thread_ts="2.0")
    untouched = make_state(thread_ts="3.0")
    for state in (stranded, moved_on, untouched):
        await store.save(state)
    for state in (stranded, moved_on):
        assert state.pending is not None
        assert (
            await store.claim_intervention(state.run_id, state.pending.intervention_id, answer)
        ).claimed
    moved_on.status = RunStatus.RUNNING  # its process moved the run on after the claim
    await store.save(moved_on)

    later = utcnow() + timedelta(seconds=1)
    found = await store.stranded_interventions(later)

    assert [(r.run_id, r.status.value) for r in found] == [(stranded.run_id, "answered")]
    assert found[0].answer == answer
    assert await store.stranded_interventions(utcnow() - timedelta(hours=1)) == []


async def test_twenty_concurrent_claims_one_winner(store: SqlRunStore) -> None:
    state = make_state()
    await store.save(state)
    intervention_id = state.interventions[0].intervention_id

    results = await asyncio.gather(
        *(
            store.claim_intervention(state.run_id, intervention_id, _answer(f"U{i}"))
            for i in range(20)
        )
    )

    winners = [r for r in results if r.claimed]
    assert len(winners) == 1
    winner = winners[0].answered_by
    assert winner is not None
    losers = [r for r in results if not r.claimed]
    assert len(losers) == 19
    assert {r.reason for r in losers} == {f"already answered by {winner}"}
    assert {r.answered_by for r in losers} == {winner}
    row = await store.get_intervention(intervention_id)
    assert row is not None and row.answered_by == winner


async def test_claims_from_two_processes_one_winner(
    store: SqlRunStore, other_engine: AsyncEngine
) -> None:
    state = make_state()
    await store.save(state)
    intervention_id = state.interventions[0].intervention_id
    stores = [store, SqlRunStore(other_engine)]

    results = await asyncio.gather(
        *(
            stores[i % 2].claim_intervention(state.run_id, intervention_id, _answer(f"U{i}"))
            for i in range(20)
        )
    )

    assert sum(r.claimed for r in results) == 1
    winner = next(r.answered_by for r in results if r.claimed)
    assert all(r.reason == f"already answered by {winner}" for r in results if not r.claimed)


async def test_expiry_sweep_and_answer_race_one_winner(
    store: SqlRunStore, other_engine: AsyncEngine
) -> None:
    now = utcnow()
    state = make_state(with_intervention=False)
    requests = [
        make_request(state.run_id, step_id=i, expires_in=timedelta(minutes=-1), now=now)
        for i in range(10)
    ]
    fresh = make_request(state.run_id, step_id=99, expires_in=timedelta(hours=1), now=now)
    never = make_request(state.run_id, step_id=98, expires_in=None, now=now)
    state.interventions = [*requests, fresh, never]
    await store.save(state)
    sweeper = SqlRunStore(other_engine)

    assert await store.next_expiry() == now - timedelta(minutes=1)
    due = await store.due_interventions(now)
    assert {r.intervention_id for r in due} == {r.intervention_id for r in requests}

    async def race(intervention_id: str) -> tuple[bool, bool]:
        expired, claim = await asyncio.gather(
            sweeper.claim_expiry(intervention_id=intervention_id, now=now),
            store.claim_intervention(state.run_id, intervention_id, _answer("U_ASKER")),
        )
        return expired, claim.claimed

    outcomes = await asyncio.gather(*(race(r.intervention_id) for r in requests))

    assert all(expired != claimed for expired, claimed in outcomes)
    assert await store.due_interventions(now) == []
    assert await store.next_expiry() == fresh.expires_at
    assert not await store.claim_expiry(intervention_id=fresh.intervention_id, now=now)
    assert not await store.claim_expiry(intervention_id=never.intervention_id, now=now)
    statuses = {r.status for r in await store.intervention_rows(state.run_id)}
    assert statuses <= {
        InterventionStatus.ANSWERED,
        InterventionStatus.EXPIRED,
        InterventionStatus.PENDING,
    }
    expired_ids = [r.intervention_id for r, (exp, _) in zip(requests, outcomes, strict=True) if exp]
    for intervention_id in expired_ids:
        late = await store.claim_intervention(state.run_id, intervention_id, _answer("U_LATE"))
        assert (late.claimed, late.reason) == (False, "expired")


REPO_ROOT = Path(__file__).resolve().parents[2]


_CLAIMER = """
import asyncio, sys
from agent.schemas import InterventionAction, InterventionAnswer
from storage.db import make_engine
from storage.run_store import SqlRunStore

async def main(url: str, run_id: str, intervention_id: str, who: str) -> None:
    engine = make_engine(url)
    store = SqlRunStore(engine)
    answers = [InterventionAnswer(action=InterventionAction.PROCEED, user=f"{who}-{i}")
               for i in range(10)]
    results = await asyncio.gather(
        *(store.claim_intervention(run_id, intervention_id, a) for a in answers))
    await engine.dispose()
    print(sum(r.claimed for r in results))

asyncio.run(main(*sys.argv[1:]))
"""


async def test_claims_from_real_processes_one_winner(db_url: str, store: SqlRunStore) -> None:
    state = make_state()
    await store.save(state)
    intervention_id = state.interventions[0].intervention_id

    async def process(who: str) -> int:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            _CLAIMER,
            db_url,
            state.run_id,
            intervention_id,
            who,
            cwd=REPO_ROOT,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await proc.communicate()
        assert proc.returncode == 0, err.decode()
        return int(out.decode().strip())

    claimed = await asyncio.gather(process("A"), process("B"))

    assert sum(claimed) == 1
    row = await store.get_intervention(intervention_id)
    assert row is not None and row.answered_by is not None
    assert row.answered_by.startswith(("A-", "B-"))
