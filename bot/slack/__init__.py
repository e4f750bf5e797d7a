"""The Slack surface.

- `compose` — the bot's composition root: builds every Slack part, hands the intake one
  handler per inbox kind and the orchestrator its observers (nothing registers itself).
- `app`, `listeners/` — the Bolt app and what it listens to; each listener stores a typed
  item (`items`) in the durable inbox (`intake`) before the ack and holds its processor.
- `conversation` — what a message means for its thread's runs.
- `delivery/` — a run's thread brought in step with its stored state (outbox publisher,
  plan stream, assistant status line).
- `http_guard`, `inbound`, `identity` — what arrives before Bolt sees it; who the bot is.
- `runners` (`grace serve`), `dev` (`grace dev`: the bot against the simulator).
"""
