"""Issue 22 points 2 and 3: every read of a run goes through one access rule — the asker,
approvers and the channel's members (checked with Slack's `conversations.members`, not
taken from the request) — and anyone else gets the reply an unknown run gets, word for
word, so neither Details nor short-id prefixes reveal that a hidden run exists."""

from __future__ import annotations

from blocks import ids
from bot.simulator.requests import app_mention_envelope
from tests.bot.conftest import APPROVER, ASKER, OTHER, VACATION_Q, BotHarness
from tests.durable.helpers import grace_env, grace_here_async

from .conftest import SecureFactory

PRIVATE = "G0PRIVATE01"
ELSEWHERE = "C0ELSEWHERE9"
STRANGER = "U0STRANGER9"
TS = "1700230000.000100"


async def hidden_run(h: BotHarness) -> str:
    """A run asked in a private channel whose members are the asker and OTHER."""
    h.fake.workspace.set_members(PRIVATE, [ASKER, OTHER])
    await h.event(app_mention_envelope(text=VACATION_Q, ts=TS, channel=PRIVATE))
    state = await h.run_in(TS, channel=PRIVATE)
    return state.run_id


async def status_text(h: BotHarness, ref: str, user: str) -> str:
    reply = await h.command(f"status {ref}", user=user, channel=ELSEWHERE)
    assert reply.status == 200
    return str(reply.json()["text"])


async def details(h: BotHarness, run_id: str, user: str) -> tuple[bool, list[str]]:
    """Click Details of the run as `user`: (a modal opened, the user's ephemerals)."""
    before = len(h.fake.calls_to("views.open"))
    value = ids.ButtonValue(run_id=run_id).encode()
    reply = await h.click(ids.DETAILS, value, user=user, thread_ts=TS)
    assert reply.status == 200
    return len(h.fake.calls_to("views.open")) > before, h.ephemerals(user)


async def test_details_of_a_hidden_run_reads_as_an_unknown_run(secure: SecureFactory) -> None:
    h = await secure(approvers=[APPROVER])
    run_id = await hidden_run(h)
    opened, told = await details(h, run_id, STRANGER)
    assert not opened, "a stranger never gets the modal"
    _, told_unknown = await details(h, "0123456789ab", STRANGER)
    assert told[-1] == f"I don't know run {run_id} any more; nothing was changed."
    assert told_unknown[-1] == "I don't know run 0123456789ab any more; nothing was changed."
    for reader in (ASKER, OTHER, APPROVER):
        assert (await details(h, run_id, reader))[0], reader


async def test_status_of_a_hidden_run_is_word_for_word_an_unknown_one(
    secure: SecureFactory,
) -> None:
    h = await secure(approvers=[APPROVER])
    run_id = await hidden_run(h)
    fake_id = "f" * len(run_id) if not run_id.startswith("f") else "e" * len(run_id)
    assert (await status_text(h, run_id, STRANGER)).replace(run_id, "X") == (
        await status_text(h, fake_id, STRANGER)
    ).replace(fake_id, "X")
    for n in range(4, len(run_id) + 1):  # the prefix oracle: one digit at a time
        prefix, miss = run_id[:n], ("0" if run_id[n - 1] != "0" else "1")
        other = run_id[: n - 1] + miss
        hit_text = (await status_text(h, prefix, STRANGER)).replace(prefix, "X")
        miss_text = (await status_text(h, other, STRANGER)).replace(other, "X")
        assert hit_text == miss_text, (prefix, hit_text, miss_text)
        assert VACATION_Q not in hit_text
    for reader in (ASKER, OTHER, APPROVER):
        assert await status_text(h, run_id[:6], reader) == f"Run {run_id}", reader


async def test_membership_is_checked_with_slack_and_cached(secure: SecureFactory) -> None:
    h = await secure()
    run_id = await hidden_run(h)
    await status_text(h, run_id, OTHER)
    await status_text(h, run_id, OTHER)
    await status_text(h, run_id, STRANGER)
    asked = [c for c in h.fake.calls_to("conversations.members") if c.params.get("channel")]
    assert len(asked) == 1, "one look-up, then the cached list"
    # typing the command in the private channel proves nothing: membership is checked
    reply = await h.command(f"status {run_id}", user=STRANGER, channel=PRIVATE)
    assert reply.json()["text"].startswith("No run")


async def test_the_command_line_as_reads_only_what_that_person_may(secure: SecureFactory) -> None:
    h = await secure()
    run_id = await hidden_run(h)
    await h.stop()
    env = grace_env(h.settings.data_dir, GRACE_LLM__PROVIDER="offline")

    async def show(*args: str) -> tuple[int, str, str]:
        return await grace_here_async(env, "show", *args)

    hidden, unknown = await show(run_id, "--as", STRANGER), await show("0" * 12, "--as", STRANGER)
    assert hidden[0] == unknown[0] == 2
    assert hidden[2].replace(run_id, "X") == unknown[2].replace("0" * 12, "X")
    assert VACATION_Q not in hidden[1] + hidden[2]
    assert (await show(run_id, "--as", ASKER))[0] == 0


async def test_status_all_lists_a_channels_runs_only_to_its_members(
    secure: SecureFactory,
) -> None:
    h = await secure()
    run_id = await hidden_run(h)
    member = await h.command("status all", user=OTHER, channel=PRIVATE)
    assert run_id[:6] in member.text
    stranger = await h.command("status all", user=STRANGER, channel=PRIVATE)
    assert run_id[:6] not in stranger.text and VACATION_Q not in stranger.text
