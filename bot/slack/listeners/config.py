"""`/grace config`: the channel-settings modal, and its submission.

Who may change a channel's settings: workspace admins and owners (`users.info`), and the
people the channel's settings name (its experts and approvers). Both the opening and the
submission check it — a submission is a request anyone could send. In OAuth mode both
read and change the settings of the workspace the request came from (the acting team):
another team's settings for the same channel id are never shown or touched, and a
collection the operator does not allow this team is refused. The modal opens
after the ack (a tracked task: `users.info`, then `views.open` within the trigger's 3 s);
a submission is checked and stored before its ack, so a refusal or a bad value shows in
the form itself. A saved change publishes the saver's Home tab again (an admin's lists the
channels' settings)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from agent.errors import GraceError
from blocks import channel_config as cfg
from bot.service.channels import ChannelService, parse_ids
from bot.slack.acting import acting_team_id
from bot.slack.deps import BotDeps
from storage.channel_settings import ChannelSettings, ChannelUpdate

log = logging.getLogger(__name__)

NOT_ALLOWED = (
    "Only workspace admins, and the experts and approvers this channel's settings name, "
    "can change them."
)
NO_SETTINGS = "Channel settings are not available here."


async def is_admin(client: AsyncWebClient, user: str) -> bool:
    """A workspace admin or owner, as `users.info` says; False when Slack cannot tell."""
    try:
        response = await client.users_info(user=user)
    except Exception as exc:  # no answer is no permission
        log.warning("users.info failed; treating the user as no admin: %s", exc)
        return False
    info = response.get("user") or {}
    return bool(info.get("is_admin") or info.get("is_owner") or info.get("is_primary_owner"))


async def may_change(
    channels: ChannelService, client: AsyncWebClient, own: ChannelSettings, user: str
) -> bool:
    return channels.named(own, user) or await is_admin(client, user)


async def config_form(deps: BotDeps, own: ChannelSettings) -> cfg.ConfigForm:
    """What the modal shows for `own`: its values, the known collections, the defaults."""
    try:
        known = await deps.orchestrator.knowledge_base.collections()
    except GraceError:
        known = []
    settings = deps.settings
    own_collections = own.collections or []
    default_collection = settings.knowledge.collection
    allowed = deps.channels.team_collections(own.team_id) if deps.channels else None
    if deps.channels and allowed is not None:  # a limited team is shown only its own
        known = [name for name in known if name in allowed]
        own_collections = [name for name in own_collections if name in allowed]
        unset = own.model_copy(update={"collections": None})
        default_collection = deps.channels.resolve(unset).collections[0]
    shared = deps.orchestrator.thresholds
    resolved = (
        deps.channels.resolve(own.model_copy(update={"follow_ups": None}))
        if deps.channels
        else None
    )
    return cfg.ConfigForm(
        channel_id=own.channel_id,
        collections=own_collections,
        known_collections=sorted(known),
        experts=own.experts or [],
        approvers=own.approvers or [],
        thresholds={"silent": own.silent, "notify": own.notify, "confirm": own.confirm},
        answer_mode=own.answer_mode,
        reply_mode=own.reply_mode,
        follow_ups=own.follow_ups,
        global_collection=default_collection,
        global_thresholds={
            "silent": shared.silent,
            "notify": shared.notify,
            "confirm": shared.confirm,
        },
        global_answer_mode=settings.slack.answer_mode,
        global_reply_mode=settings.slack.reply_mode,
        global_follow_ups=resolved.follow_ups if resolved else False,
    )


async def open_config(
    deps: BotDeps, client: AsyncWebClient, *, channel: str, user: str, trigger_id: str
) -> None:
    """After `/grace config`'s ack: the modal, or a refusal the person alone sees."""
    if deps.channels is None:
        await deps.publisher.ephemeral(channel, user, NO_SETTINGS)
        return
    own = await deps.channels.get(channel, team_id=acting_team_id())
    if not await may_change(deps.channels, client, own, user):
        await deps.publisher.ephemeral(channel, user, NOT_ALLOWED)
        return
    view = cfg.config_modal(await config_form(deps, own))
    try:
        await client.views_open(trigger_id=trigger_id, view=view)
    except Exception as exc:
        log.error("views.open failed for /grace config: %s", exc)
        await deps.publisher.ephemeral(channel, user, "I could not open the settings; try again.")


# ---------------------------------------------------------------------- the submission


def _input(view: dict[str, Any], block_id: str) -> dict[str, Any]:
    values = ((view.get("state") or {}).get("values") or {}).get(block_id) or {}
    found = values.get(cfg.action_id(block_id))
    return found if isinstance(found, dict) else {}


def _text(view: dict[str, Any], block_id: str) -> str:
    return str(_input(view, block_id).get("value") or "").strip()


def _listed(view: dict[str, Any], block_id: str) -> list[str]:
    """A multi-select's choices, or a text input's comma-separated items."""
    state = _input(view, block_id)
    if isinstance(state.get("selected_users"), list):
        return [str(u) for u in state["selected_users"]]
    if isinstance(state.get("selected_options"), list):
        return [str(o.get("value")) for o in state["selected_options"] if isinstance(o, dict)]
    return [p.strip() for p in str(state.get("value") or "").split(",") if p.strip()]


