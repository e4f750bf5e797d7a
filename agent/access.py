"""Who may read a run: one rule for every way of reading one (Slack's Details and
`/grace status`, short ids, the command line's `--as`).

The asker and the approvers may; so may the members of the channel the run was asked
in — a fact the caller checks with Slack (never taken from the request). Anyone else
gets exactly the reply an unknown run gets (`not_found`): a run they may not see does
not exist for them, and no wording tells the two apart.
"""

from __future__ import annotations

from collections.abc import Collection

from agent.schemas import RunState


def may_read(state: RunState, user: str, *, approvers: Collection[str], in_channel: bool) -> bool:
    """True for the run's asker, an approver, or (as checked) a member of its channel."""
    if not user:
        return False
    return user == state.asker or user in approvers or in_channel


def may_cancel(state: RunState, user: str, *, approvers: Collection[str]) -> bool:
    """Who may stop a run (`/grace cancel`, `/grace retry`, Slack's Stop button): its asker,
    a global approver, or an approver of the channel it was asked in (its policy)."""
    return bool(user) and (
        user == state.asker or user in approvers or user in (state.policy.approvers or ())
    )


def not_found(ref: str) -> str:
    """The one reply for a run that does not exist, or that the asker may not see."""
    return f"No run {ref!r}. `/grace status` lists your runs; older ones need the full id."


SHORT_ID_SEARCH = 200
"""How many recent runs a short id is matched against (a bounded scan, not the table)."""
MIN_SHORT_ID = 4
"""A short id is at least this many characters (Slack's cards show six)."""


def short_id_prefix(ref: str) -> str | None:
    """`ref` as a short-id prefix (lower case, backticks dropped), or None when it cannot
    be one (too short, or not letters and digits)."""
    prefix = ref.strip("`").lower()
    if len(prefix) < MIN_SHORT_ID or not prefix.isalnum():
        return None
    return prefix
