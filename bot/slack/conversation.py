"""Thread mapping (SPEC §1): what a message in Slack means for the runs of its thread.

- A mention (or a DM) in a thread with no run, or whose run has finished, starts a run;
  a finished run's question and answer become the new run's context.
- A mention or a reply in a thread whose run is paused answers that pause, when the
  author may answer.
- In a thread whose run was answered, the asker's next message — no mention needed — is
  a follow-up, where the channel's settings allow it (by default in DMs only).
- A run asked in a channel takes that channel's settings (`bot.service.channels`) as its
  `RunPolicy`: collections, approvers, experts, thresholds — in OAuth mode, those its
  team (the thread's) set for the channel, within the collections the team may search.
- Everything that talks to the agent runs after the ack, as a tracked task; a new
  question is stored as a run at once and then waits for an agent slot.
"""

from __future__ import annotations

import logging
import re

from agent.errors import GraceError, InvalidInputError
from agent.policy import RunPolicy
from agent.schemas import (
    InterventionAction,
    InterventionAnswer,
    InterventionKind,
    RunOrigin,
    RunState,
    RunStatus,
    ThreadKey,
)
from blocks.limits import truncate
from bot.slack.deps import BotDeps
from bot.slack.intake import FollowUp, Received
from bot.slack.items import Question, Reply

log = logging.getLogger(__name__)

_MENTION = re.compile(r"<@[A-Z0-9]+(?:\|[^>]*)?>")
CONTEXT_CHARS = 2000
REFUSAL = (
    "Only the person who asked, or an approver configured for GRACE, can answer this. "
    "A question GRACE escalated may also be answered by the experts it called."
)
UNREADABLE = (
    "I could not read that message: it contains characters that are not valid text "
    "(a broken emoji or symbol). Could you send it again?"
)


def readable(text: str) -> bool:
    """False for text no database or Slack call can carry (a lone UTF-16 surrogate,
    which JSON's `\\ud800` escapes can deliver)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def strip_mentions(text: str) -> str:
    return _MENTION.sub("", text).strip()


def follow_up_context(previous: RunState) -> str:
    """The earlier exchange in this thread, for a follow-up question."""
    parts = [f"Earlier question: {previous.query}"]
    if previous.final_answer:
        parts.append(f"Earlier answer: {previous.final_answer}")
    if previous.context:
        parts.insert(0, previous.context)
    return truncate("\n".join(parts), CONTEXT_CHARS)


async def process_question(deps: BotDeps, received: Received[Question]) -> FollowUp | None:
    """An inbox question: its run gets an id derived from the entry, so replaying the
    entry after a crash finds that run instead of starting a second one. A mention that
    answers the thread's pause hands that answer back, to run in the agent lane."""
    run_id, item = received.run_id, received.item
    if await deps.store.load(run_id) is not None:
        log.info("question already taken in", extra={"run_id": run_id})
        return None
    return await on_question(deps, key=item.key, user=item.user, text=item.text, run_id=run_id)


async def process_reply(deps: BotDeps, received: Received[Reply]) -> None:
    """An inbox thread reply (done once its answer is claimed and acted on, or once it
    was taken in as a follow-up question, under an id derived from the entry)."""
    item = received.item
    if await deps.store.load(received.run_id) is not None:
        return None  # taken in as a follow-up already (a replay)
    await on_reply(deps, key=item.key, user=item.user, text=item.text, run_id=received.run_id)
    return None


async def channel_policy(deps: BotDeps, key: ThreadKey) -> RunPolicy | None:
    """The policy a run asked in this channel follows (None: no channel settings).
    For a team the operator limits to some collections, those of them that exist: the
    agent would otherwise fall back to every collection (or name the others in its
    refusal). Raises `InvalidInputError` when none of them exists yet."""
    if deps.channels is None:
        return None
    effective = await deps.channels.effective(key.channel_id, team_id=key.team_id)
    policy = effective.policy()
    if not effective.team_limited:
        return policy
    known = set(await deps.orchestrator.knowledge_base.collections())
    kept = [name for name in policy.collections if name in known]
    if not kept:
        raise InvalidInputError(
            "None of the collections this workspace may search has been ingested yet; "
            "ask whoever runs GRACE."
        )
    return policy.model_copy(update={"collections": kept})


