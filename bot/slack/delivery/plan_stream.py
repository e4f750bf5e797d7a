"""The plan as a streamed reply: Slack's native plan, updated live, with the answer in it.

For a run in a workspace that streams, the publisher's pass calls `PlanStreamer.deliver`
before it renders anything else. The stream is an optimisation of the live view, never a
second source of truth — everything it shows is recomputed from the stored run:

- `chat.startStream` (`task_display_mode="plan"`, the asker as recipient) opens it with a
  `plan_update` title and one `task_update` per step; each later pass appends the tasks
  (and title) that changed; when the run is answered, `chat.stopStream` ends it with the
  answer (`markdown_text` chunks), the sources, feedback and run id — one call, so a stop
  whose outcome is unknown (a 5xx Slack carried out) is simply sent again: Slack refuses
  a second stop as "not in streaming state", which settles it, without reading the
  thread back.
- When the run pauses for a person, the stream is stopped (its title says it waits; no
  "writing…" under it) and the pause is a message below it. Once the run goes on, its
  progress is the edited plan message below the pause — as in a workspace that does not
  stream — and the answer a message below that, where the person reads on.
- Its progress is one `message_refs` row (kind `stream`): the stream's ts and a
  `StreamProgress` (`bot.slack.delivery.stream_progress`: starting, open with the tasks
  shown, answering — the stop with the answer sent —, done, plan-done, paused, text-done,
  or message: this run uses the edited plan message). So a restart resumes from it.
- 429, 5xx and timeouts on task updates retry the pass (a `task_update` sent twice shows
  the same thing). A `startStream` whose outcome is unknown (a 5xx, a timeout, a process
  killed just after Slack carried it out: the ts was never stored) is looked for in the
  thread — the one bot message no run has claimed by its metadata — and taken up again;
  several candidates are all stopped and the run goes on in the plan message. Any
  refusal of a started stream stops it (when Slack still lets us) and hands the run to
  the edited plan message and answer message: finished or replaced, never left
  half-written, nothing posted twice. If the stop with the answer is refused for good,
  the stream is ended with the answer's text alone and only the footer (sources,
  feedback, run id) follows as a message; failing that, the whole answer does.
- A refused `chat.startStream` (`not_allowed`, `unknown_method`, …) sends this run to the
  plan message; with `plan_display="auto"` the workspace is remembered for a day (in the
  store: a restart does not try again) and its next runs do not try to stream until then.
"""

from __future__ import annotations

import hashlib
import json
import logging
from datetime import datetime, timedelta
from typing import Any, Literal, Protocol

from slack_sdk.models.messages.chunk import Chunk
from slack_sdk.web.async_client import AsyncWebClient

from agent.schemas import (
    InterventionKind,
    RunState,
    RunStatus,
    utcnow,
)
from blocks.answer import answer_fallback_text, answer_footer
from blocks.plan_card import (
    PlanTask,
    answer_markdown,
    plan_chunks,
    plan_tasks,
    plan_title,
    title_chunk,
)
from bot.slack.delivery.stream_progress import StreamProgress, StreamStage
from bot.slack.delivery.web_api import (
    ANSWER,
    METADATA_EVENT,
    PLAN,
    classify_failure,
    digest_of,
    payload,
    slack_error,
    thread_replies,
)

log = logging.getLogger(__name__)

PlanDisplay = Literal["auto", "stream", "message"]
Cover = Literal["all", "text", "plan", "message", "undecided"]
STREAM = "stream"

REFUSALS = frozenset(
    {
        "not_allowed",
        "unknown_method",
        "feature_not_enabled",
        "not_allowed_token_type",
        "missing_scope",
        "method_deprecated",
        "team_not_allowed",
        "not_supported",
    }
)
"""`chat.startStream` errors that mean "this workspace does not stream": remembered."""
REFUSAL_TTL = timedelta(hours=24)
"""How long a refusal is remembered before the stream is tried again."""
REFUSED = "stream_refused"
"""The store's workspace note of a refusal."""


