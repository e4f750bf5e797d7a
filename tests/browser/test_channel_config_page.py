"""`/grace config` in `grace dev`, as a person runs it in the browser (issue 20): alice,
a workspace admin in the simulator, opens the channel's settings, names bob as expert
and makes GRACE answer every question; carol, named nowhere, is refused."""

from __future__ import annotations

import contextlib
import json
import sqlite3

from playwright.async_api import expect

from blocks import channel_config as cfg

from .conftest import BOB, GENERAL, GraceDev, SimPage


def saved_settings(dev: GraceDev) -> tuple[str | None, str | None, str | None]:
    """(experts, answer mode, changed by) of #general, straight from the SQLite DB."""
    db = dev.data_dir.resolve() / "grace.db"
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        row = conn.execute(
            "SELECT experts_json, answer_mode, updated_by FROM channel_settings "
            "WHERE channel_id = ?",
            (GENERAL,),
        ).fetchone()
    return (row[0], row[1], row[2]) if row else (None, None, None)


async def test_an_admin_changes_the_channel_settings(grace_dev: GraceDev, sim: SimPage) -> None:
    await sim.open(grace_dev.url, user="U0CAROL")
    await sim.command("/grace config")
    refusal = sim.testid("ephemeral", sim.testid("message-list"))
    await expect(refusal).to_contain_text("Only workspace admins")
    await expect(sim.testid("modal-overlay")).to_be_hidden()
    await sim.shot("config-refused")

    await sim.switch_user("U0ALICE")
    await sim.command("/grace config")
    modal = sim.testid("modal-overlay")
    await expect(modal).to_be_visible()
    await expect(sim.testid("modal-title")).to_have_text("Channel settings")
    await sim.shot("config-modal")

    experts = sim.page.locator(f'[data-testid="modal-input"][data-block-id="{cfg.EXPERTS}"]')
    await experts.fill(BOB)
    mode = sim.page.locator(f'[data-testid="modal-input"][data-block-id="{cfg.ANSWER_MODE}"]')
    await mode.select_option("all")
    await sim.shot("config-filled")
    await sim.testid("modal-submit").click()
    await expect(modal).to_be_hidden()
    saved = sim.testid("ephemeral", sim.testid("message-list")).filter(has_text="Saved")
    await expect(saved).to_be_visible()
    await sim.shot("config-saved")

    experts_json, answer_mode, by = saved_settings(grace_dev)
    assert experts_json is not None and json.loads(experts_json) == [BOB]
    assert (answer_mode, by) == ("all", "U0ALICE")
