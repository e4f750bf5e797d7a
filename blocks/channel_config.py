"""The `/grace config` modal: one channel's settings, each field empty for "use the
global setting" (shown in its hint). Pure: values in, a `View` out; the listener
(`bot/slack/listeners/config.py`) reads the submission back by these block ids."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from slack_sdk.models.blocks import (
    Block,
    InputBlock,
    Option,
    PlainTextInputElement,
    PlainTextObject,
    StaticMultiSelectElement,
    StaticSelectElement,
    UserMultiSelectElement,
)
from slack_sdk.models.views import View

from blocks.common import context, safe, section
from blocks.limits import truncate

CONFIG_MODAL_CALLBACK = "grace_channel_config"
COLLECTIONS = "cfg_collections"
EXPERTS = "cfg_experts"
EXPERT_GROUPS = "cfg_expert_groups"
APPROVERS = "cfg_approvers"
SILENT = "cfg_silent"
NOTIFY = "cfg_notify"
CONFIRM = "cfg_confirm"
ANSWER_MODE = "cfg_answer_mode"
REPLY_MODE = "cfg_reply_mode"
FOLLOW_UPS = "cfg_follow_ups"


def action_id(block_id: str) -> str:
    """The action id of a block's one input (action ids are unique in a view)."""
    return f"{block_id}_value"


DEFAULT = "default"
"""A select's "use the global setting" option."""
MAX_OPTIONS = 100


@dataclass(frozen=True)
class ConfigForm:
    """What the modal shows: the channel's own values (None/empty = unset) and, for the
    hints, the global ones."""

    channel_id: str
    collections: Sequence[str] = ()
    known_collections: Sequence[str] = ()
    experts: Sequence[str] = ()
    approvers: Sequence[str] = ()
    thresholds: dict[str, float | None] = field(default_factory=dict)
    answer_mode: str | None = None
    reply_mode: str | None = None
    follow_ups: bool | None = None
    global_collection: str = ""
    global_thresholds: dict[str, float] = field(default_factory=dict)
    global_answer_mode: str = "mentions"
    global_reply_mode: str = "thread"
    global_follow_ups: bool = False


def _option(value: str, label: str) -> Option:
    return Option(value=value, text=PlainTextObject(text=truncate(label, 75)))


def _select(
    block_id: str, label: str, choices: list[tuple[str, str]], current: str | None, default: str
) -> InputBlock:
    options = [_option(DEFAULT, f"Default ({default})"), *(_option(v, t) for v, t in choices)]
    initial = next((o for o in options if o.value == (current or DEFAULT)), options[0])
    return InputBlock(
        block_id=block_id,
        label=PlainTextObject(text=label),
        element=StaticSelectElement(
            action_id=action_id(block_id), options=options, initial_option=initial
        ),
    )


def _text(block_id: str, label: str, initial: str, hint: str) -> InputBlock:
    return InputBlock(
        block_id=block_id,
        label=PlainTextObject(text=label),
        optional=True,
        hint=PlainTextObject(text=truncate(hint, 150)),
        element=PlainTextInputElement(action_id=action_id(block_id), initial_value=initial or None),
    )


def _users(block_id: str, label: str, users: Sequence[str], hint: str) -> InputBlock:
    return InputBlock(
        block_id=block_id,
        label=PlainTextObject(text=label),
        optional=True,
        hint=PlainTextObject(text=truncate(hint, 150)),
        element=UserMultiSelectElement(
            action_id=action_id(block_id), initial_users=list(users) or None
        ),
    )


def _collections(form: ConfigForm) -> InputBlock:
    hint = f"Empty: every collection (default {form.global_collection or 'the global one'})."
    known = list(dict.fromkeys([*form.known_collections, *form.collections]))[:MAX_OPTIONS]
    if not known:
        return _text(COLLECTIONS, "Collections searched", ", ".join(form.collections), hint)
    options = [_option(name, name) for name in known]
    chosen = [o for o in options if o.value in form.collections]
    return InputBlock(
        block_id=COLLECTIONS,
        label=PlainTextObject(text="Collections searched"),
        optional=True,
        hint=PlainTextObject(text=truncate(hint + " The first is the default.", 150)),
        element=StaticMultiSelectElement(
            action_id=action_id(COLLECTIONS), options=options, initial_options=chosen or None
        ),
    )


def config_modal(form: ConfigForm) -> View:
    """The modal for one channel; `private_metadata` is the channel id."""
    people = [e for e in form.experts if not e.startswith("S")]
    groups = [e for e in form.experts if e.startswith("S")]
    shown = form.global_thresholds
    blocks: list[Block] = [
        section(f"Settings for <#{safe(form.channel_id, 40)}>. Empty fields use the global ones."),
        _collections(form),
        _users(EXPERTS, "Experts", people, "Mentioned when GRACE needs a person's help."),
        _text(
            EXPERT_GROUPS,
            "Expert user groups",
            ", ".join(groups),
            "User-group ids (S…), comma-separated; mentioned as the group.",
        ),
        _users(
            APPROVERS, "Approvers", form.approvers, "Empty: the global approvers (GRACE_APPROVERS)."
        ),
    ]
    for block_id, name in ((SILENT, "silent"), (NOTIFY, "notify"), (CONFIRM, "confirm")):
        value = form.thresholds.get(name)
        default = shown.get(name)
        hint = f"0–1; empty: the shared value ({default:.2f})" if default is not None else "0–1"
        blocks.append(
            _text(block_id, f"Threshold: {name}", "" if value is None else f"{value:g}", hint)
        )
    blocks += [
        _select(
            ANSWER_MODE,
            "GRACE answers",
            [("mentions", "Only when mentioned"), ("all", "Every question in the channel")],
            form.answer_mode,
            form.global_answer_mode,
        ),
        _select(
            REPLY_MODE,
            "Answers go",
            [("thread", "In the thread"), ("ephemeral", "Only to the asker (ephemeral)")],
            form.reply_mode,
            form.global_reply_mode,
        ),
        _select(
            FOLLOW_UPS,
            "Follow-ups without a mention",
            [("on", "On: the asker's next message in the thread"), ("off", "Off")],
            None if form.follow_ups is None else ("on" if form.follow_ups else "off"),
            "on" if form.global_follow_ups else "off",
        ),
        context("Changes are recorded: who, what, when (`grace channel show`)."),
    ]
    return View(
        type="modal",
        callback_id=CONFIG_MODAL_CALLBACK,
        title=PlainTextObject(text="Channel settings"),
        submit=PlainTextObject(text="Save"),
        close=PlainTextObject(text="Cancel"),
        private_metadata=form.channel_id,
        blocks=blocks,
    )