class StreamRefs(Protocol):
    """The pass's view of the run's stored message refs (`thread_sync.ThreadSync`)."""

    def ref(self, kind: str) -> tuple[str, str, str | None] | None: ...

    async def remember(self, kind: str, channel: str, ts: str, digest: str | None) -> None: ...

    async def posted(self) -> dict[str, str]: ...

    def kinds(self) -> list[str]: ...


class RefusalStore(Protocol):
    """Where refusals outlive the process (`storage.run_store.SqlRunStore`)."""

    async def note_workspace(
        self, team_id: str, kind: str, value: str, *, until: datetime
    ) -> None: ...

    async def workspace_note(
        self, team_id: str, kind: str, *, now: datetime | None = None
    ) -> tuple[str, datetime] | None: ...


class StreamChoices:
    """Workspaces that refused to stream, remembered for `ttl`: in the store when given
    one, so a restart does not try again. A refusal may be lifted (an admin turns the
    feature on, the app gets its scope), so it expires and the stream is tried again."""

    def __init__(self, store: RefusalStore | None = None, *, ttl: timedelta = REFUSAL_TTL) -> None:
        self._store = store
        self._ttl = ttl
        self._refused: dict[str, datetime | None] = {}
        """team → until when it refused (None: it streams); a team is read from the
        store once, when first asked about."""

    async def refused(self, team_id: str) -> bool:
        if team_id not in self._refused:
            note = None
            if self._store is not None:
                note = await self._store.workspace_note(team_id, REFUSED)
            self._refused[team_id] = note[1] if note is not None else None
        until = self._refused[team_id]
        if until is not None and until <= utcnow():
            self._refused[team_id] = until = None  # expired: try streaming again
        return until is not None

    async def refuse(self, team_id: str, error: str) -> None:
        until = utcnow() + self._ttl
        if self._refused.get(team_id) is None:
            log.warning("this workspace does not stream (%s): the plan is an edited message", error)
        self._refused[team_id] = until
        if self._store is not None:
            try:
                await self._store.note_workspace(team_id, REFUSED, error, until=until)
            except Exception:  # remembered here at least; the next process tries once
                log.exception("could not store that this workspace does not stream")


ALREADY_STOPPED = frozenset({"message_not_in_streaming_state"})
"""`chat.stopStream` errors that mean "this stream is no longer open"."""


