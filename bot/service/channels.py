"""Channel settings as the rest of GRACE uses them: read, changed (checked and
recorded), and resolved against the global settings — a field a channel leaves unset
falls back to `Settings`. `EffectiveChannel.policy()` is what a run asked in the channel
hands the agent (`agent.policy.RunPolicy`); the agent never sees a channel.

The bot, `grace channel` and the App Home read through `ChannelService`;
storage/channel_settings.py is where the rows are.

In OAuth mode (many workspaces) settings are kept per team: every read and change names
the team it is for, and a team's settings are never another's, even for the same
channel id. A team may also be limited to some collections
(`GRACE_SLACK__TEAM_COLLECTIONS`): its channels' collections are cut down to those.
In single-workspace mode there is one set of settings (team ""), whatever team is
named."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from agent.config import Thresholds
from agent.errors import InvalidInputError
from agent.policy import RunPolicy
from bot.service.settings import Settings
from storage.channel_settings import (
    AnswerMode,
    ChannelSettingChange,
    ChannelSettings,
    ChannelUpdate,
    ReplyMode,
    SqlChannelSettings,
)

_PERSON = re.compile(r"^[UW][A-Z0-9]+$")
_GROUP = re.compile(r"^S[A-Z0-9]+$")
_WRAPPED = re.compile(r"^<(?:@|!subteam\^)([A-Z0-9]+)(?:\|[^>]*)?>$")


def parse_ids(raw: str | Iterable[str], *, groups: bool, what: str) -> list[str]:
    """Slack ids from `U1,U2` (or `<@U1>`, `<!subteam^S1|name>`), deduplicated in order.
    User groups (S…) only where `groups`; anything else — `@channel`, names — is refused."""
    items = raw.split(",") if isinstance(raw, str) else list(raw)
    found: list[str] = []
    for item in (i.strip() for i in items):
        if not item:
            continue
        wrapped = _WRAPPED.match(item)
        ident = wrapped.group(1) if wrapped else item
        if _PERSON.match(ident) or (groups and _GROUP.match(ident)):
            found.append(ident)
            continue
        kinds = "user ids (U…) or user-group ids (S…)" if groups else "user ids (U…)"
        raise InvalidInputError(f"{what}: {item!r} is not one of {kinds}.")
    return list(dict.fromkeys(found))


def is_dm(channel_id: str) -> bool:
    return channel_id.startswith("D")


@dataclass(frozen=True)
class EffectiveChannel:
    """A channel's settings with the global ones filled in where it sets none."""

    own: ChannelSettings
    collections: list[str]
    """Searched by its runs (the first is the default); empty: every collection."""
    experts: list[str]
    approvers: list[str]
    thresholds: Thresholds | None
    """The channel's thresholds; None: the shared ones (which feedback moves)."""
    answer_mode: AnswerMode
    reply_mode: ReplyMode
    follow_ups: bool
    approvers_own: bool = field(default=False)
    """True when the channel names its own approvers (they replace the global ones)."""
    team_limited: bool = field(default=False)
    """True when the operator limits the channel's team to some collections: then
    `collections` are those of them the channel may search (never empty)."""

    def policy(self) -> RunPolicy:
        """What a run asked here hands the agent."""
        return RunPolicy(
            collections=self.collections,
            approvers=self.approvers if self.approvers_own else None,
            experts=self.experts,
            thresholds=self.thresholds,
        )


