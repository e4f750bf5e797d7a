"""How far a run's plan stream has got: one small record, kept in the run's `stream`
message ref so a restart resumes from it (`bot.slack.delivery.plan_stream`).

It is stored as the short token rows have always held — `starting`,
`o:<digest of the tasks shown>`, `a:<digest>` (the stop carrying the answer sent),
`A:<digest>` (the answer appended, the stop pending: written by older versions), `done`,
`plan-done`, `paused`, `text-done`, `message` — so rows written before this record
existed read back unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class StreamStage(StrEnum):
    STARTING = "starting"
    """`chat.startStream` sent; its outcome not known yet (if it stays so: look for the
    stream in the thread)."""
    OPEN = "open"
    """The stream shows the plan (`digest`: of the title and tasks shown)."""
    ANSWERING = "answering"
    """`chat.stopStream` with the answer and its footer sent (`digest`: of the answer);
    unfinished: send the same stop again — a stop that went through is refused then."""
    ANSWERED = "answered"
    """The whole answer is in the stream; stopping it is what is left (older versions
    appended the answer before the stop)."""
    DONE = "done"
    """Stopped with the answer and its footer."""
    PLAN_DONE = "plan-done"
    """Stopped without the answer: after a pause the answer is a message below it."""
    PAUSED = "paused"
    """Stopped when the run paused for a person (the pause is a message below it): once
    the run goes on, the edited plan message below the pause shows its progress."""
    TEXT_DONE = "text-done"
    """The answer's text is in the stream but Slack refused to end it with its footer:
    the footer alone is a message below it."""
    MESSAGE = "message"
    """This run uses the edited plan message instead."""


_PREFIXES = {
    StreamStage.OPEN: "o:",
    StreamStage.ANSWERING: "a:",
    StreamStage.ANSWERED: "A:",
}
"""The stages stored with a digest, and their stored prefix (case matters: `a:`/`A:`)."""


@dataclass(frozen=True)
class StreamProgress:
    stage: StreamStage
    digest: str = ""
    """What the stream shows, for the stages that carry one (see `_PREFIXES`)."""

    def token(self) -> str:
        """The stored form."""
        prefix = _PREFIXES.get(self.stage)
        return self.stage.value if prefix is None else prefix + self.digest

    @classmethod
    def parse(cls, token: str | None) -> StreamProgress:
        """The record a stored token holds. A token of no known form counts as the
        answer appended (the stop is what is left), as it always has."""
        token = token or ""
        for stage, prefix in _PREFIXES.items():
            if token.startswith(prefix):
                return cls(stage, token[len(prefix) :])
        stage = StreamStage._value2member_map_.get(token)
        if not isinstance(stage, StreamStage) or stage in _PREFIXES:
            return cls(StreamStage.ANSWERED)
        return cls(stage)
