"""The run state machine: plan → execute → score → intervene → replan → answer.

Every transition is saved to the run store *before* observers hear of it, so a run that
pauses can be resumed by any process that loads it, and nothing an observer shows is
lost if the process dies right after.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Sequence
from datetime import timedelta
from typing import NoReturn

from agent.confidence import (
    ConfidenceAggregator,
    ConfidenceCalculator,
    SourceAgreementCalculator,
)
from agent.config import AgentConfig, Thresholds
from agent.cost import check_budget, check_query_budget, price
from agent.errors import CostLimitError, GraceError, InvalidInputError
from agent.executor import DONE, StepExecutor, ancestors, ready_steps, skip_blocked, step_context
from agent.intervention import (
    ask_user_request,
    confirm_request,
    did_you_mean,
    escalate_request,
    plan_approval_request,
)
from agent.planner import Planner
from agent.ports import (
    ClaimResult,
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
from agent.replan import ReplanDecision, ReplanManager
from agent.schemas import (
    ActionType,
    ConfidenceScore,
    InterventionAction,
    InterventionAnswer,
    InterventionKind,
    InterventionLevel,
    InterventionRequest,
    InterventionStatus,
    ReplanStrategy,
    ReplanTrigger,
    RunState,
    RunStatus,
    Source,
    StepResult,
    StepStatus,
    ThreadKey,
    TokenUsage,
    utcnow,
)
from agent.tools import Toolbox
from agent.workers import is_abandoned, new_worker_id

log = logging.getLogger(__name__)

MAX_WAVES = 50  # a hard stop far above any real plan, in case a bug would loop
_CANCEL_ATTEMPTS = 20  # a worker commits a few times per step; a cancel gets in quickly


class _Superseded(Exception):
    """The stored run moved on without this task: stop, write nothing more."""


class _CancelledElsewhere(_Superseded):
    """Someone cancelled the run (another task or process) while this one worked on it."""


class _TakenOver(_Superseded):
    """Another worker took the run over (it presumed this one dead)."""


class Orchestrator:
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
    ) -> None:
        self.config = config or AgentConfig()
        self.worker_id = worker_id or new_worker_id()
        self._held: set[str] = set()  # active runs whose lease this worker holds
        self.llm = llm
        self.knowledge_base = knowledge_base
        self.store = store
        self.ledger = ledger
        self.observers = list(observers)
        self.approvers = list(approvers)
        self.thresholds = thresholds or self.config.confidence.thresholds
        self.calculator = ConfidenceCalculator(self.config.confidence)
        self.planner = Planner(llm, self.config.execution)
        self.replanner = ReplanManager(self.planner, self.config.replan)
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

    # ------------------------------------------------------------------ entry points

    def validate_question(self, query: str) -> str:
        text = query.strip()
        if not text:
            raise InvalidInputError(
                "The question is empty. Ask me something, e.g. "
                "'How many vacation days do new employees get?'"
            )
        limit = self.config.execution.max_question_chars
        if len(text) > limit:
            raise InvalidInputError(
                f"The question is {len(text):,} characters long; the limit is {limit:,}. "
                "Please shorten it or split it into several questions."
            )
        return text

    async def validate_collection(self, collection: str | None) -> str:
        if collection is None:
            return self.knowledge_base.default_collection
        known = await self.knowledge_base.collections()
        if collection not in known:
            names = ", ".join(sorted(known)) or "none yet — run `grace ingest` first"
            raise InvalidInputError(
                f"Unknown collection {collection!r}. Known collections: {names}."
            )
        return collection

    async def start(
        self,
        query: str,
        *,
        asker: str = "local-user",
        thread: ThreadKey | None = None,
        collection: str | None = None,
        context: str = "",
        run_id: str | None = None,
    ) -> RunState:
        """Start a run and drive it until it answers, pauses, fails or is cancelled.

        Raises `InvalidInputError` / `CostLimitError` before anything is stored."""
        state = await self.register(
            query, asker=asker, thread=thread, collection=collection, context=context, run_id=run_id
        )
        await self._timed(state, self._plan_and_run(state))
        return state

    async def register(
        self,
        query: str,
        *,
        asker: str = "local-user",
        thread: ThreadKey | None = None,
        collection: str | None = None,
        context: str = "",
        run_id: str | None = None,
    ) -> RunState:
        """Validate a question and store its run (PLANNING, held by this worker) without
        working on it yet. Once this returns the question cannot be lost: should the
        process die before the run's turn comes, whoever adopts abandoned runs plans it.

        Raises `InvalidInputError` / `CostLimitError` before anything is stored."""
        text = self.validate_question(query)
        collection = await self.validate_collection(collection)
        await check_budget(self.ledger, self.config.cost)
        state = RunState(
            query=text,
            asker=asker,
            thread=thread or ThreadKey(),
            collection=collection,
            context=context,
            llm_model=self.llm.name,
        )
        if run_id:
            state.run_id = run_id
        await self._commit(state, RunEventType.RUN_STARTED, "run started")
        return state

    async def drive(self, state: RunState) -> RunState:
        """Plan and run a registered run — unless, while it waited for its turn, its lease
        ran out and another process took it (then the stored run is returned)."""
        until = utcnow() + timedelta(seconds=self.config.execution.lease_seconds)
        if not await self.store.renew_lease(state.run_id, self.worker_id, until):
            self._held.discard(state.run_id)
            log.info("run taken over while it waited; leaving it", extra={"run_id": state.run_id})
            return await self.store.load(state.run_id) or state
        state.lease_expires_at = until
        await self._timed(state, self._plan_and_run(state))
        return state

    async def answer(
        self, run_id: str, intervention_id: str, answer: InterventionAnswer
    ) -> ClaimResult:
        """Answer a pending intervention exactly once, then drive the run on."""
        state = await self.store.load(run_id)
        if state is None:
            return ClaimResult(claimed=False, reason=f"unknown run {run_id}")
        request = _find_intervention(state, intervention_id)
        if request is None:
            return ClaimResult(claimed=False, state=state, reason="unknown intervention")
        if not self.may_answer(request, answer.user):
            return ClaimResult(
                claimed=False,
                state=state,
                reason="only the person who asked or a configured approver may answer",
            )
        claim = await self.store.claim_intervention(run_id, intervention_id, answer)
        if not claim.claimed or claim.state is None:
            return claim
        state = claim.state
        request = _find_intervention(state, intervention_id)
        assert request is not None
        request = request.model_copy(
            update={
                "status": InterventionStatus.ANSWERED,
                "answered_by": answer.user,
                "answer": answer,
                "answered_at": utcnow(),
            }
        )
        await self._continue_answered(state, request, answer)
        return ClaimResult(claimed=True, state=state, answered_by=answer.user)

    async def _continue_answered(
        self, state: RunState, request: InterventionRequest, answer: InterventionAnswer
    ) -> None:
        """Move a paused run on with the answer its (closed) question got."""
        _replace_intervention(state, request)
        state.pending = None
        state.status = RunStatus.RUNNING
        await self._timed(state, self._resume(state, request, answer))

    async def _continue_expired(self, state: RunState, request: InterventionRequest) -> None:
        """Move a paused run on after its question expired, as configured."""
        _replace_intervention(state, request)
        state.pending = None
        await self._timed(state, self._apply_expiry(state, request))

    async def _resume(
        self, state: RunState, request: InterventionRequest, answer: InterventionAnswer
    ) -> None:
        await self._commit(
            state,
            RunEventType.INTERVENTION_ANSWERED,
            f"{answer.action.value} by {answer.user or 'someone'}",
            data={"intervention_id": request.intervention_id, "action": answer.action.value},
        )
        await self._apply_answer(state, request, answer)

    async def recover(self, run_id: str) -> RunState | None:
        """Finish a run whose worker died; None when it is not ours to take (its worker
        is alive, or another process took it first)."""
        state = await self.adopt(run_id)
        if state is not None:
            await self.run_adopted(state)
        return state

    async def adopt(self, run_id: str) -> RunState | None:
        """Take over a PLANNING/RUNNING run whose worker is gone (its lease ran out, or it
        visibly died on this host). Exactly one of several concurrent adopters wins; the
        interrupted steps are reset so they run again (at-least-once), completed steps are
        kept. None when there is nothing to take."""
        state = await self.store.load(run_id)
        if state is None or not is_abandoned(state, me=self.worker_id, now=utcnow()):
            return None
        previous = state.worker or "an unknown worker"
        for step_id, result in list(state.step_results.items()):
            if result.status is StepStatus.RUNNING:
                del state.step_results[step_id]
        try:
            await self._commit(state, RunEventType.RUN_RECOVERED, f"taken over from {previous}")
        except _Superseded:
            return None
        return state

    async def run_adopted(self, state: RunState) -> None:
        """Drive an adopted run on from where its last worker left it."""
        if state.plan is None:
            await self._timed(state, self._plan_and_run(state))
        else:
            await self._timed(state, self._drive(state))

    async def finish_stranded(self, run_id: str, intervention_id: str) -> RunState | None:
        """Act on an answer (or an expiry) that was recorded but never acted on: the
        process that claimed it died before moving the run on. The run's compare-and-set
        keeps this exactly-once even if that process was only slow. None when the run
        is not paused on that (closed) question."""
        state = await self.store.load(run_id)
        if state is None or state.status is not RunStatus.PAUSED or state.pending is None:
            return None
        request = state.pending
        if request.intervention_id != intervention_id:
            return None
        if request.status is InterventionStatus.ANSWERED and request.answer is not None:
            await self._continue_answered(state, request, request.answer)
        elif request.status is InterventionStatus.EXPIRED:
            await self._continue_expired(state, request)
        else:
            return None
        return state

    async def expire(self, run_id: str, intervention_id: str) -> RunState | None:
        """Apply `auto_proceed_on_timeout` to an intervention the store marked expired."""
        state = await self.store.load(run_id)
        if state is None or state.pending is None:
            return state
        if state.pending.intervention_id != intervention_id:
            return state
        request = state.pending.model_copy(update={"status": InterventionStatus.EXPIRED})
        await self._continue_expired(state, request)
        return state

    async def _apply_expiry(self, state: RunState, request: InterventionRequest) -> None:
        hours = self.config.intervention.expiry_hours
        if not self.config.intervention.auto_proceed_on_timeout:
            await self._cancel(state, f"no answer within {hours:g} h: the run was cancelled")
            return
        state.status = RunStatus.RUNNING
        await self._commit(
            state,
            RunEventType.INTERVENTION_ANSWERED,
            f"no answer within {hours:g} h: proceeding automatically",
            data={"intervention_id": request.intervention_id, "action": "expired_proceed"},
        )
        proceed = InterventionAnswer(action=InterventionAction.PROCEED, user=None)
        await self._apply_answer(state, request, proceed)

    async def cancel(self, run_id: str, *, user: str | None, reason: str = "") -> RunState | None:
        """Cancel a run, even one another task or process is driving (cancellation wins:
        its worker stops at its next commit)."""
        for _ in range(_CANCEL_ATTEMPTS):
            state = await self.store.load(run_id)
            if state is None or state.status.is_final:
                return state
            if state.pending is not None:
                cancelled = state.pending.model_copy(
                    update={"status": InterventionStatus.CANCELLED, "answered_by": user}
                )
                _replace_intervention(state, cancelled)
                state.pending = None
            try:
                await self._cancel(state, reason or f"cancelled by {user or 'a user'}")
            except _Superseded:
                continue  # its worker committed meanwhile: load the new version, cancel that
            return state
        return await self.store.load(run_id)

    async def retry(self, run_id: str, *, user: str | None = None) -> RunState:
        old = await self.store.load(run_id)
        if old is None:
            raise InvalidInputError(f"Unknown run {run_id}.")
        return await self.start(
            old.query,
            asker=user or old.asker,
            thread=old.thread,
            collection=old.collection,
            context=old.context,
        )

    def may_answer(self, request: InterventionRequest, user: str | None) -> bool:
        if not request.allowed_responders:
            return True
        return user is not None and (user in request.allowed_responders or user in self.approvers)

    # ------------------------------------------------------------------ the machine

    async def _timed(self, state: RunState, work: Awaitable[None]) -> None:
        """Run a piece of the machine, keep its time and its lease, and stop quietly if
        the run was cancelled or taken over meanwhile."""
        started = time.perf_counter()
        heartbeat = asyncio.create_task(self._keep_lease(state))
        try:
            await work
        except _CancelledElsewhere:
            log.info("run cancelled elsewhere; stopping", extra={"run_id": state.run_id})
        except _TakenOver:
            log.warning(
                "run taken over by another worker; stopping", extra={"run_id": state.run_id}
            )
        finally:
            heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await heartbeat
            state.execution_time_ms += (time.perf_counter() - started) * 1000

    async def _keep_lease(self, state: RunState) -> None:
        """Renew the run's lease while this worker drives it, so nobody presumes it dead."""
        lease = self.config.execution.lease_seconds
        while True:
            await asyncio.sleep(lease / 4)
            if not state.status.is_active or state.worker != self.worker_id:
                continue
            until = utcnow() + timedelta(seconds=lease)
            try:
                renewed = await self.store.renew_lease(state.run_id, self.worker_id, until)
            except Exception:  # a database hiccup: the next beat tries again
                log.exception("renewing the run's lease failed", extra={"run_id": state.run_id})
                continue
            if not renewed:
                log.warning("lost the run's lease", extra={"run_id": state.run_id})
                return
            state.lease_expires_at = until

    async def _plan_and_run(self, state: RunState, feedback: str | None = None) -> None:
        state.status = RunStatus.PLANNING
        try:
            outcome = await self.planner.create_plan(
                PlanRequest(
                    query=state.query,
                    context=state.context,
                    collections=await self._collections(),
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
                        self.thresholds,
                        self._inherited_quality(state, step.step_id),
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
        low = max(self.config.replan.low_confidence, self.thresholds.confirm)
        for result in sorted(results, key=lambda r: r.step_id):
            trigger = self.replanner.trigger_for(result)
            if trigger is None and result.confidence < low and result.status in DONE:
                trigger = ReplanTrigger.LOW_CONFIDENCE
            if trigger is ReplanTrigger.LOW_CONFIDENCE and state.low_confidence_accepted:
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
                if trigger is ReplanTrigger.LOW_CONFIDENCE:
                    await self._pause(
                        state,
                        escalate_request(
                            state,
                            result.step_id,
                            result.confidence_detail,
                            decision.reason,
                            self.config.intervention,
                            self._responders(state),
                        ),
                    )
                else:
                    await self._fail(state, f"Gave up: {decision.reason}.")
                return False
            return await self._replan(state, decision)
        if self.config.intervention.pause_on_confirm and not state.low_confidence_accepted:
            for result in sorted(results, key=lambda r: r.step_id):
                if result.level is InterventionLevel.CONFIRM and result.step_id != final_id:
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

    async def _replan(
        self, state: RunState, decision: ReplanDecision, feedback: str | None = None
    ) -> bool:
        assert state.plan is not None
        old = state.plan
        try:
            new_plan, kept, usage = await self.replanner.build(state, decision, feedback)
        except GraceError as exc:
            if exc.usage is not None:
                await self._account(state, exc.usage, self.llm.name)
            await self._fail(state, f"Replanning failed: {exc.message}")
            return False
        await self._account(state, usage, self.llm.name)
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

    async def _apply_answer(
        self, state: RunState, request: InterventionRequest, answer: InterventionAnswer
    ) -> None:
        action = answer.action
        text = (answer.text or "").strip()
        if answer.option is not None and 0 <= answer.option < len(request.options):
            text = text or request.options[answer.option]
            if action is InterventionAction.PROCEED:
                action = InterventionAction.INPUT
        if action is InterventionAction.CANCEL:
            await self._cancel(state, f"cancelled by {answer.user or 'a user'}")
            return
        kind = request.kind
        if kind is InterventionKind.PLAN_APPROVAL:
            if action in (InterventionAction.MODIFY, InterventionAction.INPUT) and text:
                await self._user_replan(state, None, text)
            else:
                await self._drive(state)
            return
        if kind is InterventionKind.ASK_USER:
            assert request.step_id is not None
            reply = text if action is InterventionAction.INPUT or text else ""
            if reply:
                state.user_inputs.append(reply)
            state.step_results[request.step_id] = StepResult(
                step_id=request.step_id,
                action=ActionType.ASK_USER,
                status=StepStatus.SUCCESS if reply else StepStatus.PARTIAL,
                output=reply,
                confidence=1.0 if reply else 0.5,
                confidence_detail=ConfidenceScore(
                    score=1.0 if reply else 0.5,
                    breakdown={"human_answer": 1.0 if reply else 0.0},
                ),
                sources=[Source(source="user reply", text=reply, similarity=1.0)] if reply else [],
            )
            await self._commit(
                state, RunEventType.STEP_FINISHED, "answered by a human", step_id=request.step_id
            )
            await self._drive(state)
            return
        if action is InterventionAction.MODIFY and text:
            await self._user_replan(state, request.step_id, text)
            return
        if action is InterventionAction.RETRY and request.step_id is not None:
            state.step_results.pop(request.step_id, None)
            await self._drive(state)
            return
        if action is InterventionAction.INPUT and text:
            state.user_inputs.append(text)
            if kind is InterventionKind.ESCALATE:
                await self._new_information(state, request.step_id, text)
                return
            await self._drive(state)
            return
        # PROCEED / SKIP / an empty input: go on with what we have.
        state.low_confidence_accepted = True
        await self._drive(state)

    async def _user_replan(self, state: RunState, step_id: int | None, text: str) -> None:
        reason = f"the user asked: {text}"
        decision = self.replanner.decide(state, ReplanTrigger.USER_FEEDBACK, step_id, reason)
        if decision.strategy is ReplanStrategy.ABORT:
            # No replans left: keep the user's words as context rather than ignoring them.
            state.user_inputs.append(text)
            await self._drive(state)
            return
        if await self._replan(state, decision, feedback=text):
            await self._drive(state)

    async def _new_information(self, state: RunState, step_id: int | None, text: str) -> None:
        reason = "the user added information"
        decision = self.replanner.decide(state, ReplanTrigger.NEW_INFORMATION, step_id, reason)
        if decision.strategy is ReplanStrategy.ABORT:
            # Out of replans: answer again from the same passages plus the human's words.
            assert state.plan is not None
            for step in state.plan.steps:
                if step.action is ActionType.REASONING:
                    state.step_results.pop(step.step_id, None)
            state.low_confidence_accepted = True
            await self._drive(state)
            return
        if decision.strategy in (ReplanStrategy.FALLBACK, ReplanStrategy.SKIP):
            decision = decision.model_copy(update={"strategy": ReplanStrategy.PARTIAL})
        if await self._replan(state, decision, feedback=text):
            await self._drive(state)

    async def _finish(self, state: RunState) -> None:
        assert state.plan is not None
        final = None
        for step in reversed(state.plan.steps):
            result = state.step_results.get(step.step_id)
            if step.action is ActionType.REASONING and result and result.status in DONE:
                final = result
                break
        if final is None:
            errors = [r.error for r in state.step_results.values() if r.error]
            await self._fail(
                state,
                "No answer could be produced: " + ("; ".join(errors) or "every step was skipped"),
            )
            return
        scores = [
            r.confidence
            for _, r in sorted(state.step_results.items())
            if r.status in DONE and r.action is not ActionType.ASK_USER
        ]
        aggregate = ConfidenceAggregator.aggregate(scores, self.config.confidence.aggregation)
        detail = final.confidence_detail
        breakdown = detail.breakdown if detail else {}
        self_eval = breakdown.get("llm_self_eval", 0.5)
        coverage = breakdown.get("query_coverage", 0.5)
        w = self.config.confidence.overall_step_weight
        overall = w * aggregate + (1 - w) / 2 * (self_eval + coverage)
        state.overall_detail = ConfidenceScore(
            score=min(1.0, max(0.0, overall)),
            breakdown={
                "steps_aggregate": round(aggregate, 4),
                "llm_self_eval": self_eval,
                "query_coverage": coverage,
                **{k: v for k, v in breakdown.items() if k not in ("base",)},
            },
            penalties=detail.penalties if detail else [],
        )
        state.overall_confidence = round(state.overall_detail.score, 4)
        state.level = self.calculator.decide_action(state.overall_detail, self.thresholds).level
        state.final_answer = final.output
        state.sources = _cited(final.output, final.sources)
        state.status = RunStatus.ANSWERED
        await self._commit(
            state,
            RunEventType.ANSWER_READY,
            f"answered with confidence {state.overall_confidence:.2f} ({state.level.value})",
        )

    # ------------------------------------------------------------------ helpers

    def _responders(self, state: RunState) -> list[str]:
        return list(dict.fromkeys([state.asker, *self.approvers]))

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

    async def _collections(self) -> list[str]:
        try:
            return await self.knowledge_base.collections()
        except GraceError:
            return [self.knowledge_base.default_collection]

    async def _did_you_mean(self, state: RunState) -> list[str]:
        """Choices for an ambiguous question the plan gave none for: the knowledge
        base's closest entries, so the person can click instead of typing."""
        try:
            sources = await self.knowledge_base.search(
                state.query, collection=state.collection, limit=self.config.execution.top_k
            )
        except GraceError:
            return []  # a plain question still works: the reply is the answer
        return did_you_mean(sources)

    async def _account(self, state: RunState, usage: TokenUsage, model: str) -> None:
        if usage.calls == 0 and usage.total_tokens == 0:
            return
        priced = price(usage, self.config.cost, model)
        state.token_usage = state.token_usage + priced
        if self.ledger is not None:
            await self.ledger.record(state.run_id, priced, model)

    async def _superseded(self, state: RunState, conflict: RunConflictError) -> NoReturn:
        """Our copy is stale: take the stored run as the truth and stop driving it."""
        self._held.discard(state.run_id)
        stored = await self.store.load(state.run_id)
        if stored is None:
            raise _TakenOver(state.run_id) from conflict
        for name in RunState.model_fields:
            if name != "execution_time_ms":
                setattr(state, name, getattr(stored, name))
        if stored.status is RunStatus.CANCELLED:
            raise _CancelledElsewhere(state.run_id) from conflict
        raise _TakenOver(state.run_id) from conflict

    def _lease(self, state: RunState) -> None:
        """An active run is held by this worker until its lease runs out; others are not."""
        if state.status.is_active:
            state.worker = self.worker_id
            lease = timedelta(seconds=self.config.execution.lease_seconds)
            state.lease_expires_at = utcnow() + lease
            self._held.add(state.run_id)
        else:
            state.worker = None
            state.lease_expires_at = None
            self._held.discard(state.run_id)

    async def release_leases(self) -> list[str]:
        """Hand every run this worker still holds to whoever adopts abandoned runs next
        (at shutdown, once no task drives them any more). The run ids released."""
        released = []
        for run_id in sorted(self._held):
            if await self.store.renew_lease(run_id, self.worker_id, utcnow()):
                released.append(run_id)
        self._held.clear()
        return released

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
        self._lease(state)
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
            await self._superseded(state, conflict)
        log.info(message, extra={"run_id": state.run_id, "event": event_type.value})
        for observer in self.observers:
            try:
                await observer.on_event(event, state)
            except Exception:  # an observer must never break a run
                log.exception("observer failed", extra={"run_id": state.run_id})


def _find_intervention(state: RunState, intervention_id: str) -> InterventionRequest | None:
    if state.pending and state.pending.intervention_id == intervention_id:
        return state.pending
    return next((i for i in state.interventions if i.intervention_id == intervention_id), None)


def _replace_intervention(state: RunState, request: InterventionRequest) -> None:
    state.interventions = [
        request if i.intervention_id == request.intervention_id else i for i in state.interventions
    ]


def _cited(answer: str, sources: list[Source]) -> list[Source]:
    """The sources the answer cites, or all it was given when it cites none."""
    cited = [s for s in sources if f"[Source: {s.source}]" in answer]
    return cited or sources
