"""Slack's side of installing an app, faked (issue 21): the consent a person gives on
Slack's authorize page (`authorize` hands back the one-time code Slack would put in the
redirect), `oauth.v2.access` (code → tokens; with token rotation, refresh token →
new tokens), and which workspace each issued token belongs to, so `auth.test` and every
other call can be answered — or refused — per token.
"""

from __future__ import annotations

import base64
import secrets
import time
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

from bot.simulator.workspace import WorkspaceError


@dataclass(frozen=True)
class FakeTeam:
    """A workspace (or, `org_wide`, an Enterprise Grid org) that can install the app."""

    team_id: str | None
    name: str
    enterprise_id: str | None = None
    org_wide: bool = False
    bot_user_id: str = "U_GRACE_BOT"
    bot_id: str = "B_GRACE"

    @property
    def key(self) -> str:
        return self.team_id or self.enterprise_id or ""


@dataclass
class _Grant:
    team: FakeTeam
    user: str
    scopes: str


@dataclass
class _Token:
    team: FakeTeam
    expires_at: float | None  # time.time(); None: does not expire


@dataclass(eq=False)
class FakeOAuth:
    """The OAuth half of the fake Slack: codes, tokens, refresh tokens, revocation."""

    client_id: str = "111.222"
    client_secret: str = "fake-client-secret"
    _: KW_ONLY
    rotation: bool = False
    expires_in: int = 43200
    app_id: str = "A_GRACE"
    tokens: dict[str, _Token] = field(default_factory=dict, init=False)
    _codes: dict[str, _Grant] = field(default_factory=dict, init=False)
    _refresh: dict[str, FakeTeam] = field(default_factory=dict, init=False)

    # ------------------------------------------------------------------ Slack's pages

    def authorize(self, team: FakeTeam, *, user: str = "U_INSTALLER", scopes: str = "") -> str:
        """A person in `team` clicked Allow: the code Slack sends to the redirect URL."""
        code = f"code-{secrets.token_hex(8)}"
        self._codes[code] = _Grant(team=team, user=user, scopes=scopes)
        return code

    # ------------------------------------------------------------------ state for tests

    def team_of(self, token: str) -> FakeTeam | None:
        """The workspace a live token acts for (None: unknown, revoked or expired)."""
        issued = self.tokens.get(token)
        if issued is None:
            return None
        if issued.expires_at is not None and issued.expires_at <= time.time():
            return None
        return issued.team

    def token_error(self, token: str) -> str | None:
        """What Slack answers a call made with `token`: None when it is good."""
        issued = self.tokens.get(token)
        if issued is None:
            return "invalid_auth"
        if issued.expires_at is not None and issued.expires_at <= time.time():
            return "token_expired"
        return None

    def tokens_of(self, team: FakeTeam) -> list[str]:
        return [t for t, issued in self.tokens.items() if issued.team == team]

    def expire(self, team: FakeTeam) -> None:
        """Every token of `team` expires now (its refresh token still works)."""
        for issued in self.tokens.values():
            if issued.team == team:
                issued.expires_at = time.time() - 1

    def revoke(self, team: FakeTeam) -> None:
        """The app was uninstalled from `team`: its tokens stop working."""
        for token in self.tokens_of(team):
            del self.tokens[token]
        self._refresh = {r: t for r, t in self._refresh.items() if t != team}

    # ------------------------------------------------------------------ Web API

    def handlers(self) -> dict[str, Any]:
        return {"oauth.v2.access": self._access}

    def _client_ok(self, params: dict[str, Any], headers: dict[str, str]) -> bool:
        auth = headers.get("Authorization", "")
        if auth.startswith("Basic "):
            pair = base64.b64decode(auth.removeprefix("Basic ")).decode()
            client_id, _, secret = pair.partition(":")
        else:
            client_id = str(params.get("client_id", ""))
            secret = str(params.get("client_secret", ""))
        return (client_id, secret) == (self.client_id, self.client_secret)

    def _access(self, params: dict[str, Any], call: Any) -> dict[str, Any]:
        if not self._client_ok(params, call.headers):
            raise WorkspaceError("invalid_client_id")
        if params.get("grant_type") == "refresh_token":
            team = self._refresh.pop(str(params.get("refresh_token", "")), None)
            if team is None:
                raise WorkspaceError("invalid_refresh_token")
            return self._issue(team)
        grant = self._codes.pop(str(params.get("code", "")), None)  # single use
        if grant is None:
            raise WorkspaceError("invalid_code")
        team = grant.team
        answer = self._issue(team)
        answer.update(
            {
                "app_id": self.app_id,
                "scope": grant.scopes or "chat:write,commands",
                "bot_user_id": team.bot_user_id,
                "team": {"id": team.team_id, "name": team.name} if team.team_id else None,
                "enterprise": (
                    {"id": team.enterprise_id, "name": f"{team.name} org"}
                    if team.enterprise_id
                    else None
                ),
                "is_enterprise_install": team.org_wide,
                "authed_user": {"id": grant.user},
            }
        )
        return answer

    def _issue(self, team: FakeTeam) -> dict[str, Any]:
        token = f"xoxb-{team.key}-{secrets.token_hex(6)}"
        if not self.rotation:
            self.tokens[token] = _Token(team=team, expires_at=None)
            return {"access_token": token, "token_type": "bot"}
        self.tokens[token] = _Token(team=team, expires_at=time.time() + self.expires_in)
        refresh = f"xoxe-1-{secrets.token_hex(8)}"
        self._refresh[refresh] = team
        return {
            "access_token": token,
            "token_type": "bot",
            "refresh_token": refresh,
            "expires_in": self.expires_in,
        }

    def auth_test(self, token: str) -> dict[str, Any] | None:
        """`auth.test` for an issued token (None: not one of ours)."""
        team = self.team_of(token)
        if team is None:
            return None
        return {
            "url": f"https://{team.key.lower()}.fake-slack.local/",
            "team": team.name,
            "user": "grace",
            "team_id": team.team_id,
            "enterprise_id": team.enterprise_id,
            "user_id": team.bot_user_id,
            "bot_id": team.bot_id,
            "app_id": self.app_id,
            "is_enterprise_install": team.org_wide,
        }
