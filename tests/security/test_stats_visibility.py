"""Issue 22 point 7: `/grace stats` shows workspace-wide counts only to approvers;
everyone else sees the figures of their own questions."""

from __future__ import annotations

import json

from tests.bot.conftest import APPROVER, ASKER, OTHER, VACATION_Q

from .conftest import SecureFactory


async def test_workspace_stats_are_for_approvers_others_see_their_own(
    secure: SecureFactory,
) -> None:
    h = await secure(approvers=[APPROVER])
    for n in range(3):
        await h.mention(VACATION_Q, ts=f"1700280{n:03d}.000100")

    async def stats(user: str) -> tuple[str, str]:
        body = (await h.command("stats", user=user)).json()
        return str(body["text"]), json.dumps(body.get("blocks", []), ensure_ascii=False)

    text, shown = await stats(APPROVER)
    assert text == "GRACE stats for today" and "*questions asked*: 3" in shown
    text, shown = await stats(ASKER)
    assert text == "Your GRACE stats for today" and "*questions asked*: 3" in shown
    text, shown = await stats(OTHER)
    assert text == "Your GRACE stats for today"
    assert "*questions asked*: 0" in shown, "nothing of the workspace's"
    assert "👍" not in shown, "the workspace's votes are for approvers"
