// The App Home tab of the GRACE Slack simulator, on top of simulator.js (window.graceSim).
// "🏠 Home" under Apps opens grace's Home tab for the person you are: the app is sent
// `app_home_opened` (tab "home") and the page shows the view it publishes with
// views.publish — live: every later publish for this person repaints it. A link to a
// message (a permalink) opens that thread in the page, as Slack would.
// Test hooks: data-testid home-open, home-pane, home-view, home-close, home-empty;
// home-pane[data-publishes] counts the publishes seen for the person.
"use strict";

(() => {
  const sim = window.graceSim;
  if (!sim) return;
  const { $, byTestId } = sim; // the page's helpers (simulator.js)
  const homes = new Map(); // user -> last published home ({id, user, hash, view, publishes})
  let shown = false;

  sim.addStyle(`
    .home-open { margin: 6px 12px 0; padding: 6px 10px; border: 0; border-radius: 6px;
      background: transparent; color: inherit; text-align: left; cursor: pointer; font: inherit; }
    .home-open:hover, .home-open[aria-current="true"] { background: rgba(255,255,255,0.15); }
    .home { flex: 1; display: flex; flex-direction: column; min-width: 0; background: #fff; }
    .home[hidden] { display: none; }
    .home-header { display: flex; align-items: center; gap: 8px; padding: 12px 18px;
      border-bottom: 1px solid #e0e0e0; font-weight: 800; font-size: 16px; }
    .home-header .tab { font-weight: 600; font-size: 13px; color: #1264a3;
      border-bottom: 2px solid #1264a3; padding: 2px 4px; }
    .home-header button { margin-left: auto; }
    .home-body { flex: 1; overflow-y: auto; padding: 12px 18px; }
    .home-empty { color: #616061; font-style: italic; }
  `);

  const title = document.createElement("div");
  title.className = "section-title";
  title.textContent = "Apps";
  const open = document.createElement("button");
  open.type = "button";
  open.className = "home-open";
  open.dataset.testid = "home-open";
  open.textContent = "🏠 grace — Home";
  const anchor = byTestId("assistant-open") || byTestId("dm-list");
  anchor.after(title, open);

  const pane = document.createElement("section");
  pane.className = "home";
  pane.dataset.testid = "home-pane";
  pane.hidden = true;
  pane.innerHTML = `
    <header class="home-header"><span>🧭 grace</span><span class="tab">Home</span>
      <button type="button" class="icon" data-testid="home-close" aria-label="Close Home">✕</button>
    </header>
    <div class="home-body" data-testid="home-view"></div>`;
  const main = byTestId("channel");
  main.after(pane);
  const body = $('[data-testid="home-view"]', pane);

  function paint() {
    pane.hidden = !shown;
    main.hidden = shown;
    open.setAttribute("aria-current", String(shown));
    if (!shown) return;
    const home = homes.get(sim.state.user);
    pane.dataset.user = sim.state.user;
    pane.dataset.publishes = String(home ? home.publishes : 0);
    pane.dataset.hash = home ? home.hash : "";
    body.innerHTML = home
      ? sim.renderBlocks(home.view.blocks || [], { ts: "", channel: "" })
      : `<div class="home-empty" data-testid="home-empty">Loading ${escape(sim.state.bot.name)}'s Home…</div>`;
  }

  const escape = (s) => String(s ?? "").replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

  function close() {
    if (!shown) return;
    shown = false;
    paint();
    sim.render();
  }

  open.addEventListener("click", async () => {
    shown = true;
    sim.state.thread = null; // the Home tab takes the whole window, as in Slack
    sim.render();
    paint();
    const response = await fetch("/sim/home/open", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ user: sim.state.user }),
    });
    const data = await response.json();
    if (data.ok && data.home && !homes.has(data.home.user)) homes.set(data.home.user, data.home);
    paint();
  });
  pane.addEventListener("click", (e) => {
    if (e.target.closest('[data-testid="home-close"]')) {
      close();
      return;
    }
    // A permalink (…/archives/C…/p1700000000000100?thread_ts=…) opens its thread here.
    const link = e.target.closest("a[href]");
    const match = link && /\/archives\/([A-Z0-9]+)\/p(\d{10})(\d{6})/.exec(link.getAttribute("href"));
    if (!match) return;
    e.preventDefault();
    const url = new URL(link.href);
    sim.state.channel = match[1];
    sim.state.thread = url.searchParams.get("thread_ts") || `${match[2]}.${match[3]}`;
    close();
  });
  // Going to a channel, a DM or another person closes the Home tab, as in Slack.
  document.addEventListener("click", (e) => {
    if (e.target.closest('[data-testid="channel-link"], [data-testid="assistant-open"]')) close();
  }, true);
  byTestId("user-switcher").addEventListener("change", () => close());

  sim.listen((event) => {
    if (event.kind === "home_published" && event.home) {
      const known = homes.get(event.home.user);
      if (!known || known.publishes <= event.home.publishes) homes.set(event.home.user, event.home);
      if (shown && event.home.user === sim.state.user) paint();
    }
  });
})();
