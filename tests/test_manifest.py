"""manifest.yml: valid against Slack's official manifest schema (v1), in both the HTTP and
the Socket Mode variant, and in step with what the bot's listeners and Web API calls need.

The schema comes from `../shared/reference/` (beside the repository) when it is there,
else from the copy vendored in `tests/data/`, so a fresh clone validates too. With
neither, the tests fail: they never skip.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft7Validator

REPO = Path(__file__).resolve().parents[1]
SCHEMA_NAME = "slack-manifest.schema.1.0.0.json"
SHARED_SCHEMA = REPO.parent / "shared" / "reference" / SCHEMA_NAME
VENDORED_SCHEMA = REPO / "tests" / "data" / SCHEMA_NAME
MANIFEST = REPO / "manifest.yml"
LISTENERS = REPO / "bot" / "slack" / "listeners"
EVENTS_PATH = "/slack/events"

# Events the listeners subscribe to → (bot events in the manifest, bot scopes they need).
EVENT_NEEDS: dict[str, tuple[set[str], set[str]]] = {
    "app_mention": ({"app_mention"}, {"app_mentions:read"}),
    "message": (
        {"message.channels", "message.groups", "message.im"},
        {"channels:history", "groups:history", "im:history"},
    ),
    # Bolt's AsyncAssistant listeners (`@assistant.<name>`), as "assistant.<name>"
    "assistant.thread_started": ({"assistant_thread_started"}, {"assistant:write"}),
    "assistant.thread_context_changed": (
        {"assistant_thread_context_changed"},
        {"assistant:write"},
    ),
    "assistant.user_message": ({"message.im"}, {"im:history"}),
    # OAuth mode forgets a workspace's tokens when it uninstalls (issue 21); no scope needed
    "app_uninstalled": ({"app_uninstalled"}, set()),
    "tokens_revoked": ({"tokens_revoked"}, set()),
    "assistant.bot_message": ({"message.im"}, {"im:history"}),
    # the Agent messaging experience (bot/slack/listeners/agent_view.py)
    "agent_session_stopped": ({"agent_session_stopped"}, {"assistant:write"}),
    "app_home_opened": ({"app_home_opened"}, set()),
}
# Web API methods the bot calls → the bot scopes they need.
METHOD_SCOPES: dict[str, set[str]] = {
    "auth_test": set(),
    "chat_postMessage": {"chat:write"},
    "chat_update": {"chat:write"},
    "chat_postEphemeral": {"chat:write"},
    "chat_delete": {"chat:write"},
    "chat_startStream": {"chat:write"},  # the streamed plan (bot/slack/delivery/plan_stream.py)
    "chat_appendStream": {"chat:write"},
    "chat_stopStream": {"chat:write"},
    "chat_getPermalink": set(),
    "views_open": set(),
    "views_update": set(),
    "views_push": set(),
    "views_publish": set(),
    "conversations_replies": {"channels:history", "groups:history", "im:history"},
    "conversations_history": {"channels:history", "groups:history", "im:history"},
    "conversations_open": {"im:write"},
    # who may read a run (bot/slack/access.py): the run's channel's members
    "conversations_members": {"channels:read", "groups:read", "im:read"},
    # which runs a Home tab may list (bot/slack/home/reach.py): the channel's kind
    "conversations_info": {"channels:read", "groups:read", "im:read"},
    "reactions_add": {"reactions:write"},
    "users_info": {"users:read"},
    # experts named as a user group may answer their escalation (bot/slack/access.py)
    "usergroups_users_list": {"usergroups:read"},
    "assistant_threads_setStatus": {"assistant:write"},
    "assistant_threads_setTitle": {"assistant:write"},
    "assistant_threads_setSuggestedPrompts": {"assistant:write"},
    # agent sessions (bot/slack/delivery/sessions.py): "a token bearing chat:write"
    "agents_sessions_setStatus": {"chat:write"},
    "agents_sessions_rename": {"chat:write"},
}

_EVENT_RE = re.compile(r"@app\.event\(\s*[\"']([^\"']+)[\"']")
_COMMAND_RE = re.compile(r"@app\.command\(\s*[\"']([^\"']+)[\"']")
_INTERACTIVE_RE = re.compile(r"@app\.(?:action|view|shortcut|options|block_action)\(")
_ASSISTANT_RE = re.compile(r"@assistant\.([a-z_]+)\b")
_METHOD_RE = re.compile(r"\b_?client\.([a-z]+(?:_[A-Za-z]+)+)\(")
_API_CALL_RE = re.compile(r"\bapi_call\(\s*[\"']([a-z]+(?:\.[A-Za-z]+)+)[\"']")


# --------------------------------------------------------------------------- helpers


def schema_path(shared: Path = SHARED_SCHEMA, vendored: Path = VENDORED_SCHEMA) -> Path:
    """The shared schema, else the vendored copy; a clear failure when neither exists."""
    for path in (shared, vendored):
        if path.is_file():
            return path
    pytest.fail(
        f"Slack's manifest schema is missing: looked for {shared} and {vendored}. "
        f"Restore tests/data/{SCHEMA_NAME} (Slack's official app manifest JSON schema v1)."
    )


def load_schema() -> dict[str, Any]:
    schema = json.loads(schema_path().read_text(encoding="utf-8"))
    Draft7Validator.check_schema(schema)
    return schema


def load_manifest() -> dict[str, Any]:
    data = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))
    assert isinstance(data, dict), "manifest.yml must be a YAML mapping"
    return data


def schema_errors(manifest: dict[str, Any]) -> list[str]:
    validator = Draft7Validator(load_schema())
    return [
        f"{'/'.join(str(p) for p in error.absolute_path) or '<root>'}: {error.message}"
        for error in sorted(validator.iter_errors(manifest), key=lambda e: list(e.path))
    ]


def socket_mode_variant(manifest: dict[str, Any]) -> dict[str, Any]:
    """What the manifest's header comment tells Socket Mode users to do."""
    variant = copy.deepcopy(manifest)
    variant["settings"]["socket_mode_enabled"] = True
    variant["settings"]["event_subscriptions"].pop("request_url", None)
    variant["settings"]["interactivity"].pop("request_url", None)
    for command in variant["features"].get("slash_commands", []):
        command.pop("url", None)
    return variant


