// GRACE Slack simulator page: renders the workspace from /sim/state, keeps it live with
// Server-Sent Events from /sim/events, and sends what the person does to /sim/*.
// Plain JavaScript, no build step. Stable hooks for browser tests: data-testid,
// data-ts, data-channel, data-user, data-action-id, data-block-id (see bot/simulator/ui.py).
"use strict";

(() => {
  const $ = (sel, root = document) => root.querySelector(sel);
  const byTestId = (id, root = document) => $(`[data-testid="${id}"]`, root);

  const params = new URLSearchParams(location.search);
  const state = {
    team: { name: "" },
    bot: { user_id: "", name: "grace" },
    users: {},
    channels: {},
    workspaces: [], // several only in `grace dev --workspaces 2`: [{id, name, installed, install_url}]
    messages: new Map(), // "channel/ts" -> message
    ephemerals: new Map(), // ts -> ephemeral message (for the current user)
    view: null, // the open modal for the current user
    viewErrors: {},
    connections: 0,
    user: params.get("user") || localStorage.getItem("grace-sim-user") || "U0ALICE",
    channel: params.get("channel") || localStorage.getItem("grace-sim-channel") || "C0GENERAL1",
    thread: params.get("thread") || null,
    ready: false,
    // Like a Slack client, a freshly loaded page shows no ephemeral message and no modal
    // from before it was loaded: only what arrives after `openedAfter` (a message ts).
    openedAfter: null,
    staleViews: new Set(),
  };

  // Slack timestamps ("1700000000.000100") compared exactly, without float rounding.
  const tsMicros = (ts) => {
    const [sec, frac = ""] = String(ts || "0").split(".");
    return BigInt(sec || "0") * 1000000n + BigInt((frac + "000000").slice(0, 6) || "0");
  };
  const tsAfter = (a, b) => tsMicros(a) > tsMicros(b);

  // ------------------------------------------------------------------ text helpers

  const escapeHtml = (s) =>
    String(s ?? "")
      .replace(/&/g, "&amp;")
      .replace(/</g, "&lt;")
      .replace(/>/g, "&gt;")
      .replace(/"/g, "&quot;")
      .replace(/'/g, "&#39;");
  const unescapeSlack = (s) =>
    String(s ?? "").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");

  const EMOJI = {
    white_check_mark: "✅", heavy_check_mark: "✔️", x: "❌", warning: "⚠️", thumbsup: "👍",
    "+1": "👍", thumbsdown: "👎", "-1": "👎", hourglass: "⌛", hourglass_flowing_sand: "⏳",
    eyes: "👀", tada: "🎉", robot_face: "🤖", mag: "🔍", bulb: "💡", question: "❓",
    speech_balloon: "💬", stop_sign: "🛑", rocket: "🚀", memo: "📝", clipboard: "📋",
    large_green_circle: "🟢", large_yellow_circle: "🟡", large_orange_circle: "🟠",
    red_circle: "🔴", compass: "🧭", arrows_counterclockwise: "🔄", pause_button: "⏸️",
    raising_hand: "🙋", pencil2: "✏️", fast_forward: "⏩", repeat: "🔁", wave: "👋",
  };
  const emojify = (s) => s.replace(/:([a-z0-9_+\-]+):/g, (m, name) => EMOJI[name] || m);

  const userName = (id) => {
    const u = state.users[id];
    if (id === "USLACKBOT") return "Slackbot";
    return u ? u.name : id;
  };

  const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`;
  const pad = (n) => String(n).padStart(2, "0");
  const tsDate = (ts) => new Date(parseFloat(ts) * 1000);
  const clock = (ts) => {
    const d = tsDate(ts);
    return `${pad(d.getHours())}:${pad(d.getMinutes())}`;
  };

  function slackDate(epoch, format, fallback) {
    const d = new Date(Number(epoch) * 1000);
    if (Number.isNaN(d.getTime())) return escapeHtml(fallback);
    const date = d.toLocaleDateString(undefined, { year: "numeric", month: "short", day: "numeric" });
    const long = d.toLocaleDateString(undefined, {
      weekday: "long", year: "numeric", month: "long", day: "numeric",
    });
    const out = format
      .replace(/\{date_num\}/g, `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`)
      .replace(/\{date_short_pretty\}|\{date_short\}|\{date_pretty\}|\{date\}/g, date)
      .replace(/\{date_long_pretty\}|\{date_long\}/g, long)
      .replace(/\{time_secs\}/g, `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`)
      .replace(/\{time\}/g, `${pad(d.getHours())}:${pad(d.getMinutes())}`)
      .replace(/\{ago\}/g, fallback);
    return escapeHtml(out);
  }

  // Slack mrkdwn -> HTML. Special tokens (<@U…>, <url|label>, <!date…>) and code are
  // lifted out first, the rest is HTML-escaped and then formatted.
  function mrkdwn(raw) {
    const saved = [];
    const keep = (html) => `\u0000${saved.push(html) - 1}\u0000`;
    let text = String(raw ?? "");

    text = text.replace(/```([\s\S]*?)```/g, (m, code) =>
      keep(`<pre>${escapeHtml(unescapeSlack(code.replace(/^\n/, "")))}</pre>`));
    text = text.replace(/`([^`\n]+)`/g, (m, code) => keep(`<code>${escapeHtml(unescapeSlack(code))}</code>`));
    text = text.replace(/<([^<>\n]+)>/g, (m, inner) => keep(specialToken(inner)));

    text = escapeHtml(unescapeSlack(text));
    const open = "(^|[\\s(\\[{>\"'\\u0000*_~])";
    const close = "(?=$|[\\s.,!?;:)\\]}<\"'\\u0000*_~])";
    // A marker opens after a boundary and closes before one, so `snake_case` stays as is
    // while `_italic with snake_case inside_` is italic (as Slack renders it).
    text = text.replace(new RegExp(`${open}\\*(?=\\S)([^\\n]*?\\S)\\*${close}`, "g"), "$1<b>$2</b>");
    text = text.replace(new RegExp(`${open}_(?=\\S)([^\\n]*?\\S)_${close}`, "g"), "$1<i>$2</i>");
    text = text.replace(new RegExp(`${open}~(?=\\S)([^\\n]*?\\S)~${close}`, "g"), "$1<s>$2</s>");
    text = emojify(text);
    text = text
      .split("\n")
      .map((line) => (line.startsWith("&gt;") ? `<blockquote>${line.replace(/^&gt;\s?/, "")}</blockquote>` : line))
      .join("\n")
      .replace(/<\/blockquote>\n<blockquote>/g, "<br>")
      .replace(/\n/g, "<br>")
      .replace(/<\/blockquote><br>/g, "</blockquote>");
    return text.replace(/\u0000(\d+)\u0000/g, (m, i) => saved[Number(i)]);
  }

  function specialToken(inner) {
    const [target, label] = splitOnce(inner, "|");
    if (target.startsWith("@")) {
      const id = target.slice(1);
      const me = id === state.user ? " me" : "";
      return `<span class="mention${me}" data-testid="mention" data-user-id="${escapeHtml(id)}">@${escapeHtml(label || userName(id))}</span>`;
    }
    if (target.startsWith("#")) {
      const id = target.slice(1);
      const name = label || (state.channels[id] && state.channels[id].name) || id;
      return `<span class="mention" data-testid="channel-mention">#${escapeHtml(name)}</span>`;
    }
    if (target.startsWith("!date^")) {
      const [, epoch, format] = target.split("^");
      return `<span data-testid="date">${slackDate(epoch, format || "{date}", unescapeSlack(label || ""))}</span>`;
    }
    if (target.startsWith("!")) {
      const word = target.slice(1).split("^")[0];
      return `<span class="mention">@${escapeHtml(label || word)}</span>`;
    }
    const url = unescapeSlack(target);
    if (/^(https?:|mailto:)/i.test(url)) {
      return `<a href="${escapeHtml(url)}" target="_blank" rel="noopener noreferrer">${escapeHtml(unescapeSlack(label || url))}</a>`;
    }
    return escapeHtml(`<${unescapeSlack(inner)}>`);
  }

  function splitOnce(s, sep) {
    const i = s.indexOf(sep);
    return i < 0 ? [s, ""] : [s.slice(0, i), s.slice(i + 1)];
  }

  const textObject = (obj) => {
    if (!obj) return "";
    if (obj.type === "mrkdwn") return `<span class="mrkdwn text">${mrkdwn(obj.text)}</span>`;
    const plain = escapeHtml(obj.text);
    return `<span class="text">${obj.emoji === false ? plain : emojify(plain)}</span>`;
  };

  // ------------------------------------------------------------------ Block Kit

  function renderElement(el, ctx) {
    if (!el || typeof el !== "object") return "";
    if (el.type === "button") {
      const style = el.style || "";
      const confirm = el.confirm ? ` data-confirm="${escapeHtml(JSON.stringify(el.confirm))}"` : "";
      const attrs = [
        `class="btn ${escapeHtml(style)}"`,
        `type="button"`,
        `data-testid="button"`,
        `data-action-id="${escapeHtml(el.action_id || "")}"`,
        `data-value="${escapeHtml(el.value ?? "")}"`,
        `data-style="${escapeHtml(style)}"`,
        `data-message-ts="${escapeHtml(ctx.ts)}"`,
        `data-channel="${escapeHtml(ctx.channel)}"`,
      ];
      if (el.url) attrs.push(`data-url="${escapeHtml(el.url)}"`);
      return `<button ${attrs.join(" ")}${confirm}>${emojify(escapeHtml(el.text ? el.text.text : ""))}</button>`;
    }
    if (el.type === "feedback_buttons") {
      // Slack's 👍 / 👎 pair: one action id, the clicked button's value tells them apart.
      return ["positive_button", "negative_button"].map((key) => {
        const b = el[key] || {};
        const label = b.accessibility_label ? ` aria-label="${escapeHtml(b.accessibility_label)}"` : "";
        return `<button class="btn feedback" type="button" data-testid="button" data-feedback="${key === "positive_button" ? "positive" : "negative"}" data-action-id="${escapeHtml(el.action_id || "")}" data-value="${escapeHtml(b.value ?? "")}" data-message-ts="${escapeHtml(ctx.ts)}" data-channel="${escapeHtml(ctx.channel)}"${label}>${emojify(escapeHtml(b.text ? b.text.text : ""))}</button>`;
      }).join("");
    }
    if (el.type === "icon_button") {
      return `<button class="btn icon" type="button" data-testid="button" data-action-id="${escapeHtml(el.action_id || "")}" data-value="${escapeHtml(el.value ?? "")}" data-message-ts="${escapeHtml(ctx.ts)}" data-channel="${escapeHtml(ctx.channel)}">${emojify(escapeHtml(el.text ? el.text.text : ""))}</button>`;
    }
    if (el.type === "image") {
      return `<img src="${escapeHtml(el.image_url || "")}" alt="${escapeHtml(el.alt_text || "")}">`;
    }
    if (el.type === "mrkdwn" || el.type === "plain_text") return textObject(el);
    return `<span class="blk-unsupported" data-testid="unsupported-element">[${escapeHtml(el.type)}]</span>`;
  }

  function renderInput(block) {
    const el = block.element || {};
    const blockId = escapeHtml(block.block_id || "");
    const actionId = escapeHtml(el.action_id || "");
    const error = state.viewErrors[block.block_id];
    const placeholder = el.placeholder ? escapeHtml(el.placeholder.text) : "";
    const max = el.max_length ? ` maxlength="${Number(el.max_length)}"` : "";
    const initial = escapeHtml(el.initial_value || "");
    let control;
    if (el.type === "plain_text_input" && el.multiline) {
      control = `<textarea data-testid="modal-input" data-block-id="${blockId}" data-action-id="${actionId}" placeholder="${placeholder}"${max}>${initial}</textarea>`;
    } else if (el.type === "plain_text_input") {
      control = `<input data-testid="modal-input" data-block-id="${blockId}" data-action-id="${actionId}" placeholder="${placeholder}" value="${initial}"${max}>`;
    } else if (el.type === "static_select") {
      // a dropdown; the relay sends the chosen option as Slack's `selected_option`
      const chosen = el.initial_option ? el.initial_option.value : "";
      const options = (el.options || []).map((o) => `<option value="${escapeHtml(o.value)}"${o.value === chosen ? " selected" : ""}>${escapeHtml(o.text ? o.text.text : o.value)}</option>`).join("");
      control = `<select data-testid="modal-input" data-block-id="${blockId}" data-action-id="${actionId}">${options}</select>`;
    } else if (["multi_users_select", "users_select", "multi_static_select"].includes(el.type)) {
      // typed as comma-separated ids / option values; the relay makes Slack's shape of them
      const chosen = el.initial_users || (el.initial_options || []).map((o) => o.value);
      const hint = el.type === "multi_static_select" ? (el.options || []).map((o) => o.value).join(", ") : "U123, U456";
      control = `<input data-testid="modal-input" data-block-id="${blockId}" data-action-id="${actionId}" data-element-type="${escapeHtml(el.type)}" placeholder="${escapeHtml(hint)}" value="${escapeHtml(chosen.join(", "))}">`;
    } else {
      control = `<span class="blk-unsupported">[${escapeHtml(el.type)} input]</span>`;
    }
    const label = block.label ? escapeHtml(block.label.text) : "";
    return `<div class="blk-input${error ? " has-error" : ""}" data-testid="block" data-block-type="input" data-block-id="${blockId}">
      <label>${label}${block.optional ? ' <span class="hint">(optional)</span>' : ""}</label>
      ${control}
      ${block.hint ? `<span class="hint">${escapeHtml(block.hint.text)}</span>` : ""}
      ${error ? `<span class="field-error" data-testid="modal-field-error" data-block-id="${blockId}">${escapeHtml(error)}</span>` : ""}
    </div>`;
  }

  function richText(block) {
    const walk = (node) => {
      if (!node) return "";
      if (Array.isArray(node)) return node.map(walk).join("");
      if (node.type === "text") {
        let t = escapeHtml(node.text);
        const s = node.style || {};
        if (s.code) t = `<code>${t}</code>`;
        if (s.bold) t = `<b>${t}</b>`;
        if (s.italic) t = `<i>${t}</i>`;
        if (s.strike) t = `<s>${t}</s>`;
        return t.replace(/\n/g, "<br>");
      }
      if (node.type === "link") return `<a href="${escapeHtml(node.url)}" target="_blank" rel="noopener">${escapeHtml(node.text || node.url)}</a>`;
      if (node.type === "user") return specialToken(`@${node.user_id}`);
      if (node.type === "emoji") return node.unicode ? String.fromCodePoint(...node.unicode.split("-").map((h) => parseInt(h, 16))) : `:${escapeHtml(node.name)}:`;
      if (node.type === "rich_text_list") return `<ul>${(node.elements || []).map((e) => `<li>${walk(e.elements)}</li>`).join("")}</ul>`;
      if (node.type === "rich_text_preformatted") return `<pre>${walk(node.elements)}</pre>`;
      if (node.type === "rich_text_quote") return `<blockquote>${walk(node.elements)}</blockquote>`;
      return walk(node.elements);
    };
    return `<div class="mrkdwn text">${walk(block.elements)}</div>`;
  }

  // Slack's plan / task_card blocks (and a streamed reply's tasks): one row per task,
  // its status as an icon, what it looked for and what it found underneath.
  const TASK_ICON = { pending: "○", in_progress: "◔", complete: "✓", error: "✕" };
  function taskCard(task) {
    const status = Object.hasOwn(TASK_ICON, task.status) ? task.status : "pending";
    const part = (rich, cls) => (rich ? `<div class="${cls}">${richText(rich)}</div>` : "");
    const sources = (task.sources || [])
      .map((src) => `<a href="${escapeHtml(src.url || "")}" target="_blank" rel="noopener">${escapeHtml(src.text || src.url || "")}</a>`)
      .join(" · ");
    return `<div class="task-card ${status}" data-testid="task-card" data-task-id="${escapeHtml(task.task_id || "")}" data-status="${status}">
      <span class="task-icon">${TASK_ICON[status]}</span>
      <div class="task-main"><div class="task-title">${escapeHtml(task.title || "")}</div>${part(task.details, "task-details")}${part(task.output, "task-output")}${sources ? `<div class="task-sources">${sources}</div>` : ""}</div>
    </div>`;
  }

  // Just enough Markdown for a streamed answer: bold, italics, code, line breaks.
  function markdown(text) {
    return escapeHtml(text)
      .replace(/\*\*(.+?)\*\*/g, "<b>$1</b>")
      .replace(/(^|[^*])\*([^*\n]+)\*/g, "$1<i>$2</i>")
      .replace(/`([^`\n]+)`/g, "<code>$1</code>")
      .replace(/\n/g, "<br>");
  }

  function renderBlock(block, ctx) {
    const type = block.type;
    const attrs = `data-testid="block" data-block-type="${escapeHtml(type)}" data-block-id="${escapeHtml(block.block_id || "")}"`;
    switch (type) {
      case "header":
        return `<div class="blk-header" ${attrs}>${textObject(block.text)}</div>`;
      case "section": {
        const fields = (block.fields || []).map((f) => `<div>${textObject(f)}</div>`).join("");
        const accessory = block.accessory ? `<div class="accessory">${renderElement(block.accessory, ctx)}</div>` : "";
        return `<div class="blk-section" ${attrs}><div class="text">${textObject(block.text)}${fields ? `<div class="blk-fields">${fields}</div>` : ""}</div>${accessory}</div>`;
      }
      case "context":
        return `<div class="blk-context" ${attrs}>${(block.elements || []).map((e) => renderElement(e, ctx)).join("")}</div>`;
      case "context_actions":
        return `<div class="blk-context-actions" ${attrs}>${(block.elements || []).map((e) => renderElement(e, ctx)).join("")}</div>`;
      case "alert": {
        const level = ["info", "warning", "error", "success"].includes(block.level) ? block.level : "default";
        const icon = { info: "ℹ️", warning: "⚠️", error: "⛔", success: "✅", default: "💬" }[level];
        return `<div class="blk-alert ${level}" role="alert" data-level="${level}" ${attrs}><span class="alert-icon">${icon}</span>${textObject(block.text)}</div>`;
      }
      case "divider":
        return `<hr class="blk-divider" ${attrs}>`;
      case "actions":
        return `<div class="blk-actions" ${attrs}>${(block.elements || []).map((e) => renderElement(e, ctx)).join("")}</div>`;
      case "image":
        return `<div class="blk-image" ${attrs}>${block.title ? textObject(block.title) : ""}<img src="${escapeHtml(block.image_url || "")}" alt="${escapeHtml(block.alt_text || "")}"></div>`;
      case "input":
        return renderInput(block);
      case "rich_text":
        return `<div ${attrs}>${richText(block)}</div>`;
      case "markdown":
        return `<div class="mrkdwn text" ${attrs}>${markdown(block.text || "")}</div>`;
      case "plan":
        return `<div class="blk-plan" ${attrs}><div class="plan-title" data-testid="plan-title">${escapeHtml(block.title || "")}</div>${(block.tasks || []).map((t) => taskCard(t)).join("")}</div>`;
      case "task_card":
        return `<div ${attrs}>${taskCard(block)}</div>`;
      default:
        return `<div class="blk-unsupported" ${attrs}>[unsupported block: ${escapeHtml(type)}]</div>`;
    }
  }

  const renderBlocks = (blocks, ctx) =>
    `<div class="blocks" data-testid="blocks">${blocks.map((b) => renderBlock(b, ctx)).join("")}</div>`;

  // ------------------------------------------------------------------ messages

  const COLORS = ["#e8912d", "#2eb67d", "#36c5f0", "#ecb22e", "#e01e5a", "#4a154b", "#1264a3"];
  function avatar(id) {
    if (id === state.bot.user_id) return `<div class="avatar" style="background:#2c3e50">🧭</div>`;
    if (id === "USLACKBOT") return `<div class="avatar" style="background:#36c5f0">✦</div>`;
    let h = 0;
    for (const c of id) h = (h * 31 + c.charCodeAt(0)) >>> 0;
    const name = userName(id);
    return `<div class="avatar" style="background:${COLORS[h % COLORS.length]}">${escapeHtml(name.slice(0, 1).toUpperCase())}</div>`;
  }

  function repliesOf(channel, ts) {
    const out = [];
    for (const m of state.messages.values()) {
      if (m.channel === channel && m.thread_ts === ts && m.ts !== ts) out.push(m);
    }
    return out.sort((a, b) => a.ts.localeCompare(b.ts));
  }

  function renderMessage(m, { inThread = false } = {}) {
    const isBot = Boolean(m.bot_id) || m.user === state.bot.user_id;
    const author = m.ephemeral ? (m.sender ? userName(m.sender) : state.bot.name) : userName(m.user);
    const authorId = m.ephemeral ? (m.sender || state.bot.user_id) : m.user;
    const ctx = { ts: m.ts, channel: m.channel };
    const body = m.blocks && m.blocks.length
      ? renderBlocks(m.blocks, ctx)
      : `<div class="mrkdwn text" data-testid="message-text">${mrkdwn(m.text)}</div>`;
    const edited = !m.ephemeral && m.edits > 0;
    let threadLine = "";
    if (!inThread && !m.ephemeral) {
      const replies = repliesOf(m.channel, m.ts);
      if (replies.length) {
        threadLine = `<button type="button" class="thread-link" data-testid="thread-link" data-thread-ts="${escapeHtml(m.ts)}">${plural(replies.length, "reply", "replies")} · last ${clock(replies[replies.length - 1].ts)}</button>`;
      }
    }
    const reactions = Object.entries(m.reactions || {})
      .map(([name, users]) => `<span class="reaction" data-testid="reaction" data-name="${escapeHtml(name)}">${emojify(`:${escapeHtml(name)}:`)} ${users.length}</span>`)
      .join("");
    const actions = !inThread && !m.ephemeral
      ? `<div class="msg-actions"><button type="button" data-testid="reply-button" data-thread-ts="${escapeHtml(m.ts)}">💬 Reply in thread</button></div>`
      : "";
    const classes = ["msg"];
    if (m.ephemeral) classes.push("ephemeral");
    return `<div class="${classes.join(" ")}" data-testid="${m.ephemeral ? "ephemeral" : "message"}" data-ts="${escapeHtml(m.ts)}" data-channel="${escapeHtml(m.channel)}" data-user="${escapeHtml(authorId)}" data-thread-ts="${escapeHtml(m.thread_ts || "")}" data-edited="${edited}" data-ephemeral="${Boolean(m.ephemeral)}">
      ${avatar(authorId)}
      <div class="msg-main">
        <div class="msg-head">
          <span class="author" data-testid="message-author">${escapeHtml(author)}</span>
          ${isBot || (m.ephemeral && !m.sender) ? '<span class="app-badge">app</span>' : ""}
          <span class="time" title="${escapeHtml(m.ts)}">${clock(m.ts)}</span>
          ${edited ? '<span class="edited" data-testid="message-edited">(edited)</span>' : ""}
        </div>
        <div data-testid="message-body">${body}</div>
        ${m.streaming ? '<div class="streaming" data-testid="streaming">● writing…</div>' : ""}
        ${m.ephemeral ? '<div class="ephemeral-note" data-testid="ephemeral-note">👁 Only visible to you</div>' : ""}
        ${reactions ? `<div class="reactions">${reactions}</div>` : ""}
        ${threadLine}
      </div>
      ${actions}
    </div>`;
  }

  function channelItems() {
    const top = [];
    for (const m of state.messages.values()) {
      if (m.channel === state.channel && !m.is_reply) top.push(m);
    }
    const topTs = new Set(top.map((m) => m.ts));
    for (const e of state.ephemerals.values()) {
      if (e.channel !== state.channel) continue;
      if (!e.thread_ts || !topTs.has(e.thread_ts) || e.thread_ts === e.ts) top.push(e);
    }
    return top.sort((a, b) => a.ts.localeCompare(b.ts));
  }

  function threadItems() {
    const items = [];
    const parent = state.messages.get(`${state.channel}/${state.thread}`);
    for (const m of state.messages.values()) {
      if (m.channel === state.channel && m.thread_ts === state.thread && m.ts !== state.thread) items.push(m);
    }
    for (const e of state.ephemerals.values()) {
      if (e.channel === state.channel && e.thread_ts === state.thread) items.push(e);
    }
    items.sort((a, b) => a.ts.localeCompare(b.ts));
    return { parent, items };
  }

  // ------------------------------------------------------------------ rendering

  let renderQueued = false;
  function render() {
    if (renderQueued) return;
    renderQueued = true;
    requestAnimationFrame(() => {
      renderQueued = false;
      renderNow();
    });
  }

  const nearBottom = (el) => el.scrollHeight - el.scrollTop - el.clientHeight < 80;

  function renderNow() {
    renderSidebar();
    const channel = state.channels[state.channel] || { name: state.channel };
    const title = channel.is_im ? `@${state.bot.name} (DM)` : `#${channel.name}`;
    byTestId("channel-title").textContent = title;
    byTestId("channel-hint").innerHTML = channel.is_im
      ? `Just type your question — no @mention needed · <b>/grace help</b> for commands`
      : `Mention <b>@${escapeHtml(state.bot.name)}</b> to ask · <b>/grace help</b> for commands`;
    byTestId("composer-input").placeholder = channel.is_im
      ? `Message ${state.bot.name} directly — no @mention needed`
      : `Message #${channel.name} — “@${state.bot.name} How many vacation days do new employees get?” or “/grace status”`;

    const list = byTestId("message-list");
    const stick = nearBottom(list);
    const items = channelItems();
    list.innerHTML = items.length
      ? items.map((m) => renderMessage(m)).join("")
      : `<div class="empty" data-testid="empty-channel">No messages yet. Ask ${escapeHtml(state.bot.name)} something: “@${escapeHtml(state.bot.name)} How many vacation days do new employees get?”</div>`;
    if (stick) list.scrollTop = list.scrollHeight;

    const pane = byTestId("thread-pane");
    if (state.thread && state.messages.has(`${state.channel}/${state.thread}`)) {
      pane.hidden = false;
      pane.dataset.threadTs = state.thread;
      pane.dataset.channel = state.channel;
      byTestId("thread-channel").textContent = title;
      const box = byTestId("thread-messages");
      const stickThread = nearBottom(box) || box.dataset.threadTs !== state.thread;
      const { parent, items: replies } = threadItems();
      box.dataset.threadTs = state.thread;
      box.innerHTML =
        `<div class="parent">${renderMessage(parent, { inThread: true })}</div>` +
        `<div class="reply-count-line" data-testid="reply-count">${plural(replies.filter((r) => !r.ephemeral).length, "reply", "replies")}</div>` +
        replies.map((m) => renderMessage(m, { inThread: true })).join("");
      if (stickThread) box.scrollTop = box.scrollHeight;
    } else {
      pane.hidden = true;
      pane.dataset.threadTs = "";
    }

    const status = byTestId("connection-status");
    status.dataset.connected = String(state.connections > 0);
    status.dataset.connections = String(state.connections);
    $(".label", status).textContent = state.connections > 0
      ? `${state.bot.name} connected (Socket Mode)`
      : `${state.bot.name} not connected`;
    byTestId("disconnected-banner").hidden = !state.ready || state.connections > 0;
    renderModal();
    document.getElementById("app").dataset.ready = String(state.ready);
  }

  // ------------------------------------------------------------------ workspaces
  // With several workspaces the page shows one at a time: the current person's, with its
  // own people and channels (a channel of another workspace says `context_team_id`).

  const several = () => state.workspaces.length > 1;
  const currentTeam = () => (state.users[state.user] || {}).team_id || state.team.id;
  const inTeam = (teamId) => !several() || teamId === currentTeam();
  const channelTeam = (c) => c.context_team_id || state.team.id;
  const peopleOf = (teamId) => Object.values(state.users).filter((u) => !u.is_bot && u.team_id === teamId);
  const firstChannelOf = (teamId) => Object.values(state.channels).find((c) => !c.is_im && channelTeam(c) === teamId);

  function renderWorkspaces() {
    const box = byTestId("workspaces");
    box.hidden = !several();
    if (box.hidden) return;
    const team = state.workspaces.find((w) => w.id === currentTeam()) || state.workspaces[0];
    byTestId("team-name").textContent = team.name;
    const select = byTestId("workspace-switcher");
    const options = state.workspaces.map((w) => `<option value="${escapeHtml(w.id)}">${escapeHtml(w.name)}</option>`).join("");
    if (select.dataset.options !== options) {
      select.innerHTML = options;
      select.dataset.options = options;
    }
    select.value = team.id;
    const status = byTestId("install-status");
    status.dataset.installed = String(team.installed);
    status.querySelector(".label").textContent = team.installed ? `${state.bot.name} is installed here` : `${state.bot.name} is not installed here`;
    const add = byTestId("add-to-slack");
    add.hidden = team.installed;
    add.href = team.install_url;
  }

  function renderSidebar() {
    byTestId("team-name").textContent = state.team.name || "Slack simulator";
    renderWorkspaces();
    const select = byTestId("user-switcher");
    const people = Object.values(state.users).filter((u) => !u.is_bot && inTeam(u.team_id));
    const options = people.map((u) => `<option value="${escapeHtml(u.id)}">${escapeHtml(u.name)} (${escapeHtml(u.id)})</option>`).join("");
    if (select.dataset.options !== options) {
      select.innerHTML = options;
      select.dataset.options = options;
    }
    select.value = state.user;

    const link = (c, label) => `<button type="button" class="channel-link" data-testid="channel-link" data-channel="${escapeHtml(c.id)}" aria-current="${c.id === state.channel}">${label}</button>`;
    const channels = Object.values(state.channels).filter((c) => !c.is_im && inTeam(channelTeam(c)));
    byTestId("channel-list").innerHTML = channels.map((c) => link(c, `# ${escapeHtml(c.name)}`)).join("");
    const dms = Object.values(state.channels).filter((c) => c.is_im && c.user === state.user);
    byTestId("dm-list").innerHTML = dms.map((c) => link(c, `● ${escapeHtml(state.bot.name)}`)).join("");
  }

  let shownView = null; // "id:hash" of the modal on screen, so typing survives re-renders
  function renderModal() {
    const overlay = byTestId("modal-overlay");
    const view = state.view;
    if (!view) {
      overlay.hidden = true;
      shownView = null;
      return;
    }
    const key = `${view.id}:${view.hash}:${JSON.stringify(state.viewErrors)}`;
    overlay.hidden = false;
    const modal = byTestId("modal");
    modal.dataset.viewId = view.id;
    modal.dataset.callbackId = view.view.callback_id || "";
    if (shownView === key) return;
    const typed = readModalValues();
    shownView = key;
    byTestId("modal-title").textContent = (view.view.title && view.view.title.text) || "";
    byTestId("modal-submit").textContent = (view.view.submit && view.view.submit.text) || "Submit";
    byTestId("modal-submit").hidden = !view.view.submit;
    byTestId("modal-close").textContent = (view.view.close && view.view.close.text) || "Cancel";
    byTestId("modal-body").innerHTML = renderBlocks(view.view.blocks || [], { ts: "", channel: "" });
    for (const input of modal.querySelectorAll('[data-testid="modal-input"]')) {
      const saved = typed[input.dataset.blockId] && typed[input.dataset.blockId][input.dataset.actionId];
      if (saved !== undefined) input.value = saved;
    }
    const general = state.viewErrors[""];
    const box = byTestId("modal-error");
    box.hidden = !general;
    box.textContent = general || "";
  }

  function readModalValues() {
    const values = {};
    for (const input of document.querySelectorAll('[data-testid="modal-input"]')) {
      values[input.dataset.blockId] = values[input.dataset.blockId] || {};
      values[input.dataset.blockId][input.dataset.actionId] = input.value;
    }
    return values;
  }

  // ------------------------------------------------------------------ state + live updates

  const key = (m) => `${m.channel}/${m.ts}`;

  // A snapshot can be older than events that arrive while it is being fetched: buffer
  // those events and re-apply the ones newer than the snapshot, so nothing is lost.
  let loading = 0;
  let buffered = [];

  async function loadState() {
    loading += 1;
    let data;
    try {
      const response = await fetch(`/sim/state?user=${encodeURIComponent(state.user)}`);
      data = await response.json();
    } finally {
      loading -= 1;
    }
    const replay = buffered.filter((event) => event.seq > data.seq);
    if (loading === 0) buffered = [];
    state.team = data.team;
    state.bot = data.bot;
    state.users = Object.fromEntries(data.users.map((u) => [u.id, u]));
    state.channels = Object.fromEntries(data.channels.map((c) => [c.id, c]));
    state.workspaces = data.workspaces || [];
    state.messages = new Map(data.messages.map((m) => [key(m), m]));
    if (state.openedAfter === null) {
      state.openedAfter = data.latest_ts || "0";
      state.staleViews = new Set(data.views.map((v) => v.id));
    }
    const fresh = data.ephemerals.filter((e) => tsAfter(e.ts, state.openedAfter));
    state.ephemerals = new Map(fresh.map((e) => [e.ts, e]));
    state.connections = data.connections;
    const open = data.views.filter(
      (v) => (v.user === state.user || v.user === null) && !state.staleViews.has(v.id),
    );
    state.view = open.length ? open[open.length - 1] : null;
    if (!state.users[state.user] || state.users[state.user].is_bot) {
      const first = data.users.find((u) => !u.is_bot);
      state.user = first ? first.id : state.user;
    }
    if (!state.channels[state.channel]) state.channel = Object.keys(state.channels)[0] || state.channel;
    if (several() && channelTeam(state.channels[state.channel] || {}) !== currentTeam()) {
      const home = firstChannelOf(currentTeam()); // a channel of the person's own workspace
      if (home) state.channel = home.id;
      remember();
    }
    state.ready = true;
    for (const event of replay) apply(event);
    render();
  }

  function apply(event) {
    switch (event.kind) {
      case "hello":
        loadState();
        state.connections = event.connections;
        break;
      case "message_posted":
      case "message_updated":
      case "reaction_added":
        if (event.message) state.messages.set(key(event.message), event.message);
        break;
      case "workspaces": // GRACE was installed to a workspace
        state.workspaces = event.workspaces || [];
        break;
      case "message_deleted":
        state.messages.delete(`${event.channel}/${event.ts}`);
        break;
      case "ephemeral_posted":
      case "ephemeral_updated":
        if (event.message && event.message.user === state.user) {
          state.ephemerals.set(event.message.ts, event.message);
          const threadTs = event.message.thread_ts;
          if (event.kind === "ephemeral_posted" && threadTs && event.message.channel === state.channel
              && state.messages.has(`${state.channel}/${threadTs}`)) {
            state.thread = threadTs; // show the ephemeral where it was posted
          }
        }
        break;
      case "view_opened":
      case "view_updated":
        if (event.view && (event.view.user === state.user || event.view.user === null)) {
          state.view = event.view;
          if (event.kind === "view_opened") state.viewErrors = {};
        }
        break;
      case "view_closed":
        if (state.view && event.view && state.view.id === event.view.id) {
          state.view = null;
          state.viewErrors = {};
        }
        break;
      case "reset":
        loadState();
        return;
      case "connection":
        state.connections = event.connections;
        break;
      case "delivery_failed":
        notice(`Socket Mode: ${event.delivery.summary}`, true);
        break;
      default:
        break;
    }
    render();
  }

  function connect() {
    const source = new EventSource("/sim/events");
    source.onmessage = (e) => {
      try {
        const event = JSON.parse(e.data);
        if (loading > 0 && event.kind !== "hello") buffered.push(event);
        apply(event);
      } catch (err) {
        console.error("bad event", err, e.data);
      }
    };
    source.onerror = () => {
      state.connections = 0;
      render();
    };
  }

  // ------------------------------------------------------------------ actions

  function notice(text, error = false) {
    const box = byTestId("notices");
    const item = document.createElement("div");
    item.className = `notice${error ? " error" : ""}`;
    item.dataset.testid = "notice";
    item.textContent = text;
    box.appendChild(item);
    setTimeout(() => item.remove(), 6000);
  }

  // An extra stream of /sim/events for a pane script: `onEvent` gets each event parsed
  // (a line that is not JSON is skipped).
  function listen(onEvent) {
    const source = new EventSource("/sim/events");
    source.onmessage = (e) => {
      let event;
      try {
        event = JSON.parse(e.data);
      } catch (err) {
        return;
      }
      onEvent(event);
    };
    return source;
  }

  // Per-thread records a pane script keeps in step with the server (the assistant pane's
  // threads, the agent sessions): loaded from `stateUrl` (its `listKey` list), replaced one
  // by one by `updatedKind` events, loaded again on hello/reset; `onChange` runs after each.
  function threadRecords(stateUrl, listKey, updatedKind, onChange) {
    const records = new Map(); // "channel/thread_ts" -> record
    const put = (r) => records.set(`${r.channel}/${r.thread_ts}`, r);
    async function refresh() {
      const response = await fetch(stateUrl);
      const data = await response.json();
      records.clear();
      for (const r of data[listKey]) put(r);
      onChange();
    }
    listen((event) => {
      if (event.kind === updatedKind && event.thread) {
        put(event.thread); // every update in turn, none skipped
        onChange();
      } else if (event.kind === "hello" || event.kind === "reset") refresh();
    });
    refresh();
    return {
      put,
      // the record of the thread the page shows, if any
      current: () =>
        state.thread ? records.get(`${state.channel}/${state.thread}`) || null : null,
    };
  }

  // A pane script's own styles.
  function addStyle(css) {
    const style = document.createElement("style");
    style.textContent = css;
    document.head.appendChild(style);
  }

  async function post(url, body) {
    const response = await fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    let data = {};
    try {
      data = await response.json();
    } catch (err) {
      data = { ok: false, error: `HTTP ${response.status}` };
    }
    return data;
  }

  async function send(textarea, threadTs) {
    const text = textarea.value;
    if (!text.trim()) return;
    textarea.value = "";
    const result = await post("/sim/messages", {
      user: state.user, channel: state.channel, text, thread_ts: threadTs || null,
    });
    if (result.command) {
      if (!result.ok) notice(`${text.trim().split(" ")[0]}: ${result.error}`, true);
      return;
    }
    if (!result.ok) {
      textarea.value = text;
      notice(`Could not post: ${result.error}`, true);
      return;
    }
    state.messages.set(key(result.message), result.message);
    const mentionsBot = result.message.text.includes(`<@${state.bot.user_id}>`);
    const channel = state.channels[state.channel] || {};
    if (!threadTs && (mentionsBot || channel.is_im)) state.thread = result.message.ts;
    render();
  }

  function confirmDialog(confirm) {
    return new Promise((resolve) => {
      const overlay = byTestId("confirm-overlay");
      byTestId("confirm-title").textContent = confirm.title ? confirm.title.text : "Are you sure?";
      byTestId("confirm-text").innerHTML = confirm.text ? textObject(confirm.text) : "";
      const ok = byTestId("confirm-ok");
      const deny = byTestId("confirm-deny");
      ok.textContent = confirm.confirm ? confirm.confirm.text : "Yes";
      deny.textContent = confirm.deny ? confirm.deny.text : "Cancel";
      ok.classList.toggle("danger", confirm.style === "danger" || !confirm.style);
      overlay.hidden = false;
      const done = (answer) => {
        overlay.hidden = true;
        ok.onclick = null;
        deny.onclick = null;
        resolve(answer);
      };
      ok.onclick = () => done(true);
      deny.onclick = () => done(false);
    });
  }

  async function click(button) {
    if (button.dataset.url) window.open(button.dataset.url, "_blank", "noopener");
    if (button.dataset.confirm) {
      const confirmed = await confirmDialog(JSON.parse(button.dataset.confirm));
      if (!confirmed) return;
    }
    button.disabled = true;
    button.dataset.pending = "true";
    const result = await post("/sim/actions", {
      user: state.user,
      channel: button.dataset.channel,
      message_ts: button.dataset.messageTs,
      action_id: button.dataset.actionId,
      value: button.dataset.value,
    });
    button.disabled = false;
    button.dataset.pending = "false";
    if (!result.ok && result.error !== "not_acked" && result.error !== "not_connected") {
      notice(`Click failed: ${result.error}`, true);
    }
  }

  async function submitModal() {
    const view = state.view;
    if (!view) return;
    const submit = byTestId("modal-submit");
    submit.disabled = true;
    const result = await post(`/sim/views/${encodeURIComponent(view.id)}/submit`, {
      user: state.user, values: readModalValues(),
    });
    submit.disabled = false;
    if (result.view_closed) {
      state.view = null;
      state.viewErrors = {};
    } else {
      state.viewErrors = result.errors || (result.error ? { "": result.error } : {});
      shownView = null;
    }
    render();
  }

  async function closeModal() {
    const view = state.view;
    if (!view) return;
    state.view = null;
    state.viewErrors = {};
    render();
    await post(`/sim/views/${encodeURIComponent(view.id)}/close`, { user: state.user });
  }

  function remember() {
    localStorage.setItem("grace-sim-user", state.user);
    localStorage.setItem("grace-sim-channel", state.channel);
    const url = new URL(location.href);
    url.searchParams.set("user", state.user);
    url.searchParams.set("channel", state.channel);
    if (state.thread) url.searchParams.set("thread", state.thread);
    else url.searchParams.delete("thread");
    history.replaceState(null, "", url);
  }

  // ------------------------------------------------------------------ wiring

  document.addEventListener("click", (e) => {
    const target = e.target.closest("button");
    if (!target) return;
    const id = target.dataset.testid;
    if (id === "button") click(target);
    else if (id === "thread-link" || id === "reply-button") {
      state.thread = target.dataset.threadTs;
      remember();
      render();
      setTimeout(() => byTestId("thread-composer-input").focus(), 0);
    } else if (id === "thread-close") {
      state.thread = null;
      remember();
      render();
    } else if (id === "channel-link") {
      state.channel = target.dataset.channel;
      state.thread = null;
      remember();
      render();
    } else if (id === "modal-submit") submitModal();
    else if (id === "modal-close" || id === "modal-x") closeModal();
  });

  byTestId("user-switcher").addEventListener("change", (e) => {
    state.user = e.target.value;
    state.thread = null;
    const dm = state.channels[state.channel];
    if (dm && dm.is_im) state.channel = "C0GENERAL1";
    remember();
    loadState();
  });

  byTestId("workspace-switcher").addEventListener("change", (e) => {
    const [person] = peopleOf(e.target.value);
    const home = firstChannelOf(e.target.value);
    if (!person || !home) return;
    state.user = person.id;
    state.channel = home.id;
    state.thread = null;
    remember();
    loadState();
  });
  const submitOnEnter = (textarea, threadTs) => (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      send(textarea, threadTs());
    }
  };
  const mainInput = byTestId("composer-input");
  const threadInput = byTestId("thread-composer-input");
  mainInput.addEventListener("keydown", submitOnEnter(mainInput, () => null));
  threadInput.addEventListener("keydown", submitOnEnter(threadInput, () => state.thread));
  byTestId("composer").addEventListener("submit", (e) => {
    e.preventDefault();
    send(mainInput, null);
  });
  byTestId("thread-composer").addEventListener("submit", (e) => {
    e.preventDefault();
    send(threadInput, state.thread);
  });
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && state.view && byTestId("confirm-overlay").hidden) closeModal();
  });

  // Exposed for browser tests and debugging: the page's model and helpers.
  window.graceSim = {
    state, mrkdwn, render: renderNow, loadState, renderBlocks,
    $, byTestId, post, listen, threadRecords, addStyle,
  };

  remember();
  connect();
  setTimeout(() => {
    if (!state.ready) loadState(); // no event stream (a proxy?): still show the channel
  }, 2000);
})();
