"""`app_home_opened` with tab `home`: the person's App Home inbox is published again,
after the ack (a tracked task in the intake lane: a few reads and one `views.publish`).

Only the `home` tab is handled here; another tab's event (`messages`, the agent DM flow)
goes to its own listener, or to the app's catch-all that acks it."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncApp

from bot.slack.deps import BotDeps


async def is_home_tab(event: dict[str, Any]) -> bool:
    """Bolt matcher: the Home tab was opened (not Messages or About)."""
    return event.get("tab") == "home"


def register(app: AsyncApp, deps: BotDeps) -> None:
    @app.event("app_home_opened", matchers=[is_home_tab])
    async def home_opened(event: dict[str, Any]) -> None:
        user = str(event.get("user") or "")
        if deps.home is None or not user:
            return
        deps.tasks.spawn(deps.home.opened(user), name=f"home {user}", intake=True)