def listener_source() -> str:
    files = sorted(LISTENERS.glob("*.py"))
    assert files, f"no listener modules under {LISTENERS}"
    return "\n".join(f.read_text(encoding="utf-8") for f in files)


def bot_source() -> str:
    return "\n".join(f.read_text(encoding="utf-8") for f in sorted((REPO / "bot").rglob("*.py")))


def request_urls(manifest: dict[str, Any]) -> list[str]:
    settings = manifest["settings"]
    urls = [
        settings["event_subscriptions"].get("request_url"),
        settings["interactivity"].get("request_url"),
        *(c.get("url") for c in manifest["features"].get("slash_commands", [])),
    ]
    return [u for u in urls if u is not None]


# --------------------------------------------------------------------------- schema


def test_manifest_is_valid_against_slacks_schema() -> None:
    errors = schema_errors(load_manifest())
    assert not errors, "manifest.yml does not match Slack's schema:\n" + "\n".join(errors)


def test_schema_rejects_a_broken_manifest() -> None:
    """The validation is live: a command without its slash and an unknown key fail."""
    broken = load_manifest()
    broken["features"]["slash_commands"][0]["command"] = "grace"
    broken["settings"]["not_a_setting"] = True
    errors = schema_errors(broken)
    assert any("slash_commands" in e for e in errors), errors
    assert any("not_a_setting" in e for e in errors), errors


def test_socket_mode_variant_is_valid() -> None:
    variant = socket_mode_variant(load_manifest())
    assert variant["settings"]["socket_mode_enabled"] is True
    assert request_urls(variant) == []
    errors = schema_errors(variant)
    assert not errors, "the Socket Mode variant does not match Slack's schema:\n" + "\n".join(
        errors
    )


