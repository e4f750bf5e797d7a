"""A local Slack: workspace state, Web API, Socket Mode and a web page (`grace dev`).

- `workspace` — `SlackWorkspace`: channels, threads, messages, ephemerals, modals, users;
  saved to JSON so history survives restarts.
- `webapi` — `FakeSlack`: the Web API subset the bot uses, over a workspace.
- `assistant` — the legacy assistant pane (`assistant.threads.*`, `assistant_thread_started`).
- `sessions` — agent sessions (`agents.sessions.*`), the Stop button
  (`agent_session_stopped`) and the Messages tab (`app_home_opened`).
- `panes` — what the page's side panes (assistant, App Home, sessions) share: the posted
  body and the person it names.
- `requests` — what Slack sends to an app (events, interactivity, slash commands).
- `socket_mode` — `apps.connections.open` and the Socket Mode WebSocket.
- `relay` — turns what people do (post, click, submit, `/grace`) into envelopes.
- `ui` — the page and the JSON / Server-Sent Events endpoints it uses.
- `server` — `SlackSimulator`: all of the above in one aiohttp application.
"""
