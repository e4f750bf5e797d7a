"""Action ids, callback ids and the codecs for what buttons and modals carry.

The Slack layer registers its listeners with these constants, so a button and the
handler it reaches can never drift apart. Values are compact JSON with short keys so
that they always stay under Slack's 2,000-character button value limit.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent.bounded_json import loads_bounded
from blocks.limits import MAX_BUTTON_VALUE, MAX_PRIVATE_METADATA

# --------------------------------------------------------------------------- action ids

PLAN_RUN = "grace_plan_run"
PLAN_EDIT = "grace_plan_edit"
PLAN_CANCEL = "grace_plan_cancel"

CONFIRM_PROCEED = "grace_confirm_proceed"
CONFIRM_MODIFY = "grace_confirm_modify"
CONFIRM_CANCEL = "grace_confirm_cancel"

ESCALATE_OPTION = "grace_escalate_option"
"""Prefix of the option buttons: each one's action id is `grace_escalate_option:<index>`."""
ESCALATE_OPTION_PATTERN = re.compile(r"^grace_escalate_option:(\d+)$")
"""Register the option listener with this: `app.action(ESCALATE_OPTION_PATTERN)`."""
ESCALATE_PROCEED = "grace_escalate_proceed"
ESCALATE_CANCEL = "grace_escalate_cancel"

FEEDBACK = "grace_feedback"
"""The `feedback_buttons` element: its value says which of 👍 / 👎 was clicked."""
FEEDBACK_UP = "grace_feedback_up"
FEEDBACK_DOWN = "grace_feedback_down"
"""Older messages' separate 👍 / 👎 buttons: still handled, no longer sent."""

DETAILS = "grace_details"
""""Details" beside a card's plain-words summary: opens the factors and numbers."""

SAVE_VERIFIED = "grace_save_verified"
"""Save as verified answer: an approver keeps an answer that rests on a person's reply."""

MODIFY_MODAL_CALLBACK = "grace_modify_modal"
MODIFY_INPUT_BLOCK = "grace_modify_input_block"
MODIFY_INPUT_ACTION = "grace_modify_input"

# Block ids, so that a handler (or a test) can find the interactive part of a message.
PLAN_ACTIONS_BLOCK = "grace_plan_actions"
CONFIRM_ACTIONS_BLOCK = "grace_confirm_actions"
ESCALATE_OPTIONS_BLOCK = "grace_escalate_options"
"""Prefix: option buttons sit in `grace_escalate_options:<n>` (25 buttons per block)."""
ESCALATE_ACTIONS_BLOCK = "grace_escalate_actions"
FEEDBACK_ACTIONS_BLOCK = "grace_feedback_actions"
VERIFY_ACTIONS_BLOCK = "grace_verify_actions"

ALL_BUTTON_ACTIONS: frozenset[str] = frozenset(
    {
        PLAN_RUN,
        PLAN_EDIT,
        PLAN_CANCEL,
        CONFIRM_PROCEED,
        CONFIRM_MODIFY,
        CONFIRM_CANCEL,
        ESCALATE_PROCEED,
        ESCALATE_CANCEL,
        FEEDBACK,
        FEEDBACK_UP,
        FEEDBACK_DOWN,
        DETAILS,
        SAVE_VERIFIED,
    }
)
"""Every fixed button action id (option buttons match `ESCALATE_OPTION_PATTERN`)."""


def option_action_id(index: int) -> str:
    """The action id of the option button for `options[index]`."""
    return f"{ESCALATE_OPTION}:{index}"


def parse_option_action_id(action_id: str) -> int | None:
    """The option index of an option button's action id, None for any other id."""
    match = ESCALATE_OPTION_PATTERN.match(action_id)
    return int(match.group(1)) if match else None


# --------------------------------------------------------------------------- codecs

_ID_MAX = 200  # far above real ids (12 hex chars), far below the 2,000-char value limit


_MAX_DEPTH = 2
"""A button value or modal metadata is one flat object: anything deeper is not ours."""


def _loads_object(raw: str, what: str, max_chars: int) -> dict[str, Any]:
    """A flat JSON object, bounded (`agent.bounded_json`): only `ValueError` escapes."""
    data = loads_bounded(raw, max_chars=max_chars, max_depth=_MAX_DEPTH, what=what)
    if not isinstance(data, dict):
        raise ValueError(f"{what} is not a JSON object: {raw[:80]!r}")
    return data


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err.get("loc", ())) or "value"
    return f"{where}: {err.get('msg', 'invalid')}"


class _CompactJson(BaseModel):
    """A small model carried through Slack as compact JSON with one-letter keys, and
    parsed back with a readable reason when what comes back is not one."""

    model_config = ConfigDict(populate_by_name=True, extra="forbid", frozen=True)

    _what: ClassVar[str]
    """What it is called in errors."""
    _max_chars: ClassVar[int]
    """Slack's limit on its length."""

    def encode(self) -> str:
        raw = self.model_dump_json(by_alias=True, exclude_none=True)
        if len(raw) > self._max_chars:  # unreachable given the field bounds; kept honest
            raise ValueError(f"{self._what} of {len(raw)} chars > {self._max_chars}")
        return raw

    @classmethod
    def decode(cls, raw: str) -> Self:
        """Parse one; `ValueError` with a readable reason on anything else."""
        data = _loads_object(raw, cls._what, cls._max_chars)
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise ValueError(f"invalid {cls._what} ({_first_error(exc)}): {raw[:80]!r}") from exc


class ButtonValue(_CompactJson):
    """What a GRACE button carries: which run and which pause it answers (and option),
    e.g. `{"r":"ab12","i":"cd34","o":2}`."""

    _what = "button value"
    _max_chars = MAX_BUTTON_VALUE

    run_id: str = Field(alias="r", min_length=1, max_length=_ID_MAX)
    intervention_id: str | None = Field(default=None, alias="i", min_length=1, max_length=_ID_MAX)
    option: int | None = Field(default=None, alias="o", ge=0, le=10_000, strict=True)
    helpful: bool | None = Field(default=None, alias="h", strict=True)
    """On a feedback button: True for 👍, False for 👎."""


class ModalMetadata(_CompactJson):
    """The modal's `private_metadata`: where the answer goes once the modal is submitted."""

    _what = "modal metadata"
    _max_chars = MAX_PRIVATE_METADATA

    run_id: str = Field(alias="r", min_length=1, max_length=_ID_MAX)
    intervention_id: str | None = Field(default=None, alias="i", min_length=1, max_length=_ID_MAX)
    channel: str = Field(alias="c", min_length=1, max_length=_ID_MAX)
    thread_ts: str = Field(alias="t", max_length=_ID_MAX)
