"""What answers do to a paused run: a click or a reply (claimed exactly once), an
expiry, or an answer a dead process claimed but never acted on, each moves the run on
through the same machine."""

from __future__ import annotations

from agent.evidence import supplies_facts
from agent.ports import ClaimResult, RunEventType
from agent.prompts import USER_SOURCE
from agent.run_machine import RunMachine
from agent.schemas import (
    ActionType,
    ConfidenceScore,
    InterventionAction,
    InterventionAnswer,
    InterventionKind,
    InterventionRequest,
    InterventionStatus,
    ReplanStrategy,
    ReplanTrigger,
    RunState,
    RunStatus,
    Source,
    StepResult,
    StepStatus,
    utcnow,
)


class RunAnswers(RunMachine):
    """Answers, expiries and stranded answers."""

    async def answer(
        self, run_id: str, intervention_id: str, answer: InterventionAnswer
    ) -> ClaimResult:
        """Answer a pending intervention exactly once, then drive the run on."""
        state = await self.store.load(run_id)
        if state is None:
            return ClaimResult(claimed=False, reason=f"unknown run {run_id}")
        request = find_intervention(state, intervention_id)
        if request is None:
            return ClaimResult(claimed=False, state=state, reason="unknown intervention")
        if not self.may_answer(request, answer.user, answer.member_of):
            return ClaimResult(
                claimed=False,
                state=state,
                reason=(
                    "only the person who asked, a configured approver, or an expert the "
                    "escalation called may answer"
                ),
            )
        claim = await self.store.claim_intervention(run_id, intervention_id, answer)
        if not claim.claimed or claim.state is None:
            return claim
        state = claim.state
        request = find_intervention(state, intervention_id)
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
        replace_intervention(state, request)
        state.pending = None
        state.status = RunStatus.RUNNING
        await self._timed(state, self._resume(state, request, answer))

    async def _continue_expired(self, state: RunState, request: InterventionRequest) -> None:
        """Move a paused run on after its question expired, as configured."""
        replace_intervention(state, request)
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
            if not _is_ask_step(state, request.step_id):
                await self._clarified(state, reply)
                return
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
                sources=[Source(source=USER_SOURCE, text=reply, similarity=1.0)] if reply else [],
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
            if kind is InterventionKind.ESCALATE and supplies_facts(text):
                await self._told(state, text, answer.user_name or answer.user)
                return
            state.user_inputs.append(text)
            if kind is InterventionKind.ESCALATE:
                await self._new_information(state, request.step_id, text)
                return
            await self._drive(state)
            return
        # PROCEED / SKIP / an empty input: go on with what we have.
        state.low_confidence_accepted = True
        await self._drive(state)

    async def _told(self, state: RunState, text: str, who_said: str | None) -> None:
        """A person answered an escalation: their reply is a source the answer can rest
        on (cited as them — by name when known, else by id), not more words for the
        search. The searches already done stand; only the answer is drawn again, so no
        replan is spent."""
        who = f"@{who_said}" if who_said else "a person"
        state.human_sources.append(
            Source(
                source=f"{who} (reply in thread)",
                text=text,
                similarity=1.0,
                from_person=True,
            )
        )
        assert state.plan is not None
        for step in state.plan.steps:
            if step.action is ActionType.REASONING:
                state.step_results.pop(step.step_id, None)
        await self._drive(state)

    async def _clarified(self, state: RunState, reply: str) -> None:
        """The asker said which document a vague question is about: search and answer
        again with their words; without a choice (Proceed), answer with what we have."""
        if not reply:
            state.low_confidence_accepted = True
            await self._drive(state)
            return
        state.user_inputs.append(reply)
        state.step_results = {}
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
        # A person has helped once: answer at whatever confidence the new plan earns
        # (shown with its level) rather than escalating the same question back to them.
        state.low_confidence_accepted = True
        if decision.strategy in (ReplanStrategy.FALLBACK, ReplanStrategy.SKIP):
            decision = decision.model_copy(update={"strategy": ReplanStrategy.PARTIAL})
        if await self._replan(state, decision, feedback=text):
            await self._drive(state)


def find_intervention(state: RunState, intervention_id: str) -> InterventionRequest | None:
    if state.pending and state.pending.intervention_id == intervention_id:
        return state.pending
    return next((i for i in state.interventions if i.intervention_id == intervention_id), None)


def replace_intervention(state: RunState, request: InterventionRequest) -> None:
    state.interventions = [
        request if i.intervention_id == request.intervention_id else i for i in state.interventions
    ]


def _is_ask_step(state: RunState, step_id: int) -> bool:
    """Whether the plan itself asked (an ask_user step), rather than the run asking to
    clarify a vague question after drafting its answer."""
    if state.plan is None:
        return True
    try:
        return state.plan.step(step_id).action is ActionType.ASK_USER
    except KeyError:
        return True