class ChannelService:
    """Get, change, list and resolve channel settings. Resolved settings are cached for
    `cache_seconds` (the listener that decides whether a channel message is a question
    reads them before the ack: one query per channel and period, not per message)."""

    def __init__(
        self,
        store: SqlChannelSettings,
        settings: Settings,
        *,
        shared_thresholds: Callable[[], Thresholds] | None = None,
        cache_seconds: float | None = None,
    ) -> None:
        self.store = store
        self.settings = settings
        self._shared = shared_thresholds or (lambda: settings.confidence.thresholds)
        self._ttl = (
            settings.slack.channel_settings_cache_seconds
            if cache_seconds is None
            else cache_seconds
        )
        self._cache: dict[tuple[str, str], tuple[float, EffectiveChannel]] = {}
        self.per_team = settings.oauth_mode

    def team_key(self, team_id: str | None) -> str:
        """Whose settings a request for `team_id` reads: that team's in OAuth mode (none
        when no team is known: the defaults), the one set "" in single-workspace mode."""
        return (team_id or "") if self.per_team else ""

    def team_collections(self, team_id: str | None) -> list[str] | None:
        """The collections the operator limits `team_id` to; None: every collection."""
        key = self.team_key(team_id)
        if not key:
            return None
        names = self.settings.slack.team_collections.get(key)
        return list(names) if names is not None else None

    def check_collections(self, names: Iterable[str], *, team_id: str | None) -> None:
        """Raises `InvalidInputError` when the team may not search one of `names`."""
        allowed = self.team_collections(team_id)
        if allowed is None:
            return
        refused = [n for n in names if n not in allowed]
        if refused:
            raise InvalidInputError(
                f"This workspace may not search {', '.join(refused)}: the operator limits "
                f"it to {', '.join(allowed)}."
            )

    async def get(self, channel_id: str, *, team_id: str | None = "") -> ChannelSettings:
        """The channel's own settings (all None when it has none)."""
        team = self.team_key(team_id)
        own = await self.store.get(channel_id, team_id=team)
        return own or ChannelSettings(team_id=team, channel_id=channel_id)

    async def all_channels(self, *, team_id: str | None = None) -> list[ChannelSettings]:
        """Every channel with settings of its own (of one workspace with `team_id`; of
        every workspace with None — the operator's view)."""
        return await self.store.all_channels(
            team_id=None if team_id is None else self.team_key(team_id)
        )

    async def team_channels(self, team_id: str | None) -> list[ChannelSettings]:
        """The channels `team_id` gave settings of their own (in single-workspace mode,
        every one): what a workspace's own people may be shown."""
        return await self.store.all_channels(team_id=self.team_key(team_id))

    async def history(
        self, channel_id: str, *, team_id: str | None = "", limit: int = 20
    ) -> list[ChannelSettingChange]:
        return await self.store.history(channel_id, team_id=self.team_key(team_id), limit=limit)

    async def update(
        self,
        channel_id: str,
        update: ChannelUpdate,
        *,
        changed_by: str,
        team_id: str | None = "",
    ) -> ChannelSettings:
        """Check and store a change (and its record). Raises `InvalidInputError` for
        ids that are not Slack's, collections the team may not search, or thresholds
        out of order once merged."""
        team_id = self.team_key(team_id)
        changes = update.changes()
        for name, groups in (("experts", True), ("approvers", False)):
            if changes.get(name) is not None:
                changes[name] = parse_ids(changes[name], groups=groups, what=name)
        if changes.get("collections") is not None:
            changes["collections"] = [c.strip() for c in changes["collections"] if c.strip()]
            self.check_collections(changes["collections"], team_id=team_id)
        checked = ChannelUpdate(**changes)
        current = await self.get(channel_id, team_id=team_id)
        merged = current.model_copy(update=checked.changes())
        self._thresholds(merged)  # raises when out of order
        saved = await self.store.update(channel_id, checked, changed_by=changed_by, team_id=team_id)
        self._cache.pop((team_id, channel_id), None)
        return saved

    def _thresholds(self, own: ChannelSettings) -> Thresholds | None:
        if own.silent is None and own.notify is None and own.confirm is None:
            return None
        shared = self._shared()
        try:
            return Thresholds(
                silent=shared.silent if own.silent is None else own.silent,
                notify=shared.notify if own.notify is None else own.notify,
                confirm=shared.confirm if own.confirm is None else own.confirm,
            )
        except ValueError as exc:
            raise InvalidInputError(
                "Thresholds must satisfy silent ≥ notify ≥ confirm (with the global "
                f"values for those the channel does not set): {exc.errors()[0]['msg']}"
            ) from exc

    def resolve(self, own: ChannelSettings) -> EffectiveChannel:
        """`own` with the global settings filled in."""
        slack = self.settings.slack
        follow = slack.follow_ups == "everywhere" or (
            slack.follow_ups == "dms" and is_dm(own.channel_id)
        )
        try:
            thresholds = self._thresholds(own)
        except InvalidInputError:
            thresholds = None  # the shared ones moved past the channel's: use theirs
        limit = self.team_collections(own.team_id)
        return EffectiveChannel(
            own=own,
            collections=self._collections(own.collections or [], limit),
            team_limited=limit is not None,
            experts=list(own.experts if own.experts is not None else slack.experts),
            approvers=list(own.approvers if own.approvers is not None else self.settings.approvers),
            approvers_own=own.approvers is not None,
            thresholds=thresholds,
            answer_mode=own.answer_mode or slack.answer_mode,
            reply_mode=own.reply_mode or slack.reply_mode,
            follow_ups=own.follow_ups if own.follow_ups is not None else follow,
        )

    def _collections(self, own: list[str], limit: list[str] | None) -> list[str]:
        """The channel's collections, cut down to its team's (a collection the team may
        not search is ignored); a limited team's channel with none left searches the
        team's — the global default collection first, when the team may search it."""
        if limit is None:
            return list(own)
        kept = [name for name in own if name in limit]
        if kept:
            return kept
        default = self.settings.knowledge.collection
        return sorted(limit, key=lambda name: name != default)

    async def effective(self, channel_id: str, *, team_id: str | None = "") -> EffectiveChannel:
        """The channel's resolved settings (cached for `cache_seconds`)."""
        team_id = self.team_key(team_id)
        key, now = (team_id, channel_id), time.monotonic()
        cached = self._cache.get(key)
        if cached is not None and cached[0] > now:
            return cached[1]
        resolved = self.resolve(await self.get(channel_id, team_id=team_id))
        if self._ttl > 0:
            self._cache[key] = (now + self._ttl, resolved)
        return resolved

    async def reply_mode(self, channel_id: str, *, team_id: str | None = "") -> str:
        """Where the channel's answers go: `thread` or `ephemeral`."""
        return (await self.effective(channel_id, team_id=team_id)).reply_mode

    def named(self, own: ChannelSettings, user: str) -> bool:
        """Whether the channel's own settings name `user` (as expert or approver): they
        may change them, as may workspace admins."""
        return user in (own.experts or []) or user in (own.approvers or [])
