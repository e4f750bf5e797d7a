"""Runs evaluation cases through a real `Orchestrator`, in this process, one by one.

Each case is asked like a person would ask it. A plan approval is granted at once (the
evaluation plays the asker clicking Run plan: nobody judges an answer there). Where the
run then first answers or waits for a human is its *first stop*, which is what the case
is scored on. Unless told not to, a paused run is then moved on with Proceed (an
ask_user without picking an option) until it answers, to see what the answer would
have been.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from pydantic import BaseModel, Field

from agent.errors import GraceError
from agent.evaluation.cases import EvalCase
from agent.evaluation.metrics import EvalMetrics, compute_metrics
from agent.evaluation.records import CaseRecord
from agent.evaluation.scoring import answer_correct, case_correct, confidently_wrong, recall_hit
from agent.finishing import final_result
from agent.orchestrator import Orchestrator
from agent.ports import RunEvent, RunEventType
from agent.schemas import (
    ActionType,
    InterventionAction,
    InterventionAnswer,
    InterventionKind,
    RunState,
    RunStatus,
    StepStatus,
)

log = logging.getLogger(__name__)

ASKER = "grace-eval"
MAX_APPROVALS = 3
MAX_PROCEEDS = 6
TOP_K = 5

ProgressCallback = Callable[[CaseRecord], None]
"""Called after each case with its record (e.g. to advance a progress bar)."""


class EvalReport(BaseModel):
    """Everything one `grace eval` run found: the records and the metrics over them."""

    model: str
    collection: str
    cases_file: str = ""
    proceed: bool = True
    thresholds: dict[str, float] = Field(default_factory=dict)
    """The level thresholds the runs used (silent, notify, confirm)."""
    started_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    seconds: float = 0.0
    metrics: EvalMetrics
    records: list[CaseRecord]


class _FirstSearch:
    """Observer keeping, per run, the source files of the first search step's passages."""

    def __init__(self) -> None:
        self.top: dict[str, list[str]] = {}

    async def on_event(self, event: RunEvent, state: RunState) -> None:
        if event.type is not RunEventType.STEP_FINISHED or event.step_id is None:
            return
        if event.run_id in self.top:
            return
        result = state.step_results.get(event.step_id)
        if result is None or result.action is not ActionType.RAG_SEARCH:
            return
        if result.status in (StepStatus.RUNNING, StepStatus.PENDING, StepStatus.SKIPPED):
            return
        self.top[event.run_id] = [s.source for s in result.sources[:TOP_K]]


async def run_eval(
    orchestrator: Orchestrator,
    cases: Sequence[EvalCase],
    *,
    collection: str | None = None,
    proceed: bool = True,
    progress: ProgressCallback | None = None,
    cases_file: str = "",
    concurrency: int = 1,
) -> EvalReport:
    """Run every case and score it. `collection` None = the knowledge base's default.

    The orchestrator should have a throw-away run store and the default thresholds: the
    evaluation writes runs, and learned thresholds would skew it. `concurrency` > 1 asks
    several questions at once — worth it for a remote model, not for the offline one
    (and each question's time then includes waiting for the others)."""
    started = time.perf_counter()
    name = collection or orchestrator.knowledge_base.default_collection
    searches = _FirstSearch()
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(case: EvalCase) -> CaseRecord:
        async with gate:
            record = await run_case(
                orchestrator, case, collection=name, proceed=proceed, searches=searches
            )
        if progress is not None:
            progress(record)
        return record

    orchestrator.observers.append(searches)
    try:
        records = list(await asyncio.gather(*(one(case) for case in cases)))
    finally:
        orchestrator.observers.remove(searches)
    return EvalReport(
        model=orchestrator.llm.name,
        collection=name,
        cases_file=cases_file,
        proceed=proceed,
        thresholds=orchestrator.thresholds.model_dump(),
        seconds=round(time.perf_counter() - started, 3),
        metrics=compute_metrics(records, proceed=proceed),
        records=records,
    )