def test_vendored_schema_matches_the_shared_one() -> None:
    assert VENDORED_SCHEMA.is_file(), f"vendored schema missing: {VENDORED_SCHEMA}"
    if SHARED_SCHEMA.is_file():  # beside the repo (dev machines, CI): they must agree
        shared = json.loads(SHARED_SCHEMA.read_text(encoding="utf-8"))
        vendored = json.loads(VENDORED_SCHEMA.read_text(encoding="utf-8"))
        assert vendored == shared, f"{VENDORED_SCHEMA} is stale: copy {SHARED_SCHEMA} over it"


def test_schema_lookup_falls_back_then_fails(tmp_path: Path) -> None:
    absent = tmp_path / "absent" / SCHEMA_NAME
    # a fresh clone without shared/ beside it still validates, against the vendored copy
    assert schema_path(shared=absent) == VENDORED_SCHEMA
    with pytest.raises(pytest.fail.Exception, match="manifest schema is missing"):
        schema_path(shared=absent, vendored=tmp_path / "gone" / SCHEMA_NAME)


# --------------------------------------------------------------------------- content


def test_http_variant_settings() -> None:
    manifest = load_manifest()
    settings = manifest["settings"]
    assert manifest["display_information"]["name"] == "GRACE"
    assert manifest["features"]["bot_user"] == {"display_name": "grace", "always_online": True}
    assert settings["socket_mode_enabled"] is False
    assert settings["org_deploy_enabled"] is False
    assert settings["token_rotation_enabled"] is False
    assert settings["interactivity"]["is_enabled"] is True
    urls = request_urls(manifest)
    assert len(urls) == 3, urls
    for url in urls:
        assert url.startswith("https://") and url.endswith(EVENTS_PATH), url
    runners = (REPO / "bot" / "slack" / "runners.py").read_text(encoding="utf-8")
    assert f'"{EVENTS_PATH}"' in runners, f"bot/slack/runners.py serves no {EVENTS_PATH}"


def listened_events(source: str) -> set[str]:
    """`@app.event("x")` listeners, and Bolt assistant listeners as "assistant.<name>"."""
    return set(_EVENT_RE.findall(source)) | {
        f"assistant.{name}" for name in _ASSISTANT_RE.findall(source)
    }


def called_methods(source: str) -> set[str]:
    """Web API methods called as `client.chat_postMessage(` or `api_call("chat.x"`, in
    slack_sdk's spelling (`assistant_threads_setStatus`)."""
    dotted = {m.replace(".", "_") for m in _API_CALL_RE.findall(source)}
    return (set(_METHOD_RE.findall(source)) - {"api_call"}) | dotted


def scope_gaps(manifest: dict[str, Any]) -> tuple[set[str], set[str]]:
    """(scopes the code needs that the manifest lacks, scopes it asks for and nobody uses)."""
    source = listener_source()
    needed: set[str] = set()
    for event in listened_events(source):
        needed |= EVENT_NEEDS[event][1]
    for method in called_methods(bot_source()):
        needed |= METHOD_SCOPES[method]
    if _COMMAND_RE.search(source):
        needed.add("commands")
    scopes = set(manifest["oauth_config"]["scopes"]["bot"])
    return needed - scopes, scopes - needed


def test_events_and_commands_match_the_listeners() -> None:
    source = listener_source()
    events = listened_events(source)
    commands = set(_COMMAND_RE.findall(source))
    assert events, "found no @app.event listeners: update this test's patterns"
    assert commands, "found no @app.command listeners: update this test's patterns"
    unknown = events - EVENT_NEEDS.keys()
    assert not unknown, f"listeners for {unknown}: add them to EVENT_NEEDS and manifest.yml"

    manifest = load_manifest()
    bot_events = set(manifest["settings"]["event_subscriptions"]["bot_events"])
    wanted = set().union(*(EVENT_NEEDS[e][0] for e in events))
    assert bot_events == wanted, f"manifest bot_events {bot_events} != listened {wanted}"

    declared = {c["command"] for c in manifest["features"]["slash_commands"]}
    assert declared == commands, f"manifest commands {declared} != listeners {commands}"

    if _INTERACTIVE_RE.search(source):
        assert manifest["settings"]["interactivity"]["is_enabled"] is True
    if "message.im" in bot_events:  # people can only DM the bot with the Messages tab
        app_home = manifest["features"].get("app_home", {})
        assert app_home.get("messages_tab_enabled") is True
        assert app_home.get("messages_tab_read_only_enabled") is False


