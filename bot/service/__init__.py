"""What is neither Slack nor the command line, and both use.

- `settings` — the one settings object; `logs` — log formats and levels.
- `wiring` — builds `Services` from settings: the only place that picks concrete classes.
- `sweeper` — expiry, recovery and pruning passes; `tasks` — the background lanes.
- `feedback` — a 👍/👎 vote, and the thresholds it teaches.
"""
