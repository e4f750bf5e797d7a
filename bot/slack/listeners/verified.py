"""Verified answers in Slack: the Save as verified answer button (approvers only), and
`/grace verified` / `/grace forget ID`. What is stored is the question, the answer, who
verified it (id and display name), when, and the thread's permalink — nothing else."""

from __future__ import annotations

from slack_sdk.errors import SlackApiError
from slack_sdk.models.blocks import Block
from slack_sdk.web.async_client import AsyncWebClient

from agent.errors import GraceError
from agent.knowledge.verified import answer_words, rests_on_a_reply
from agent.ports import VerifiedAnswer
from agent.schemas import RunState
from blocks.common import context, safe, section
from bot.slack.acting import current_team
from bot.slack.deps import BotDeps

LISTED = 20
NOT_AN_APPROVER = (
    "Only GRACE's approvers can save verified answers, so nothing was saved. "
    "If this answer should be kept for the next person who asks, ask an approver to save it."
)
ONLY_APPROVERS_FORGET = "Only GRACE's approvers can remove verified answers; nothing was removed."


def _day(answer: VerifiedAnswer) -> str:
    return f"{answer.review_by.day} {answer.review_by:%b %Y}"


async def _permalink(client: AsyncWebClient, state: RunState, clicked_ts: str) -> str | None:
    """The thread's permalink (chat.getPermalink of its first message; else of the
    answer clicked, which opens the same thread), or None when Slack gives neither."""
    for ts in dict.fromkeys(t for t in (state.thread.thread_ts, clicked_ts) if t):
        try:
            response = await client.chat_getPermalink(
                channel=state.thread.channel_id, message_ts=ts
            )
        except (SlackApiError, OSError, TimeoutError):
            continue
        link = response.get("permalink")
        if isinstance(link, str) and link:
            return link
    return None


def _ours(answer: VerifiedAnswer) -> bool:
    """Whether the workspace being acted for may see (and forget) it: its own, or one
    for every workspace (always, outside OAuth mode)."""
    team = current_team()
    return team is None or team.team_id is None or answer.verification().visible_to(team.team_id)


async def save_clicked(
    deps: BotDeps, client: AsyncWebClient, state: RunState, user: str, clicked_ts: str = ""
) -> str:
    """Save the run's answer as a verified answer for `user` (who clicked Save on the
    message at `clicked_ts`); what to tell them."""
    if user not in deps.settings.approvers:
        return NOT_AN_APPROVER
    if deps.verified is None:
        return "Verified answers are not available in this deployment; nothing was saved."
    if not rests_on_a_reply(state):
        return "This answer does not rest on a person's reply, so it cannot be saved as verified."
    name = await deps.display_name(user) or user
    try:
        saved, new = await deps.verified.save(
            question=state.query,
            answer=answer_words(state),
            verified_by=user,
            verified_by_name=name,
            permalink=await _permalink(client, state, clicked_ts),
            run_id=state.run_id,
            # OAuth mode: it answers this workspace's questions only (issue 21)
            team_id=state.thread.team_id if deps.settings.oauth_mode else None,
        )
    except GraceError as exc:
        return f"⚠️ The verified answer could not be saved: {exc.message}"
    label = saved.verification().label
    if not new:
        return f"This answer is already saved as verified answer `{saved.answer_id}` ({label})."
    return (
        f"Saved as verified answer `{saved.answer_id}`: the next person who asks this gets it, "
        f"cited as “{label}”. It is due for review on {_day(saved)}; "
        f"`/grace forget {saved.answer_id}` removes it."
    )


async def verified_list(deps: BotDeps) -> tuple[str, list[Block]]:
    """`/grace verified`: the newest verified answers."""
    if deps.verified is None:
        text = "Verified answers are not available in this deployment."
        return text, [section(text)]
    answers = [a for a in await deps.verified.recent(limit=LISTED * 4) if _ours(a)][:LISTED]
    if not answers:
        text = "No verified answers yet. An approver saves one with the button under an answer."
        return text, [section(text)]
    blocks: list[Block] = [section(f"*Verified answers* ({len(answers)} newest)")]
    for answer in answers:
        verification = answer.verification()
        due = "" if verification.fresh() else " · ⚠️ past its review date"
        blocks.append(
            section(
                f"`{answer.answer_id}` *{safe(answer.question, 300)}*\n{safe(answer.answer, 600)}"
            )
        )
        blocks.append(context(f"{safe(verification.label, 200)}{due}"))
    blocks.append(context("`/grace forget ID` removes one (approvers)."))
    return f"{len(answers)} verified answers", blocks[:50]


async def forget(deps: BotDeps, user: str, answer_id: str | None) -> tuple[bool, str]:
    """`/grace forget ID` (approvers only): (removed, what to tell them)."""
    if user not in deps.settings.approvers:
        return False, ONLY_APPROVERS_FORGET
    if not answer_id:
        return False, "Which one? `/grace forget ID` — `/grace verified` lists them with their ids."
    if deps.verified is None:
        return False, "Verified answers are not available in this deployment."
    answer_id = answer_id.strip("`")
    found = await deps.verified.store.get(answer_id)
    if found is not None and not _ours(found):  # another workspace's: not found, as unknown
        return False, f"No verified answer `{answer_id}`. `/grace verified` lists them."
    try:
        removed = await deps.verified.remove(answer_id)
    except GraceError as exc:
        return False, f"Verified answer `{answer_id}` could not be removed: {exc.message}"
    if not removed:
        return False, f"No verified answer `{answer_id}`. `/grace verified` lists them."
    return True, f"Removed verified answer `{answer_id}`: it is no longer used to answer."