def test_the_agent_view_is_declared() -> None:
    """The bot serves Slack's Agent messaging experience (its Stop button, the Messages
    tab), so the manifest turns it on with `agent_view`; the legacy assistant pane's
    listeners stay (a workspace may still serve it), and so does their event."""
    events = listened_events(listener_source())
    assert {"agent_session_stopped", "app_home_opened"} <= events
    assert {"assistant.thread_started", "assistant.user_message"} <= events
    manifest = load_manifest()
    assert "assistant_view" not in manifest["features"], "agent_view replaces assistant_view"
    view = manifest["features"].get("agent_view") or {}
    description = str(view.get("agent_description", "")).strip()
    assert description and len(description) <= 300, "no agent_description"
    assert "assistant:write" in manifest["oauth_config"]["scopes"]["bot"]
    bot_events = manifest["settings"]["event_subscriptions"]["bot_events"]
    assert {"agent_session_stopped", "app_home_opened", "assistant_thread_started"} <= set(
        bot_events
    )


def test_the_scan_sees_every_kind_of_call() -> None:
    """Method names with several parts and `api_call("a.b")` are found, not only
    `client.chat_update(`: the scope check below relies on it."""
    methods = called_methods(bot_source())
    assert {
        "chat_postMessage",
        "assistant_threads_setStatus",
        "assistant_threads_setTitle",
        "assistant_threads_setSuggestedPrompts",
        "agents_sessions_setStatus",
        "agents_sessions_rename",
    } <= methods, methods
    sample = (
        'await self._client.chat_startStream(channel=c)\nawait client.api_call("chat.stopStream")'
    )
    assert called_methods(sample) == {"chat_startStream", "chat_stopStream"}


def test_scopes_are_exactly_what_the_bot_needs() -> None:
    methods = called_methods(bot_source())
    assert methods, "found no Web API calls under bot/: update this test's patterns"
    unknown = methods - METHOD_SCOPES.keys()
    assert not unknown, (
        f"bot/ calls {unknown}: add their scopes to METHOD_SCOPES and to manifest.yml"
    )
    manifest = load_manifest()
    scopes = manifest["oauth_config"]["scopes"]["bot"]
    assert len(scopes) == len(set(scopes)), f"duplicate scopes: {scopes}"
    for required in (
        "app_mentions:read",
        "assistant:write",
        "chat:write",
        "commands",
        "im:history",
    ):
        assert required in scopes
    missing, extra = scope_gaps(manifest)
    assert not missing, f"manifest.yml lacks bot scopes {missing}"
    assert not extra, f"manifest.yml asks for scopes nothing uses: {extra} (keep it minimal)"


def test_a_missing_scope_is_caught() -> None:
    """The check is live: without `assistant:write` the status/title calls are flagged."""
    manifest = load_manifest()
    manifest["oauth_config"]["scopes"]["bot"].remove("assistant:write")
    missing, extra = scope_gaps(manifest)
    assert missing == {"assistant:write"} and not extra


def test_an_install_asks_for_the_manifests_bot_scopes() -> None:
    """OAuth mode's default scopes (SLACK_SCOPES unset) are manifest.yml's, and its
    redirect URL is the path `grace serve` answers."""
    from bot.slack.installs import MANIFEST_BOT_SCOPES, REDIRECT_PATH

    manifest = load_manifest()
    assert list(MANIFEST_BOT_SCOPES) == manifest["oauth_config"]["scopes"]["bot"]
    assert all(u.endswith(REDIRECT_PATH) for u in manifest["oauth_config"]["redirect_urls"])
