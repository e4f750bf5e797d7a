// Agent sessions in the GRACE Slack simulator (Slack's Agent messaging experience), on
// top of simulator.js (window.graceSim). The thread pane shows the thread's session —
// its title and status (processing, suspended, active, closed) as set with
// agents.sessions.setStatus / rename — and, while it is processing, Slack's Stop button:
// a click stops the thread's open streams and sends the app `agent_session_stopped`.
// Opening your DM with the app sends `app_home_opened` with tab "messages".
// Test hooks: data-testid session-bar, session-title, session-status, session-stop;
// thread-pane[data-session-status].
"use strict";

(() => {
  const sim = window.graceSim;
  if (!sim) return;
  const { $, byTestId, post } = sim; // the page's helpers (simulator.js)
  // "channel/thread_ts" -> session from /sim/sessions/state
  const sessions = sim.threadRecords("/sim/sessions/state", "sessions", "session_updated", () =>
    paint(),
  );

  sim.addStyle(`
    .session-bar { display: flex; align-items: center; gap: 8px; padding: 6px 18px 0; flex: none;
      font-size: 13px; color: #616061; }
    .session-title { font-weight: 700; color: #1d1c1d; overflow: hidden; white-space: nowrap;
      text-overflow: ellipsis; max-width: 55%; }
    .session-status { border-radius: 10px; padding: 1px 8px; background: #f0f0f0; }
    .session-status[data-status="processing"] { background: #e8f5fa; color: #1264a3; }
    .session-status[data-status="suspended"] { background: #fef6e6; color: #8a5a00; }
    .session-status[data-status="closed"] { background: #eef6ee; color: #2b7a2b; }
    .session-stop { margin-left: auto; border: 1px solid #e01e5a; color: #e01e5a; background: #fff;
      border-radius: 6px; padding: 2px 10px; font-weight: 700; cursor: pointer; }
    .session-stop:hover { background: #fdf0f4; }
  `);

  const pane = byTestId("thread-pane");
  const bar = document.createElement("div");
  bar.className = "session-bar";
  bar.dataset.testid = "session-bar";
  bar.hidden = true;
  bar.innerHTML =
    '<span class="session-title" data-testid="session-title"></span>' +
    '<span class="session-status" data-testid="session-status" aria-live="polite"></span>' +
    '<button type="button" class="session-stop" data-testid="session-stop" hidden>■ Stop</button>';
  pane.insertBefore(bar, byTestId("thread-composer"));
  const title = $('[data-testid="session-title"]', bar);
  const status = $('[data-testid="session-status"]', bar);
  const stop = $('[data-testid="session-stop"]', bar);

  const current = sessions.current;

  function paint() {
    const session = current();
    bar.hidden = !session;
    pane.dataset.sessionStatus = session ? session.status : "";
    if (!session) return;
    title.textContent = session.title || "";
    title.title = session.title || "";
    status.textContent = session.status;
    status.dataset.status = session.status;
    stop.hidden = !session.stoppable;
  }

  stop.addEventListener("click", async () => {
    const session = current();
    if (!session) return;
    stop.disabled = true;
    try {
      await post("/sim/sessions/stop", {
        user: sim.state.user, channel: session.channel, thread_ts: session.thread_ts,
      });
    } finally {
      stop.disabled = false;
    }
  });

  // Opening your DM with the app is Slack's `app_home_opened` (tab "messages").
  byTestId("dm-list").addEventListener("click", (e) => {
    if (!e.target.closest('[data-testid="channel-link"]')) return;
    post("/sim/sessions/messages_opened", { user: sim.state.user });
  });

  new MutationObserver(() => paint()).observe(pane, {
    attributes: true, attributeFilter: ["data-thread-ts", "hidden"],
  });
})();