async def follows_up(deps: BotDeps, key: ThreadKey, user: str, latest: RunState | None) -> bool:
    """Whether a plain message in this thread is the asker's follow-up question."""
    if latest is None or latest.status is not RunStatus.ANSWERED or user != latest.asker:
        return False
    if latest.origin is not RunOrigin.SLACK_THREAD or deps.channels is None:
        return False
    return (await deps.channels.effective(key.channel_id, team_id=key.team_id)).follow_ups


async def on_question(
    deps: BotDeps,
    *,
    key: ThreadKey,
    user: str,
    text: str,
    run_id: str | None = None,
    origin: RunOrigin = RunOrigin.SLACK_THREAD,
) -> FollowUp | None:
    """A mention or a DM: start, continue, or answer, depending on the thread's run.
    Answering the thread's pause is returned (not run): it drives the run on, which
    belongs in the agent lane."""
    if not readable(text):
        await deps.publisher.post_text(key.channel_id, key.thread_ts, UNREADABLE)
        return None
    question = strip_mentions(text)
    existing = await deps.store.latest_run_in_thread(key)
    if existing is not None and existing.status is RunStatus.PAUSED and existing.pending:
        return on_reply(deps, key=key, user=user, text=question, run=existing)
    if existing is not None and existing.status in (RunStatus.RUNNING, RunStatus.PLANNING):
        await deps.publisher.post_text(
            key.channel_id,
            key.thread_ts,
            "I'm still working on the question in this thread; I'll answer it first.",
        )
        return None
    refused = deps.limits.admit(f"{key.channel_id}:{key.thread_ts}", user)
    if refused is not None:
        log.warning("run cap reached", extra={"scope": refused.scope, "user": user})
        if refused.tell and refused.scope == "thread":
            await deps.publisher.post_text(key.channel_id, key.thread_ts, refused.text)
        elif refused.tell:
            await deps.publisher.ephemeral(
                key.channel_id, user, refused.text, thread_ts=key.thread_ts
            )
        return None
    context = follow_up_context(existing) if existing is not None else ""
    try:
        state = await deps.orchestrator.register(
            question,
            asker=user,
            thread=key,
            context=context,
            run_id=run_id,
            origin=origin,
            policy=await channel_policy(deps, key),
        )
    except GraceError as exc:
        await deps.publisher.post_text(key.channel_id, key.thread_ts, f"⚠️ {exc.message}")
        return None
    deps.tasks.spawn(deps.orchestrator.drive(state), name=f"run {state.run_id}")
    return None


async def on_reply(
    deps: BotDeps,
    *,
    key: ThreadKey,
    user: str,
    text: str,
    run: RunState | None = None,
    run_id: str | None = None,
) -> None:
    """A thread reply: the answer to the thread's pause, if there is one and it's theirs;
    or the asker's follow-up in a thread GRACE answered (as `run_id`), where allowed."""
    state = run or await deps.store.latest_run_in_thread(key)
    if run is None and text and await follows_up(deps, key, user, state):
        await on_question(deps, key=key, user=user, text=text, run_id=run_id)
        return
    if state is None or state.status is not RunStatus.PAUSED or state.pending is None:
        return  # people talk in threads; only a pending question makes a reply an answer
    request = state.pending
    member_of = await deps.answering_as(request, user, team_id=key.team_id)
    if member_of is None:
        await deps.publisher.ephemeral(key.channel_id, user, REFUSAL, thread_ts=key.thread_ts)
        return
    if not text:
        return
    if not readable(text):
        await deps.publisher.ephemeral(key.channel_id, user, UNREADABLE, thread_ts=key.thread_ts)
        return
    if request.kind in (InterventionKind.ESCALATE, InterventionKind.ASK_USER):
        action = InterventionAction.INPUT
    else:
        action = InterventionAction.MODIFY  # a reply to "run this plan?" says how to change it
    cited = request.kind is InterventionKind.ESCALATE
    name = await deps.display_name(user) if cited else None
    outcome = await deps.orchestrator.answer(
        state.run_id,
        request.intervention_id,
        InterventionAnswer(
            action=action, text=text, user=user, user_name=name, member_of=member_of
        ),
    )
    if not outcome.claimed:
        await deps.publisher.ephemeral(
            key.channel_id,
            user,
            already_handled(outcome.answered_by, outcome.reason),
            thread_ts=key.thread_ts,
        )


def already_handled(answered_by: str | None, reason: str) -> str:
    if answered_by:
        return f"This was already handled by <@{answered_by}>."
    return f"This request is no longer open ({reason or 'already handled'})."