async def run_case(
    orchestrator: Orchestrator,
    case: EvalCase,
    *,
    collection: str | None,
    proceed: bool = True,
    searches: _FirstSearch | None = None,
) -> CaseRecord:
    """Ask one case's question and score what happened."""
    searches = searches or _FirstSearch()
    started = time.perf_counter()
    try:
        state = await orchestrator.start(case.q, asker=ASKER, collection=collection)
        for _ in range(MAX_APPROVALS):
            if not _waiting_on(state, InterventionKind.PLAN_APPROVAL):
                break
            state = await _proceed(orchestrator, state)
    except GraceError as exc:
        return _failed(case, exc.message, time.perf_counter() - started)
    except Exception as exc:  # one broken case must not end the whole evaluation
        log.exception("evaluation case failed", extra={"case": case.id})
        return _failed(case, f"{type(exc).__name__}: {exc}", time.perf_counter() - started)
    first_seconds = time.perf_counter() - started
    record = _first_stop(case, state)
    record.seconds = round(first_seconds, 4)
    record.replans = state.replan_count
    proceeded = 0
    if proceed:
        try:
            while state.status is RunStatus.PAUSED and proceeded < MAX_PROCEEDS:
                state = await _proceed(orchestrator, state)
                proceeded += 1
        except Exception as exc:  # keep what the first stop showed
            log.exception("proceeding failed", extra={"case": case.id})
            record.error = f"after Proceed: {exc}"
    record.proceeded = proceeded
    record.total_seconds = round(time.perf_counter() - started, 4)
    _final(record, state)
    record.top5 = searches.top.get(state.run_id, [])
    record.recall_hit = recall_hit(case, record.top5)
    record.correct = case_correct(case, record)
    record.answer_correct = answer_correct(case, record.final_answer)
    record.confidently_wrong = confidently_wrong(case, record)
    return record


def _waiting_on(state: RunState, kind: InterventionKind) -> bool:
    return (
        state.status is RunStatus.PAUSED
        and state.pending is not None
        and state.pending.kind is kind
    )


async def _proceed(orchestrator: Orchestrator, state: RunState) -> RunState:
    """Click Run plan / Proceed (for a question: go on without choosing an option)."""
    assert state.pending is not None
    outcome = await orchestrator.answer(
        state.run_id,
        state.pending.intervention_id,
        InterventionAnswer(action=InterventionAction.PROCEED, user=ASKER),
    )
    if not outcome.claimed or outcome.state is None:
        raise GraceError(f"could not move the run on: {outcome.reason}")
    return outcome.state


_PAUSE_LEVEL = {
    InterventionKind.PLAN_APPROVAL: "approval",
    InterventionKind.ASK_USER: "asked",
    InterventionKind.CONFIRM: "confirm",
    InterventionKind.ESCALATE: "escalate",
}


def _first_stop(case: EvalCase, state: RunState) -> CaseRecord:
    record = CaseRecord(
        id=case.id,
        kind=case.kind,
        question=case.q,
        status=state.status.value,
        level=state.status.value,
        plan_generated=state.plan is not None,
        error=state.error,
    )
    if state.status is RunStatus.ANSWERED:
        record.level = state.level.value if state.level else "notify"
        record.answer = state.final_answer
        record.confidence = state.overall_confidence
    elif state.status is RunStatus.PAUSED and state.pending is not None:
        record.level = _PAUSE_LEVEL[state.pending.kind]
        record.pause = state.pending.kind.value
        if state.pending.confidence is not None:
            record.confidence = round(state.pending.confidence.score, 4)
    return record


def _final(record: CaseRecord, state: RunState) -> None:
    record.final_status = state.status.value
    record.pauses = [i.kind.value for i in state.interventions]
    record.replans_total = state.replan_count
    record.plan_generated = record.plan_generated or state.plan is not None
    record.llm_calls = state.token_usage.calls
    record.tokens = state.token_usage.total_tokens
    record.cost_usd = state.token_usage.cost_usd
    if state.status is RunStatus.ANSWERED:
        record.final_answer = state.final_answer
        record.final_confidence = state.overall_confidence
        if state.overall_detail is not None:
            record.features = dict(state.overall_detail.breakdown)
        answer = final_result(state) if state.plan is not None else None
        if answer is not None and answer.answer_features is not None:
            # under a model's weighted-mean default the breakdown lacks them
            for name, value in answer.answer_features.as_map().items():
                record.features.setdefault(name, value)
        record.final_level = state.level.value if state.level else None
        record.sources = list(dict.fromkeys(s.source for s in state.sources))
    elif state.error and not record.error:
        record.error = state.error


def _failed(case: EvalCase, message: str, seconds: float) -> CaseRecord:
    record = CaseRecord(
        id=case.id,
        kind=case.kind,
        question=case.q,
        status="failed",
        level="failed",
        final_status="failed",
        error=message,
        seconds=round(seconds, 4),
        total_seconds=round(seconds, 4),
    )
    record.recall_hit = recall_hit(case, [])
    record.correct = case_correct(case, record)
    record.confidently_wrong = confidently_wrong(case, record)
    return record