def _digest(data: Any) -> str:
    raw = json.dumps(data, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(raw.encode()).hexdigest()[:20]


def _paused_below(refs: StreamRefs) -> bool:
    """A pause (Confirm, Escalate, a question) was posted below the stream."""
    return any(kind.startswith("intervention:") for kind in refs.kinds())


def _view(state: RunState) -> tuple[str, list[PlanTask]]:
    return plan_title(state), plan_tasks(state)


async def _note(
    refs: StreamRefs, channel: str, ts: str, stage: StreamStage, digest: str = ""
) -> str:
    """Store the stream's progress (in its stored form, which this returns)."""
    token = StreamProgress(stage, digest).token()
    await refs.remember(STREAM, channel, ts, token)
    return token


class PlanStreamer:
    """Delivers a run's plan (and answer) as a streamed reply; see the module doc."""

    def __init__(
        self,
        *,
        client: AsyncWebClient,
        display: PlanDisplay = "auto",
        choices: StreamChoices | None = None,
    ) -> None:
        self._client = client
        self.display = display
        self.choices = choices or StreamChoices()
        self._shown: dict[str, dict[str, str]] = {}
        """run id → task id (and `title`) → digest of what this process appended."""

    # ------------------------------------------------------------------ the pass

    async def deliver(self, state: RunState, refs: StreamRefs) -> Cover:
        """Bring the run's stream up to date and say what it shows: `all` (the plan and,
        once answered, the answer), `text` (the plan and the answer's text, without its
        footer), `plan` (stopped; the answer is a message of its own),
        `message` (no stream: the caller renders the plan message) or `undecided` (the
        plan is made but may still ask for approval: nothing to show yet)."""
        ref = refs.ref(STREAM)
        if ref is None:
            if state.plan is None:
                return "message"  # nothing to show yet
            if not await self._wants_stream(state) or refs.ref(PLAN) is not None:
                await _note(refs, state.thread.channel_id, "", StreamStage.MESSAGE)
                return "message"
            if state.status is RunStatus.PLANNING and state.plan.requires_confirmation:
                return "undecided"  # plan approval's buttons need the plan message
            ref = await self._start(state, refs)
            if ref is None:
                return "message"
        channel, ts = ref[0], ref[1]
        progress = StreamProgress.parse(ref[2])
        stage = progress.stage
        if stage is StreamStage.DONE:
            return "all"
        if stage is StreamStage.PLAN_DONE:
            return "plan"
        if stage is StreamStage.TEXT_DONE:
            return "text"
        if stage is StreamStage.MESSAGE:
            return "message"
        if stage is StreamStage.PAUSED:
            if state.status in (RunStatus.PAUSED, RunStatus.CANCELLED, RunStatus.FAILED):
                return "plan"  # the stopped stream shows the plan up to the pause
            await _note(refs, channel, ts, StreamStage.MESSAGE)  # going on: the plan message
            return "message"
        if stage is StreamStage.STARTING:
            found = await self._find_started(state, refs)
            if found is None:
                return "message"
            ts, progress, stage = found, StreamProgress(StreamStage.OPEN), StreamStage.OPEN
        if stage is StreamStage.ANSWERING:
            # the stop carrying the answer was sent, its outcome unknown: send it again
            return await self._stop(state, refs, channel, ts, answered=True, text=True, again=True)
        if stage is StreamStage.OPEN:
            if not await self._append_tasks(state, refs, channel, ts, progress):
                return "message"
            if state.status is RunStatus.PAUSED and state.pending is not None:
                # the pause is a message below: the plan no longer says it is working
                await self._stop(state, refs, channel, ts, answered=False)
                await _note(refs, channel, ts, StreamStage.PAUSED)
                return "plan"
            if not state.status.is_final:
                return "all"
            if state.status is not RunStatus.ANSWERED or _paused_below(refs):
                # an answer after a pause goes below it, where the person is reading
                await self._stop(state, refs, channel, ts, answered=False)
                return "plan"
            await _note(refs, channel, ts, StreamStage.ANSWERING, _digest(state.final_answer))
            return await self._stop(state, refs, channel, ts, answered=True, text=True)
        # ANSWERED (rows of older versions): the answer is in the stream, the stop is left
        return await self._stop(state, refs, channel, ts, answered=True, again=True)

    async def _wants_stream(self, state: RunState) -> bool:
        if self.display == "message":
            return False
        if state.asker[:1] not in ("U", "W") or not state.thread.team_id:
            return False  # no Slack user to stream to
        if self.display == "auto" and await self.choices.refused(state.thread.team_id):
            return False
        # plan approval's Run / Edit / Cancel live on the plan message
        return not any(
            r.kind is InterventionKind.PLAN_APPROVAL
            for r in [*state.interventions, *([state.pending] if state.pending else [])]
        )

    # ------------------------------------------------------------------ steps

    async def _start(self, state: RunState, refs: StreamRefs) -> tuple[str, str, str] | None:
        channel = state.thread.channel_id
        await _note(refs, channel, "", StreamStage.STARTING)
        title, tasks = _view(state)
        chunks: list[Chunk] = [title_chunk(state), *plan_chunks(state, tasks)]
        try:
            response = await self._client.chat_startStream(
                channel=channel,
                thread_ts=state.thread.thread_ts,
                recipient_user_id=state.asker,
                recipient_team_id=state.thread.team_id,
                task_display_mode="plan",
                chunks=chunks,
            )
        except Exception as exc:
            retry = classify_failure(exc, "chat.startStream")
            if retry is not None:
                raise retry from exc  # unknown outcome: the next pass uses the message
            error = slack_error(exc)
            if self.display == "auto" and error.split(" ")[0] in REFUSALS:
                await self.choices.refuse(state.thread.team_id, error)
            log.warning("chat.startStream refused: %s", error, extra={"run_id": state.run_id})
            await _note(refs, channel, "", StreamStage.MESSAGE)
            return None
        ts = str(response["ts"])
        token = await _note(refs, channel, ts, StreamStage.OPEN, _digest([title, tasks]))
        self._shown[state.run_id] = {"title": title, **{t.task_id: _digest(t) for t in tasks}}
        return channel, ts, token

    async def _append(
        self,
        state: RunState,
        refs: StreamRefs,
        channel: str,
        ts: str,
        chunks: list[Chunk],
    ) -> bool:
        """One `chat.appendStream` of task updates; False when the stream was dropped. A
        retryable failure retries the pass (a task update sent twice shows the same
        thing); a refusal drops the stream and the caller renders the messages instead."""
        try:
            await self._client.chat_appendStream(channel=channel, ts=ts, chunks=chunks)
        except Exception as exc:
            retry = classify_failure(exc, "chat.appendStream")
            if retry is not None:
                raise retry from exc
            await self._drop(state, refs, channel, ts, f"chat.appendStream: {slack_error(exc)}")
            return False
        return True

    async def _append_tasks(
        self, state: RunState, refs: StreamRefs, channel: str, ts: str, shown_now: StreamProgress
    ) -> bool:
        title, tasks = _view(state)
        wanted = _digest([title, tasks])
        if wanted == shown_now.digest:
            return True
        shown = self._shown.get(state.run_id, {})
        chunks: list[Chunk] = []
        if shown.get("title") != title:
            chunks.append(title_chunk(state))
        changed = [t for t in tasks if shown.get(t.task_id) != _digest(t)]
        chunks.extend(plan_chunks(state, changed))
        if chunks and not await self._append(state, refs, channel, ts, chunks):
            return False
        self._shown[state.run_id] = {"title": title, **{t.task_id: _digest(t) for t in tasks}}
        await _note(refs, channel, ts, StreamStage.OPEN, wanted)
        return True

    async def _stop(
        self,
        state: RunState,
        refs: StreamRefs,
        channel: str,
        ts: str,
        *,
        answered: bool,
        text: bool = False,
        again: bool = False,
    ) -> Cover:
        """End the stream: when answered, with the answer's sources, feedback and run id
        (and, with `text`, the answer itself — one call, so an outcome Slack leaves
        unknown is settled by sending the same stop again, never by posting the answer
        twice). `again`: an earlier stop may have gone through; Slack then refuses this
        one because the stream is no longer open, which is how we know (no search of the
        thread for the message's metadata)."""
        blocks = payload(answer_footer(state)) if answered else None
        chunks: list[Chunk] | None = list(answer_markdown(state)) if text else None
        metadata = {
            "event_type": METADATA_EVENT,
            "event_payload": {"run_id": state.run_id, "kind": ANSWER if answered else STREAM},
        }
        try:
            await self._client.chat_stopStream(
                channel=channel, ts=ts, chunks=chunks, blocks=blocks, metadata=metadata
            )
        except Exception as exc:
            retry = classify_failure(exc, "chat.stopStream")
            if retry is not None:
                raise retry from exc  # stopping again is safe: Slack refuses a second stop
            error = slack_error(exc)
            stopped_before = again and error.split(" ")[0] in ALREADY_STOPPED
            if answered and not stopped_before:
                return await self._stop_without_footer(state, refs, channel, ts, text, error)
            log.warning(
                "chat.stopStream: %s (already stopped)", error, extra={"run_id": state.run_id}
            )
        await _note(refs, channel, ts, StreamStage.DONE if answered else StreamStage.PLAN_DONE)
        if answered:
            digest = digest_of(blocks or [], answer_fallback_text(state))
            await refs.remember(ANSWER, channel, ts, digest)
        self._shown.pop(state.run_id, None)
        return "all" if answered else "plan"

    async def _stop_without_footer(
        self, state: RunState, refs: StreamRefs, channel: str, ts: str, text: bool, error: str
    ) -> Cover:
        """Slack refused the stop with the footer for good: end the stream with the
        answer's text alone (the footer follows as a message), else without it (the whole
        answer follows as a message)."""
        log.warning(
            "the plan stream could not be ended with its footer (chat.stopStream: %s): it "
            "follows below",
            error,
            extra={"run_id": state.run_id},
        )
        shown = not text  # an older version appended the text already
        if text:
            try:
                await self._client.chat_stopStream(
                    channel=channel, ts=ts, chunks=list(answer_markdown(state))
                )
                shown = True
            except Exception as exc:
                log.info("chat.stopStream with the answer's text: %s", slack_error(exc))
                await self._stop_bare(channel, ts, "without the answer")
        else:
            await self._stop_bare(channel, ts, "without the footer")
        await _note(refs, channel, ts, StreamStage.TEXT_DONE if shown else StreamStage.PLAN_DONE)
        self._shown.pop(state.run_id, None)
        return "text" if shown else "plan"

    async def _find_started(self, state: RunState, refs: StreamRefs) -> str | None:
        """An earlier `chat.startStream` whose answer was lost (a 5xx, a timeout, a
        process killed just after Slack carried it out): look for the stream in the
        thread — a bot message no run has claimed (a run's messages carry metadata) and
        not among this run's stored ones; those showing a plan first (a greeting or a
        notice is plain text). One: take it up again (if it is no stream after all, the
        next append is refused and the run goes on in the plan message). Several: stop
        them all (stopping a message that is no stream is refused, harmlessly) and use
        the plan message. None: the start never happened."""
        channel = state.thread.channel_id
        unclaimed = await self._unclaimed(state, refs)
        candidates = [ts for ts, plan in unclaimed if plan] or [ts for ts, _ in unclaimed]
        if len(candidates) == 1:
            (ts,) = candidates
            log.warning(
                "found the plan stream an interrupted start left open: taking it up again",
                extra={"run_id": state.run_id},
            )
            await _note(refs, channel, ts, StreamStage.OPEN)
            self._shown.pop(state.run_id, None)  # unknown what it shows: send everything
            return ts
        for ts in candidates:
            await self._stop_bare(channel, ts, "left open by an interrupted start")
        await self._drop(state, refs, channel, "", "an earlier start did not finish")
        return None

    async def _unclaimed(self, state: RunState, refs: StreamRefs) -> list[tuple[str, bool]]:
        """(ts, shows a plan block) of the thread's bot messages without a run's metadata,
        not stored as one of this run's messages."""
        known = {ref[1] for kind in refs.kinds() if (ref := refs.ref(kind)) is not None}
        found: list[tuple[str, bool]] = []
        async for message in thread_replies(
            self._client, state.thread, refused_level=logging.WARNING
        ):
            ts = str(message.get("ts") or "")
            claimed = (message.get("metadata") or {}).get("event_type") == METADATA_EVENT
            if message.get("bot_id") and not claimed and ts not in known:
                blocks = message.get("blocks") or []
                plan = any(isinstance(b, dict) and b.get("type") == "plan" for b in blocks)
                found.append((ts, plan))
        return found

    async def _stop_bare(self, channel: str, ts: str, when: str) -> None:
        """A stop without blocks or metadata, best effort: Slack ends an idle stream itself."""
        try:
            await self._client.chat_stopStream(channel=channel, ts=ts)
        except Exception as exc:
            log.info("chat.stopStream %s: %s", when, slack_error(exc))

    async def _drop(
        self, state: RunState, refs: StreamRefs, channel: str, ts: str, why: str
    ) -> None:
        """Stop the stream if Slack still lets us, and hand the run to the messages."""
        log.warning(
            "the plan stream failed (%s): continuing with the plan message",
            why,
            extra={"run_id": state.run_id},
        )
        if ts:
            await self._stop_bare(channel, ts, "after a failure")
        await _note(refs, channel, ts, StreamStage.MESSAGE)
        self._shown.pop(state.run_id, None)


__all__ = [
    "STREAM",
    "Cover",
    "PlanDisplay",
    "PlanStreamer",
    "RefusalStore",
    "StreamChoices",
    "StreamRefs",
]