def _choice(view: dict[str, Any], block_id: str) -> str | None:
    state = _input(view, block_id)
    option = state.get("selected_option")
    value = option.get("value") if isinstance(option, dict) else state.get("value")
    return None if value in (None, "", cfg.DEFAULT) else str(value)


def read_update(view: dict[str, Any]) -> ChannelUpdate | dict[str, str]:
    """The submitted form as a whole update (an empty field unsets), or the errors by
    block id."""
    errors: dict[str, str] = {}
    fields: dict[str, Any] = {}
    collections = _listed(view, cfg.COLLECTIONS)
    fields["collections"] = collections or None
    try:
        people = parse_ids(_listed(view, cfg.EXPERTS), groups=False, what="Experts")
        groups = parse_ids(_listed(view, cfg.EXPERT_GROUPS), groups=True, what="User groups")
        experts = [*people, *groups]
        fields["experts"] = experts or None
    except GraceError as exc:
        errors[cfg.EXPERT_GROUPS] = exc.message
    try:
        approvers = parse_ids(_listed(view, cfg.APPROVERS), groups=False, what="Approvers")
        fields["approvers"] = approvers or None
    except GraceError as exc:
        errors[cfg.APPROVERS] = exc.message
    for block_id, name in (
        (cfg.SILENT, "silent"),
        (cfg.NOTIFY, "notify"),
        (cfg.CONFIRM, "confirm"),
    ):
        raw = _text(view, block_id)
        if not raw:
            fields[name] = None
            continue
        try:
            value = float(raw)
        except ValueError:
            errors[block_id] = "A number from 0 to 1, or empty."
            continue
        if not 0 <= value <= 1:
            errors[block_id] = "A number from 0 to 1, or empty."
            continue
        fields[name] = value
    fields["answer_mode"] = _choice(view, cfg.ANSWER_MODE)
    fields["reply_mode"] = _choice(view, cfg.REPLY_MODE)
    follow = _choice(view, cfg.FOLLOW_UPS)
    fields["follow_ups"] = None if follow is None else follow == "on"
    if fields["answer_mode"] not in (None, "mentions", "all"):
        errors[cfg.ANSWER_MODE] = "Choose one of the options."
    if fields["reply_mode"] not in (None, "thread", "ephemeral"):
        errors[cfg.REPLY_MODE] = "Choose one of the options."
    if errors:
        return errors
    return ChannelUpdate(**fields)


async def submit_config(
    deps: BotDeps,
    client: AsyncWebClient,
    ack: Callable[..., Awaitable[None]],
    body: dict[str, Any],
    view: dict[str, Any],
) -> None:
    user = str((body.get("user") or {}).get("id", ""))
    channel = str(view.get("private_metadata") or "")
    if deps.channels is None or not channel:
        await ack(response_action="errors", errors={cfg.COLLECTIONS: NO_SETTINGS})
        return
    update = read_update(view)
    if isinstance(update, dict):
        await ack(response_action="errors", errors=update)
        return
    team = acting_team_id()
    own = await deps.channels.get(channel, team_id=team)
    if not await may_change(deps.channels, client, own, user):
        await ack(response_action="errors", errors={cfg.COLLECTIONS: NOT_ALLOWED})
        return
    try:
        deps.channels.check_collections(update.collections or [], team_id=team)
        for name in update.collections or []:
            await deps.orchestrator.validate_collection(name)
    except GraceError as exc:
        await ack(response_action="errors", errors={cfg.COLLECTIONS: exc.message[:150]})
        return
    try:
        await deps.channels.update(channel, update, changed_by=user, team_id=team)
    except GraceError as exc:
        await ack(response_action="errors", errors={cfg.SILENT: exc.message[:150]})
        return
    await ack()
    deps.tasks.spawn(
        deps.publisher.ephemeral(channel, user, f"Saved the settings of <#{channel}>."),
        name=f"config saved {channel}",
    )
    if deps.home is not None:  # their Home tab lists the channel's settings as now saved
        deps.tasks.spawn(deps.home.opened(user), name=f"config saved home {user}")


UNAVAILABLE = (
    "Could not save the settings just now (Slack or the database did not answer). Try again."
)


def register(app: AsyncApp, deps: BotDeps) -> None:
    @app.view(cfg.CONFIG_MODAL_CALLBACK)
    async def handle_config(ack: AsyncAck, body: dict[str, Any], view: dict[str, Any]) -> None:
        acked = False

        async def ack_once(**answer: Any) -> None:
            nonlocal acked
            acked = True
            await ack(**answer)

        try:
            await submit_config(deps, app.client, ack_once, body, view)
        except Exception:  # the database or Slack: the person is told, the modal stays
            log.exception("saving a channel's settings failed")
            if not acked:
                await ack(response_action="errors", errors={cfg.COLLECTIONS: UNAVAILABLE})
