// The assistant pane of the GRACE Slack simulator (Slack's Agents & AI Apps), on top of
// simulator.js (window.graceSim). "New chat with grace" opens an assistant thread in the
// person's DM (the app gets `assistant_thread_started`); the thread pane then shows the
// thread's title, the app's suggested prompts (clickable, until the person has asked
// something) and its status line ("grace is searching…"), as set with
// assistant.threads.setTitle / setSuggestedPrompts / setStatus.
// Test hooks: data-testid assistant-open, assistant-title, assistant-prompts,
// assistant-prompt, assistant-status; thread-pane[data-assistant="true"].
"use strict";

(() => {
  const sim = window.graceSim;
  if (!sim) return;
  const { $, byTestId, post } = sim; // the page's helpers (simulator.js)
  // "channel/thread_ts" -> pane state from /sim/assistant/state
  const threads = sim.threadRecords("/sim/assistant/state", "threads", "assistant_updated", () =>
    paint(),
  );

  sim.addStyle(`
    .assistant-open { margin: 10px 12px 0; padding: 7px 10px; border: 0; border-radius: 6px;
      background: #611f69; color: #fff; font-weight: 700; text-align: left; cursor: pointer; }
    .assistant-open:hover { background: #7b2a85; }
    .assistant-title { font-weight: 800; font-size: 15px; overflow: hidden; white-space: nowrap;
      text-overflow: ellipsis; max-width: 60%; }
    .assistant-prompts { display: flex; flex-wrap: wrap; gap: 6px; padding: 6px 18px 0; flex: none; }
    .assistant-prompts .prompts-title { width: 100%; font-size: 12px; color: #616061; }
    .assistant-prompts button { border: 1px solid #c7a8cc; background: #faf5fb; color: #611f69;
      border-radius: 14px; padding: 4px 10px; font-size: 13px; cursor: pointer; }
    .assistant-prompts button:hover { background: #f1e4f3; }
    .assistant-status { padding: 6px 18px 0; font-size: 13px; color: #616061; font-style: italic; flex: none; }
    .assistant-status::before { content: "✨ "; font-style: normal; }
  `);

  const open = document.createElement("button");
  open.type = "button";
  open.className = "assistant-open";
  open.dataset.testid = "assistant-open";
  open.textContent = "✨ New chat with grace";
  byTestId("dm-list").after(open);

  const pane = byTestId("thread-pane");
  const title = document.createElement("span");
  title.className = "assistant-title";
  title.dataset.testid = "assistant-title";
  title.hidden = true;
  $(".thread-header", pane).insertBefore(title, byTestId("thread-channel"));
  const prompts = document.createElement("div");
  prompts.className = "assistant-prompts";
  prompts.dataset.testid = "assistant-prompts";
  prompts.hidden = true;
  const status = document.createElement("div");
  status.className = "assistant-status";
  status.dataset.testid = "assistant-status";
  status.setAttribute("aria-live", "polite");
  status.hidden = true;
  const composer = byTestId("thread-composer");
  pane.insertBefore(prompts, composer);
  pane.insertBefore(status, composer);

  const escapeHtml = (s) =>
    String(s ?? "").replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

  const current = threads.current;

  function someoneAsked(thread) {
    for (const m of sim.state.messages.values()) {
      if (m.channel === thread.channel && m.thread_ts === thread.thread_ts && m.ts !== thread.thread_ts && !m.bot_id) return true;
    }
    return false;
  }

  function paint() {
    const thread = current();
    pane.dataset.assistant = String(Boolean(thread));
    title.hidden = !thread;
    prompts.hidden = true;
    status.hidden = true;
    if (!thread) return;
    title.textContent = thread.title || "New chat";
    title.title = thread.title || "";
    if (thread.prompts.length && !someoneAsked(thread)) {
      const key = JSON.stringify([thread.prompts_title, thread.prompts]);
      if (prompts.dataset.key !== key) {
        prompts.dataset.key = key;
        prompts.innerHTML =
          (thread.prompts_title ? `<div class="prompts-title">${escapeHtml(thread.prompts_title)}</div>` : "") +
          thread.prompts.map((p, i) => `<button type="button" data-testid="assistant-prompt" data-index="${i}" title="${escapeHtml(p.message)}">${escapeHtml(p.title)}</button>`).join("");
      }
      prompts.hidden = false;
    }
    if (thread.status) {
      status.textContent = `${sim.state.bot.name} ${thread.status}`;
      status.hidden = false;
    }
  }

  open.addEventListener("click", async () => {
    const data = await post("/sim/assistant/open", { user: sim.state.user });
    if (!data.ok) return;
    const t = data.thread;
    threads.put(t);
    if (data.message) sim.state.messages.set(`${t.channel}/${t.thread_ts}`, data.message);
    sim.state.channel = t.channel;
    sim.state.thread = t.thread_ts;
    sim.render();
    paint();
    byTestId("thread-composer-input").focus();
  });

  prompts.addEventListener("click", async (e) => {
    const button = e.target.closest('button[data-testid="assistant-prompt"]');
    const thread = current();
    if (!button || !thread) return;
    const chosen = thread.prompts[Number(button.dataset.index)];
    prompts.hidden = true;
    await post("/sim/messages", {
      user: sim.state.user, channel: thread.channel, text: chosen.message, thread_ts: thread.thread_ts,
    });
  });

  // Repaint whenever the page re-renders the thread pane (another thread, new messages).
  new MutationObserver(() => paint()).observe(pane, {
    attributes: true, attributeFilter: ["data-thread-ts", "hidden"],
  });
  new MutationObserver(() => paint()).observe(byTestId("thread-messages"), { childList: true });
})();
