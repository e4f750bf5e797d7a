"""The drive loop of a run: plan, run the steps wave by wave, score them, pause, replan
and finish. Every transition is saved to the run store *before* observers hear of it,
so a run that pauses can be resumed by any process that loads it, and nothing an
observer shows is lost if the process dies right after.

Time: a run has a deadline for its planning and steps together
(`ExecutionConfig.run_deadline_seconds`; waiting for a human does not count). Steps get
at most the time left, replanning stops when it is spent, and a run out of time answers
with what it has or fails saying so. Transitions are logged at DEBUG; one INFO line
sums a run up when the agent stops working on it (answered, failed, paused…).

Why one module of ~600 lines: it is one state machine, and its transitions (plan, wave,
pause, replan, finish, commit) share the run's invariants — save before telling
observers, one deadline, one cost account. Split across modules they would have to
reach into each other's private state; the pure parts already live elsewhere
(`executor`, `replan`, `finishing`, `intervention`, `confidence`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Mapping, Sequence

from agent.confidence import (
    Calibration,
    ConfidenceCalculator,
    SourceAgreementCalculator,
)
from agent.config import AgentConfig, Thresholds
from agent.cost import check_query_budget, price
from agent.errors import CostLimitError, GraceError
from agent.executor import DONE, StepExecutor, ancestors, ready_steps, skip_blocked, step_context
from agent.finishing import cited, final_result, no_answer_reason, overall_confidence
from agent.intervention import (
    ambiguity_options,
    ask_user_request,
    clarify_request,
    confirm_request,
    did_you_mean,
    escalate_request,
    plan_approval_request,
)
from agent.knowledge.verified import visible_to
from agent.leases import CancelledElsewhere, LeaseKeeper, TakenOver
from agent.planner import Planner
from agent.ports import (
    Embedder,
    KnowledgeBase,
    LanguageModel,
    PlanRequest,
    RunConflictError,
    RunEvent,
    RunEventType,
    RunObserver,
    RunStore,
    UsageLedger,
    WebSearchProvider,
)
from agent.replan import (
    GATHERING,
    HUMAN_TRIGGERS,
    ReplanManager,
    fresh_plan,
    normalised,
)
from agent.safety import sanitize_answer, urls_in
from agent.schemas import (
    ActionType,
    InterventionKind,
    InterventionLevel,
    InterventionRequest,
    ReplanDecision,
    ReplanStrategy,
    ReplanTrigger,
    RunState,
    RunStatus,
    StepResult,
    StepStatus,
    TokenUsage,
)
from agent.tools import Toolbox
from agent.workers import new_worker_id

log = logging.getLogger(__name__)

MAX_WAVES = 50  # a hard stop far above any real plan, in case a bug would loop
_CANCEL_ATTEMPTS = 20  # a worker commits a few times per step; a cancel gets in quickly


class RunMachine:
    """The state machine's moves; `RunAnswers` adds what answers do, `Orchestrator`
    the entry points."""

    def __init__(
        self,
        *,
        llm: LanguageModel,
        knowledge_base: KnowledgeBase,
        store: RunStore,
        embedder: Embedder,
        config: AgentConfig | None = None,
        web_search: WebSearchProvider | None = None,
        ledger: UsageLedger | None = None,
        observers: Sequence[RunObserver] = (),
        approvers: Sequence[str] = (),
        thresholds: Thresholds | None = None,
        worker_id: str | None = None,
        calibrations: Mapping[str, Calibration] | None = None,
    ) -> None:
        """`calibrations`: the confidence maps by provider (None: the shipped ones,
        `agent.confidence.CALIBRATIONS`); the wiring passes the ones stored by
        `grace calibrate`."""
        self.config = config or AgentConfig()
        self.worker_id = worker_id or new_worker_id()
        self.leases = LeaseKeeper(
            store=store,
            worker_id=self.worker_id,
            lease_seconds=self.config.execution.lease_seconds,
        )
        self.llm = llm
        self.knowledge_base = knowledge_base
        self.store = store
        self.ledger = ledger
        self.observers = list(observers)
        self.approvers = list(approvers)
        self.thresholds = thresholds or self.config.confidence.thresholds
        self.team_thresholds: dict[str, Thresholds] = {}
        """Thresholds learned from one team's votes only, by team id (several Slack
        workspaces on one deployment: nothing shared); a team without is on `thresholds`."""
        self.calculator = ConfidenceCalculator(self.config.confidence, calibrations)
        self.planner = Planner(llm, self.config.execution)
        self.replanner = ReplanManager(self.planner, self.config.replan)
        self._piece_started: dict[str, float] = {}
        self.executor = StepExecutor(
            toolbox=Toolbox(
                llm=llm,
                knowledge_base=knowledge_base,
                web_search=web_search,
                top_k=self.config.execution.top_k,
            ),
            calculator=self.calculator,
            agreement=SourceAgreementCalculator(embedder),
        )

    # ------------------------------------------------------------------ the machine

    def thresholds_for(self, state: RunState) -> Thresholds:
        """The thresholds this run is judged by: its channel's own (its policy's), else its
        team's learned ones, else the shared ones."""
        if state.policy.thresholds is not None:
            return state.policy.thresholds
        return self.team_thresholds.get(state.thread.team_id, self.thresholds)

    async def _timed(self, state: RunState, work: Awaitable[None]) -> None:
        """Run a piece of the machine, keep its time and its lease, and stop quietly if
        the run was cancelled or taken over meanwhile."""
        started = time.perf_counter()
        self._piece_started[state.run_id] = started
        heartbeat = asyncio.create_task(self.leases.keep(state))
        try:
            await work
        except CancelledElsewhere:
            log.info("run cancelled elsewhere; stopping", extra={"run_id": state.run_id})
        except TakenOver:
            log.warning(
                "run taken over by another worker; stopping", extra={"run_id": state.run_id}
            )
        finally:
            heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await heartbeat
            self._piece_started.pop(state.run_id, None)
            state.execution_time_ms += (time.perf_counter() - started) * 1000
            _log_summary(state)

    def _time_left(self, state: RunState) -> float:
        """Seconds left of the run's deadline (its earlier pieces of work included)."""
        started = self._piece_started.get(state.run_id)
        running = time.perf_counter() - started if started is not None else 0.0
        spent = state.execution_time_ms / 1000 + running
        return self.config.execution.run_deadline_seconds - spent

    async def _out_of_time(self, state: RunState) -> None:
        """The deadline is spent: answer with what the run has, or fail saying so."""
        if state.plan is not None and final_result(state) is not None:
            await self._finish(state)
            return
        limit = self.config.execution.run_deadline_seconds
        errors = "; ".join(r.error for r in state.step_results.values() if r.error)
        await self._fail(
            state,
            f"The run ran out of time ({limit:g} s) before it found an answer"
            + (f": {errors}" if errors else "."),
        )

    async def _plan_and_run(self, state: RunState, feedback: str | None = None) -> None:
        state.status = RunStatus.PLANNING
        try:
            outcome = await self.planner.create_plan(
                PlanRequest(
                    query=state.query,
                    context=state.context,
                    collections=await self._collections(state),
                    default_collection=state.collection,
                    feedback=feedback,
                )
            )
        except GraceError as exc:
            if exc.usage is not None:
                await self._account(state, exc.usage, self.llm.name)
            await self._fail(state, f"Planning failed: {exc.message}")
            return
        await self._account(state, outcome.reply.usage, outcome.reply.model)
        state.plan = outcome.plan
        state.step_results = {}
        message = f"plan with {len(outcome.plan.steps)} steps"
        if outcome.repairs:
            message += f" (repaired: {'; '.join(outcome.repairs)})"
        await self._commit(state, RunEventType.PLAN_CREATED, message)
        if outcome.plan.requires_confirmation:
            await self._pause(
                state,
                plan_approval_request(state, self.config.intervention, self._responders(state)),
            )
            return
        await self._drive(state)

    async def _drive(self, state: RunState) -> None:
        state.status = RunStatus.RUNNING
        for _ in range(MAX_WAVES):
            assert state.plan is not None
            for skipped in skip_blocked(state):
                await self._commit(
                    state, RunEventType.STEP_FINISHED, skipped.error or "", step_id=skipped.step_id
                )
            ready = ready_steps(state)
            if not ready:
                await self._finish(state)
                return
            ask = next((s for s in ready if s.action is ActionType.ASK_USER), None)
            if ask is not None:
                await self._pause(
                    state,
                    ask_user_request(
                        state,
                        ask.step_id,
                        question=ask.query or ask.description,
                        reason=ask.expected_output or "the question is ambiguous",
                        options=ask.options or await self._did_you_mean(state),
                        config=self.config.intervention,
                        responders=self._responders(state),
                    ),
                )
                return
            try:
                check_query_budget(state.token_usage.cost_usd, self.config.cost)
            except CostLimitError as exc:
                await self._fail(state, exc.message)
                return
            time_left = self._time_left(state)
            if time_left <= 0:
                await self._out_of_time(state)
                return
            for step in ready:
                state.step_results[step.step_id] = StepResult(
                    step_id=step.step_id, action=step.action, status=StepStatus.RUNNING
                )
            await self._commit(
                state,
                RunEventType.STEP_STARTED,
                ", ".join(f"step {s.step_id}" for s in ready),
                data={"step_ids": [s.step_id for s in ready]},
            )
            results = await asyncio.gather(
                *(
                    self.executor.execute(
                        step,
                        step_context(state, step),
                        self.thresholds_for(state),
                        self._inherited_quality(state, step.step_id),
                        time_limit=time_left,
                    )
                    for step in ready
                )
            )
            for result in results:
                state.step_results[result.step_id] = result
                await self._account(state, result.token_usage, self.llm.name)
                if result.status is StepStatus.FAILED:
                    state.failure_count += 1
                    state.consecutive_failures += 1
                else:
                    state.consecutive_failures = 0
            for result in results:
                await self._commit(
                    state,
                    RunEventType.STEP_FINISHED,
                    f"step {result.step_id} {result.status.value} "
                    f"(confidence {result.confidence:.2f})",
                    step_id=result.step_id,
                )
            if not await self._after_wave(state, results):
                return
        await self._fail(state, f"the run did not finish within {MAX_WAVES} waves")

    async def _after_wave(self, state: RunState, results: Sequence[StepResult]) -> bool:
        """Replan or pause as the wave's results demand. False when the drive must stop."""
        assert state.plan is not None
        final_id = state.plan.steps[-1].step_id
        for result in results:
            if (
                result.step_id == final_id
                and result.action is ActionType.REASONING
                and result.status in DONE
                and await self._clarify_if_vague(state, result)
            ):
                return False
        low = max(self.config.replan.low_confidence, self.thresholds_for(state).confirm)
        for result in sorted(results, key=lambda r: r.step_id):
            trigger = self.replanner.trigger_for(result)
            if trigger is ReplanTrigger.LOW_CONFIDENCE and _judged_by_answer(state, result):
                trigger = None  # the answer drawn from these passages is judged instead
            if (
                trigger is None
                and result.confidence < low
                and result.status in DONE
                and not _judged_by_answer(state, result)
            ):
                trigger = ReplanTrigger.LOW_CONFIDENCE
            if trigger is ReplanTrigger.LOW_CONFIDENCE and (
                state.low_confidence_accepted or _shaped_by_a_person(state)
            ):
                continue
            if trigger is None:
                continue
            reason = (
                f"step {result.step_id} failed: {result.error}"
                if result.status is StepStatus.FAILED
                else f"step {result.step_id} confidence {result.confidence:.2f} < {low:.2f}"
            )
            decision = self.replanner.decide(state, trigger, result.step_id, reason)
            if decision.strategy is ReplanStrategy.ABORT:
                await self._give_up(state, decision, result)
                return False
            return await self._replan(state, decision, failed=result)
        if self.config.intervention.pause_on_confirm and not state.low_confidence_accepted:
            for result in sorted(results, key=lambda r: r.step_id):
                if (
                    result.level is InterventionLevel.CONFIRM
                    and result.step_id != final_id
                    and not _judged_by_answer(state, result)
                ):
                    assert result.confidence_detail is not None
                    await self._pause(
                        state,
                        confirm_request(
                            state,
                            result.step_id,
                            result.confidence_detail,
                            self.config.intervention,
                            self._responders(state),
                        ),
                    )
                    return False
        return True

    async def _give_up(self, state: RunState, decision: ReplanDecision, result: StepResult) -> None:
        """No (new) replan: a weak result goes to a person, a failure ends the run."""
        if decision.trigger is ReplanTrigger.LOW_CONFIDENCE:
            await self._pause(
                state,
                escalate_request(
                    state,
                    result.step_id,
                    result.confidence_detail,
                    decision.reason,
                    self.config.intervention,
                    self._responders(state, experts=True),
                    groups=state.policy.expert_groups,
                ),
            )
        else:
            await self._fail(state, f"Gave up: {decision.reason}.")

    async def _replan(
        self,
        state: RunState,
        decision: ReplanDecision,
        feedback: str | None = None,
        failed: StepResult | None = None,
    ) -> bool:
        """Apply a replan. The agent's own (`failed` given) never reruns a search this
        run already ran; when its planner has nothing else, the run gives up as at the
        replan limit instead of repeating itself."""
        assert state.plan is not None
        old = state.plan
        time_left = self._time_left(state)
        if time_left <= 0:
            await self._out_of_time(state)
            return False
        try:
            new_plan, kept, usage = await asyncio.wait_for(
                self.replanner.build(state, decision, feedback), timeout=time_left
            )
        except TimeoutError:
            await self._out_of_time(state)
            return False
        except GraceError as exc:
            if exc.usage is not None:
                await self._account(state, exc.usage, self.llm.name)
            await self._fail(state, f"Replanning failed: {exc.message}")
            return False
        await self._account(state, usage, self.llm.name)
        if (
            failed is not None
            and decision.trigger not in HUMAN_TRIGGERS
            and decision.strategy in (ReplanStrategy.FULL, ReplanStrategy.PARTIAL)
        ):
            fresh = fresh_plan(
                new_plan,
                kept,
                decision.searched,
                state.query,
                reasoning_failed=failed.action is ActionType.REASONING
                and failed.status is StepStatus.FAILED,
            )
            if fresh is None:
                why = f"{decision.reason}; a new plan would only repeat searches already run"
                await self._give_up(state, decision.model_copy(update={"reason": why}), failed)
                return False
            new_plan, kept = fresh
        state.replan_history.append(self.replanner.record(decision, old, new_plan))
        state.plan = new_plan
        state.step_results = kept
        state.consecutive_failures = 0
        await self._commit(
            state,
            RunEventType.REPLANNED,
            f"{decision.trigger.value} → {decision.strategy.value}: {decision.reason}",
            data={"trigger": decision.trigger.value, "strategy": decision.strategy.value},
        )
        return True

    async def _finish(self, state: RunState) -> None:
        final = final_result(state)
        if final is None:
            await self._fail(state, no_answer_reason(state))
            return
        if await self._clarify_if_vague(state, final):
            return
        state.overall_detail = overall_confidence(
            state, final, self.config.confidence, self.thresholds_for(state)
        )
        state.overall_confidence = round(state.overall_detail.score, 4)
        state.level = self.calculator.decide_action(
            state.overall_detail, self.thresholds_for(state)
        ).level
        state.final_answer = sanitize_answer(final.output, urls_in(_source_texts(final)))
        state.sources = cited(final.output, final.sources)
        state.status = RunStatus.ANSWERED
        await self._commit(
            state,
            RunEventType.ANSWER_READY,
            f"answered with confidence {state.overall_confidence:.2f} ({state.level.value})",
        )

    async def _clarify_if_vague(self, state: RunState, final: StepResult) -> bool:
        """Ask which document a short question means when several answer it about
        equally well (before any answer or escalation). True when the run paused."""
        if state.user_inputs or state.low_confidence_accepted:
            return False
        if any(i.kind is InterventionKind.ASK_USER for i in state.interventions):
            return False
        options = ambiguity_options(state.query, final.sources)
        if not options:
            return False
        await self._pause(
            state,
            clarify_request(
                state, final.step_id, options, self.config.intervention, self._responders(state)
            ),
        )
        return True

    # ------------------------------------------------------------------ helpers

    def _responders(self, state: RunState, *, experts: bool = False) -> list[str]:
        """Who may answer a pause: the asker and the approvers (the run's policy's, else
        the global ones); for an escalation also the experts it calls."""
        approvers = self.approvers if state.policy.approvers is None else state.policy.approvers
        called = state.policy.expert_users if experts else []
        return list(dict.fromkeys([state.asker, *approvers, *called]))

    def _inherited_quality(self, state: RunState, step_id: int) -> float | None:
        assert state.plan is not None
        values = []
        for dep in ancestors(state.plan, step_id):
            result = state.step_results.get(dep)
            if result and result.confidence_detail and result.status in DONE:
                quality = result.confidence_detail.breakdown.get("search_quality")
                if quality is not None and result.confidence_detail.is_search_step:
                    values.append(quality)
        return max(values) if values else None

    async def _collections(self, state: RunState) -> list[str]:
        """What the plan may search: the run's policy's collections (those that exist),
        else every collection."""
        try:
            known = await self.knowledge_base.collections()
        except GraceError:
            known = [self.knowledge_base.default_collection]
        allowed = [c for c in state.policy.collections if c in known]
        return allowed or known

    async def _did_you_mean(self, state: RunState) -> list[str]:
        """Choices for an ambiguous question the plan gave none for: the knowledge
        base's closest entries, so the person can click instead of typing."""
        try:
            sources = await self.knowledge_base.search(
                state.query, collection=state.collection, limit=self.config.execution.top_k
            )
        except GraceError:
            return []  # a plain question still works: the reply is the answer
        return did_you_mean(visible_to(sources, state.thread.team_id))

    async def _account(self, state: RunState, usage: TokenUsage, model: str) -> None:
        if usage.calls == 0 and usage.total_tokens == 0:
            return
        priced = price(usage, self.config.cost, model)
        state.token_usage = state.token_usage + priced
        if self.ledger is not None:
            await self.ledger.record(state.run_id, priced, model)

    async def _pause(self, state: RunState, request: InterventionRequest) -> None:
        state.pending = request
        state.interventions.append(request)
        state.status = RunStatus.PAUSED
        await self._commit(
            state,
            RunEventType.INTERVENTION_REQUESTED,
            f"{request.kind.value}: {request.question}",
            step_id=request.step_id,
            data={"intervention_id": request.intervention_id, "kind": request.kind.value},
        )

    async def _cancel(self, state: RunState, reason: str) -> None:
        state.status = RunStatus.CANCELLED
        state.error = reason
        await self._commit(state, RunEventType.RUN_CANCELLED, reason)

    async def _fail(self, state: RunState, message: str) -> None:
        state.status = RunStatus.FAILED
        state.error = message
        await self._commit(state, RunEventType.RUN_FAILED, message)

    async def _commit(
        self,
        state: RunState,
        event_type: RunEventType,
        message: str,
        *,
        step_id: int | None = None,
        data: dict[str, object] | None = None,
    ) -> None:
        self.leases.stamp(state)
        event = RunEvent(
            type=event_type,
            run_id=state.run_id,
            step_id=step_id,
            message=message,
            data=data or {},
        )
        try:
            # Written only if nobody else wrote the run since we read it (a cancel, a
            # worker that took it over); the store then bumps `version` and `updated_at`.
            await self.store.save(state, event)
        except RunConflictError as conflict:
            raise await self.leases.adopt_stored(state) from conflict
        log.debug(message, extra={"run_id": state.run_id, "event": event_type.value})
        for observer in self.observers:
            try:
                await observer.on_event(event, state)
            except Exception:  # an observer must never break a run
                log.exception("observer failed", extra={"run_id": state.run_id})


