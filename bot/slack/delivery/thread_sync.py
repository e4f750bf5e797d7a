"""One delivery pass over one run's messages (`ThreadSync`): what is stored for each of
them (channel, ts, digest of what it shows), the thread searched at most once for a
message posted without its ts being stored, and each message posted or edited only
when it is missing or shows something else."""

from __future__ import annotations

import logging
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


class ThreadSync:
    """One pass over one run's messages: what is stored, and the search done at most once."""

    def __init__(
        self,
        publisher: MessagePoster,
        store: RefStore,
        state: RunState,
        refs: dict[str, tuple[str, str, str | None]],
        suspect: bool,
    ) -> None:
        self._publisher = publisher
        self._store = store
        self._state = state
        self._refs = refs
        self._suspect = suspect
        self._found: dict[str, str] | None = None

    def has(self, kind: str) -> bool:
        return kind in self._refs

    def kinds(self) -> list[str]:
        return list(self._refs)

    def ref(self, kind: str) -> tuple[str, str, str | None] | None:
        """(channel, ts, digest) of the run's `kind` message, as stored."""
        return self._refs.get(kind)

    async def remember(self, kind: str, channel: str, ts: str, digest: str | None) -> None:
        await self._remember(kind, (channel, ts, digest))

    async def posted(self) -> dict[str, str]:
        """kind → ts of the run's messages found in the thread by their metadata (one
        search per pass)."""
        if self._found is None:
            self._found = await self._publisher.find_posted(self._state)
        return self._found

    async def ensure(
        self, kind: str, blocks: list[dict[str, Any]] | None, text: str, *, edit: bool = False
    ) -> None:
        """The `kind` message exists (and, with `edit`, shows these blocks)."""
        state, publisher = self._state, self._publisher
        digest = digest_of(blocks or [], text)
        ref = self._refs.get(kind)
        if ref is None and self._suspect:
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
        await self._store.set_message_ref(
            run_id=self._state.run_id, kind=kind, channel_id=channel, ts=ts, digest=digest
        )
        self._refs[kind] = ref
