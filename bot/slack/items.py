"""What a listener hands to the inbox and a processor gets back: one typed item per kind.

A listener turns Slack's request into one of these, and `stored` makes it an inbox row
(its payload is the item's fields, as rows have always held them; a click keeps Slack's
whole `block_actions` body). The intake reads a row back with `read_item`, so a processor
receives the same typed item — never a dict to pick apart again.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from agent.schemas import ThreadKey
from storage.inbox import InboxEntry, InboxItem


class InboxKind(StrEnum):
    """The inbox's `kind` column: which processor takes the row."""

    QUESTION = "question"
    """A mention, or a DM: start, follow up, or answer the thread's pause."""
    REPLY = "reply"
    """A thread reply: the answer to the thread's pause, when there is one."""
    ASSISTANT_QUESTION = "assistant_question"
    """A person's message in an assistant-pane thread."""
    THREAD_STARTED = "assistant_thread_started"
    """An assistant-pane thread opened: greet, suggest prompts."""
    CLICK = "click"
    """A button that changes a run (answers a pause, votes)."""
    MODIFY = "modify"
    """The Modify… / Edit… form submitted."""
    COMMAND = "command"
    """`/grace cancel` or `/grace retry`."""
    SESSION_STOPPED = "agent_session_stopped"
    """Someone clicked an agent session's Stop button: cancel the thread's run."""
    MESSAGES_OPENED = "messages_tab_opened"
    """Someone opened the app's Messages tab (`app_home_opened`, tab `messages`)."""


_SINCE_21 = frozenset({"team", "enterprise"})


class _Item(BaseModel):
    model_config = ConfigDict(frozen=True)

    def payload(self) -> dict[str, Any]:
        """The inbox row's payload: every field but the kind (a column of its own); the
        team fields added by issue 21 only when set, so rows keep their old shape."""
        values = self.model_dump(mode="json", exclude={"kind"})
        return {k: v for k, v in values.items() if not (k in _SINCE_21 and v is None)}


class InThread(_Item):
    """An item about one Slack thread."""

    team: str
    channel: str
    thread_ts: str
    enterprise: str | None = None
    """The team's Enterprise Grid org, when it is in one (issue 21)."""

    @property
    def key(self) -> ThreadKey:
        return ThreadKey(
            team_id=self.team,
            channel_id=self.channel,
            thread_ts=self.thread_ts,
            enterprise_id=self.enterprise,
        )

    @classmethod
    def fields_of(cls, key: ThreadKey) -> dict[str, str | None]:
        return {
            "team": key.team_id,
            "channel": key.channel_id,
            "thread_ts": key.thread_ts,
            "enterprise": key.enterprise_id,
        }


class _Message(InThread):
    """A person's message in a thread."""

    user: str
    text: str


class Question(_Message):
    kind: Literal[InboxKind.QUESTION] = InboxKind.QUESTION


class Reply(_Message):
    kind: Literal[InboxKind.REPLY] = InboxKind.REPLY


class AssistantQuestion(_Message):
    kind: Literal[InboxKind.ASSISTANT_QUESTION] = InboxKind.ASSISTANT_QUESTION


class ThreadStarted(InThread):
    kind: Literal[InboxKind.THREAD_STARTED] = InboxKind.THREAD_STARTED
    user: str = ""


class Click(_Item):
    """A button click: Slack's `block_actions` body, stored whole (as rows always were);
    `bot.slack.listeners.actions.ClickData` reads the parts a handler needs."""

    kind: Literal[InboxKind.CLICK] = InboxKind.CLICK
    body: dict[str, Any]

    def payload(self) -> dict[str, Any]:
        return self.body


class FromPerson(_Item):
    """An item one person sent that is not about one thread: who, and from which team."""

    user: str
    team: str | None = None
    """The sender's team (issue 21; None in rows stored before)."""
    enterprise: str | None = None


class ModifySubmission(FromPerson):
    kind: Literal[InboxKind.MODIFY] = InboxKind.MODIFY
    metadata: str
    """`blocks.ids.ModalMetadata`, encoded: which run and pause the form answers."""
    text: str


class Command(FromPerson):
    kind: Literal[InboxKind.COMMAND] = InboxKind.COMMAND
    sub: Literal["cancel", "retry"]
    run_id: str
    channel: str


class SessionStopped(InThread):
    """`agent_session_stopped`: who clicked Stop, and the streams Slack stopped."""

    kind: Literal[InboxKind.SESSION_STOPPED] = InboxKind.SESSION_STOPPED
    user: str
    streaming_message_ts: list[str] = Field(default_factory=list)


class MessagesOpened(FromPerson):
    """`app_home_opened` with `tab == "messages"`: a person opened their DM with the app."""

    kind: Literal[InboxKind.MESSAGES_OPENED] = InboxKind.MESSAGES_OPENED
    team: str  # a kind newer than issue 21: always stored with its team
    channel: str


InboundItem = Annotated[
    Question
    | Reply
    | AssistantQuestion
    | ThreadStarted
    | Click
    | ModifySubmission
    | Command
    | SessionStopped
    | MessagesOpened,
    Field(discriminator="kind"),
]
_ITEMS: TypeAdapter[InboundItem] = TypeAdapter(InboundItem)


def stored(item: InboundItem, *, event_id: str, message_key: str | None = None) -> InboxItem:
    """The inbox row for `item`, deduplicated on `event_id` (and `message_key`)."""
    return InboxItem(
        event_id=event_id, kind=item.kind, payload=item.payload(), message_key=message_key
    )


def read_item(entry: InboxEntry) -> InboundItem:
    """The typed item an inbox row holds (raises pydantic's `ValidationError` for a row
    that is not one: the intake counts it as a failed attempt)."""
    if entry.kind == InboxKind.CLICK:
        return Click(body=entry.payload)
    return _ITEMS.validate_python({**entry.payload, "kind": entry.kind})