def _source_texts(result: StepResult) -> list[str]:
    return [text for s in result.sources for text in (s.text, s.source)]


def _log_summary(state: RunState) -> None:
    """The one INFO line of a run: where it stands and what it cost."""
    if state.status.is_active:
        return
    usage = state.token_usage
    level = f", {state.level.value}" if state.level else ""
    confidence = (
        f", confidence {state.overall_confidence:.2f}{level}"
        if state.overall_confidence is not None
        else ""
    )
    log.info(
        "run %s after %.1f s: %d model calls, %d tokens in / %d out, $%.4f, %d replans%s",
        state.status.value,
        state.execution_time_ms / 1000,
        usage.calls,
        usage.input_tokens,
        usage.output_tokens,
        usage.cost_usd,
        state.replan_count,
        confidence,
        extra={
            "run_id": state.run_id,
            "event": "run_summary",
            "seconds": round(state.execution_time_ms / 1000, 3),
        },
    )


def _judged_by_answer(state: RunState, result: StepResult) -> bool:
    """A plan's only search, and it returned passages: whether they hold the answer is
    judged on the answer drawn from them (its calibrated confidence), not on the
    search's own score. So are searches beside one for the whole question that found
    passages (a part of the question, another wording after a weak answer): they only
    add to it. Otherwise, in a plan of several searches a weak one is still confirmed
    or retried on its own: one part of the question may be missing."""
    if result.action not in GATHERING or not result.sources or state.plan is None:
        return False
    searches = [s for s in state.plan.steps if s.action in GATHERING]
    if len(searches) == 1:
        return True
    whole = normalised(state.query)
    return any(
        normalised(s.query or state.query) == whole
        and (found := state.step_results.get(s.step_id)) is not None
        and bool(found.sources)
        for s in searches
    )


def _shaped_by_a_person(state: RunState) -> bool:
    """The current plan is the one a person asked for (Modify, Edit, new information):
    a weak answer from it is shown at its level, not replanned away on the agent's own."""
    return bool(state.replan_history) and state.replan_history[-1].trigger in HUMAN_TRIGGERS
