"""The application around the agent, by layer (imports point inward, `service` first):

- `service/` — neither Slack nor the command line: settings, wiring, upkeep, tasks.
- `slack/` — the Slack surface: the Bolt app, listeners, durable intake, delivery.
- `cli/` — the `grace` command line.
- `simulator/` — a local Slack for `grace dev` and the tests.
"""
