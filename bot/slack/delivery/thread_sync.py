"""One delivery pass over one run's messages (`ThreadSync`): what is stored for each of
them (channel, ts, digest of what it shows), the thread searched at most once for a
message posted without its ts being stored, and each message posted or edited only
when it is missing or shows something else."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Protocol

from agent.schemas import RunState
from bot.slack.delivery.web_api import digest_of

log = logging.getLogger(__name__)


class MessagePoster(Protocol):
    """The Web API calls a pass makes (`SlackPublisher` makes them)."""

    async def post_message(
        self, state: RunState, kind: str, blocks: list[dict[str, Any]] | None, text: str
    ) -> str | None: ...

    async def update_message(
        self, channel: str, ts: str, blocks: list[dict[str, Any]] | None, text: str, run_id: str
    ) -> bool: ...

    async def find_posted(self, state: RunState) -> dict[str, str]: ...


class RefStore(Protocol):
    async def set_message_ref(
        self, *, run_id: str, kind: str, channel_id: str, ts: str, digest: str | None = None
    ) -> None: ...


@dataclass
class ThreadSync:
    """One pass over one run's messages: what is stored, and the search done at most once."""

    publisher: MessagePoster
    store: RefStore
    state: RunState
    refs: dict[str, tuple[str, str, str | None]]
    """kind → (channel, ts, digest) of the run's messages, as stored."""
    suspect: bool
    """An earlier pass did not finish: a message may be in Slack without its ts stored."""
    found: dict[str, str] | None = field(default=None, init=False)
    """kind → ts of the run's messages found in the thread (searched once, when needed)."""

    def has(self, kind: str) -> bool:
        return kind in self.refs

    def kinds(self) -> list[str]:
        return list(self.refs)

    def ref(self, kind: str) -> tuple[str, str, str | None] | None:
        """(channel, ts, digest) of the run's `kind` message, as stored."""
        return self.refs.get(kind)

    async def remember(self, kind: str, channel: str, ts: str, digest: str | None) -> None:
        await self._remember(kind, (channel, ts, digest))

    async def posted(self) -> dict[str, str]:
        """kind → ts of the run's messages found in the thread by their metadata (one
        search per pass)."""
        if self.found is None:
            self.found = await self.publisher.find_posted(self.state)
        return self.found

    async def ensure(
        self, kind: str, blocks: list[dict[str, Any]] | None, text: str, *, edit: bool = False
    ) -> None:
        """The `kind` message exists (and, with `edit`, shows these blocks)."""
        state, publisher = self.state, self.publisher
        digest = digest_of(blocks or [], text)
        ref = self.refs.get(kind)
        if ref is None and self.suspect:
            ts = (await self.posted()).get(kind)
            if ts is not None:
                log.warning(
                    "found an earlier post in the thread; not posting it again",
                    extra={"run_id": state.run_id, "kind": kind},
                )
                ref = (state.thread.channel_id, ts, None)
                await self._remember(kind, ref)
        if ref is None:
            ts = await publisher.post_message(state, kind, blocks, text)
            if ts is not None:
                await self._remember(kind, (state.thread.channel_id, ts, digest))
            return
        channel, ts, shown = ref
        if edit and shown != digest:
            if await publisher.update_message(channel, ts, blocks, text, state.run_id):
                await self._remember(kind, (channel, ts, digest))

    async def _remember(self, kind: str, ref: tuple[str, str, str | None]) -> None:
        channel, ts, digest = ref
        await self.store.set_message_ref(
            run_id=self.state.run_id, kind=kind, channel_id=channel, ts=ts, digest=digest
        )
        self.refs[kind] = ref
