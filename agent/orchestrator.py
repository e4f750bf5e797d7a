"""The run state machine's entry points: plan → execute → score → intervene → replan →
answer. The moves live in `run_machine` (the drive loop and finishing) and
`run_answers` (answers and resumes); leases in `leases`.

Every transition is saved to the run store *before* observers hear of it, so a run that
pauses can be resumed by any process that loads it, and nothing an observer shows is
lost if the process dies right after.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from datetime import timedelta
from typing import TypedDict, Unpack

from agent.cost import check_budget
from agent.errors import InvalidInputError
from agent.leases import Superseded
from agent.policy import RunPolicy
from agent.ports import RunEventType
from agent.run_answers import RunAnswers, replace_intervention
from agent.schemas import (
    InterventionRequest,
    InterventionStatus,
    RunOrigin,
    RunState,
    StepStatus,
    ThreadKey,
    utcnow,
)
from agent.workers import is_abandoned

log = logging.getLogger(__name__)

_CANCEL_ATTEMPTS = 20  # a worker commits a few times per step; a cancel gets in quickly


class NewRun(TypedDict, total=False):
    """The optional details of a new run, as `register` takes them (its defaults apply):
    `start` passes them on unchanged."""

    asker: str
    thread: ThreadKey | None
    collection: str | None
    context: str
    run_id: str | None
    origin: RunOrigin | None
    policy: RunPolicy | None


class Orchestrator(RunAnswers):
    """Start, drive, adopt, cancel and retry runs; see `RunMachine` for the moves."""

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

    async def start(self, query: str, **details: Unpack[NewRun]) -> RunState:
        """Start a run and drive it until it answers, pauses, fails or is cancelled.

        Raises `InvalidInputError` / `CostLimitError` before anything is stored."""
        state = await self.register(query, **details)
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
        origin: RunOrigin | None = None,
        policy: RunPolicy | None = None,
    ) -> RunState:
        """Validate a question and store its run (PLANNING, held by this worker) without
        working on it yet. Once this returns the question cannot be lost: should the
        process die before the run's turn comes, whoever adopts abandoned runs plans it.

        `policy` (agent/policy.py): where it was asked may narrow the collections (the
        first is the default when `collection` is None), name approvers, experts and
        thresholds.

        Raises `InvalidInputError` / `CostLimitError` before anything is stored."""
        text = self.validate_question(query)
        policy = policy or RunPolicy()
        if collection is None and policy.collections:
            collection = policy.collections[0]
        collection = await self.validate_collection(collection)
        await check_budget(self.ledger, self.config.cost)
        state = RunState(
            query=text,
            asker=asker,
            thread=thread or ThreadKey(),
            collection=collection,
            context=context,
            llm_model=self.llm.name,
            policy=policy,
        )
        if run_id:
            state.run_id = run_id
        if origin is not None:  # else the thread's: a Slack thread, or the command line
            state.origin = origin
        await self._commit(state, RunEventType.RUN_STARTED, "run started")
        return state

    async def drive(self, state: RunState) -> RunState:
        """Plan and run a registered run — unless, while it waited for its turn, its lease
        ran out and another process took it (then the stored run is returned)."""
        until = utcnow() + timedelta(seconds=self.config.execution.lease_seconds)
        if not await self.store.renew_lease(state.run_id, self.worker_id, until):
            self.leases.held.discard(state.run_id)
            log.info("run taken over while it waited; leaving it", extra={"run_id": state.run_id})
            return await self.store.load(state.run_id) or state
        state.lease_expires_at = until
        await self._timed(state, self._plan_and_run(state))
        return state

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
        except Superseded:
            return None
        return state

    async def run_adopted(self, state: RunState) -> None:
        """Drive an adopted run on from where its last worker left it."""
        if state.plan is None:
            await self._timed(state, self._plan_and_run(state))
        else:
            await self._timed(state, self._drive(state))

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
                replace_intervention(state, cancelled)
                state.pending = None
            try:
                await self._cancel(state, reason or f"cancelled by {user or 'a user'}")
            except Superseded:
                continue  # its worker committed meanwhile: load the new version, cancel that
            return state
        return await self.store.load(run_id)

    async def retry(
        self, run_id: str, *, user: str | None = None, new_run_id: str | None = None
    ) -> RunState:
        """Ask a run's question again as a new run (`new_run_id`, or a fresh id)."""
        old = await self.store.load(run_id)
        if old is None:
            raise InvalidInputError(f"Unknown run {run_id}.")
        return await self.start(
            old.query,
            asker=user or old.asker,
            thread=old.thread,
            collection=old.collection,
            context=old.context,
            run_id=new_run_id,
            origin=old.origin,
            policy=old.policy,
        )

    def may_answer(
        self, request: InterventionRequest, user: str | None, member_of: Collection[str] = ()
    ) -> bool:
        """Whether `user` may answer `request`: named by it, an approver, or (as the caller
        checked) a member of one of the groups it allows."""
        if not request.allowed_responders:
            return True
        if user is None:
            return False
        return (
            user in request.allowed_responders
            or user in self.approvers
            or bool(set(member_of) & set(request.allowed_groups))
        )

    async def release_leases(self) -> list[str]:
        """Hand every run this worker still holds to whoever adopts abandoned runs next
        (at shutdown, once no task drives them any more). The run ids released."""
        return await self.leases.release_all()
