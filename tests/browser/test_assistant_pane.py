"""Acceptance 4 (the assistant pane): in `grace dev`, a person opens "New chat with
grace", sees the greeting and suggested prompts from the knowledge base, clicks one, sees
grace's status line while it works and the thread titled with the question, and gets the
answer in the pane. Screenshots in `test-artifacts/browser/`."""

from __future__ import annotations

from playwright.async_api import expect

from .conftest import BOT, GraceDev, SimPage

RECORD_STATUSES = """() => {
  window.__statuses = [];
  const line = document.querySelector('[data-testid="assistant-status"]');
  new MutationObserver(() => {
    if (!line.hidden && line.textContent) window.__statuses.push(line.textContent);
  }).observe(line, { childList: true, characterData: true, subtree: true, attributes: true });
}"""


async def test_the_assistant_pane_greets_suggests_works_and_answers(
    grace_dev: GraceDev, sim: SimPage
) -> None:
    await sim.open(grace_dev.url)
    await sim.testid("assistant-open").click()

    await expect(sim.thread).to_have_attribute("data-assistant", "true")
    await expect(sim.testid("assistant-title")).to_have_text("New chat")
    greeting = sim.thread_messages.and_(sim.page.locator(f'[data-user="{BOT}"]'))
    await expect(greeting.last).to_contain_text("knowledge base")
    prompts = sim.testid("assistant-prompt")
    await expect(prompts.first).to_be_visible()
    count = await prompts.count()
    assert 1 <= count <= 3, count
    chosen = (await prompts.first.text_content() or "").strip()
    assert chosen
    await sim.shot("assistant-pane-opened")

    await sim.page.evaluate(RECORD_STATUSES)
    await prompts.first.click()

    answer = await sim.proceed_until_answered()  # through any confirmation it asks for
    await expect(sim.testid("assistant-prompts")).to_be_hidden()
    await expect(sim.testid("assistant-title")).to_contain_text(chosen[:20])
    await expect(sim.testid("assistant-status")).to_be_hidden()  # cleared once answered
    seen = await sim.page.evaluate("window.__statuses")
    assert any(s.startswith("grace is searching the ") for s in seen), seen
    await expect(answer).to_contain_text("Sources")
    await sim.shot("assistant-pane-answered")
