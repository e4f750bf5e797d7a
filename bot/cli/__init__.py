"""The `grace` command line (console script: `bot.cli.main:main`; `python -m bot.cli`).

- `main` — dispatch: settings, logging, services, the command's handler, the exit code.
- `parser` — every subcommand's arguments (imports nothing heavy: `--help` is instant).
- one module per command or small group: `ingest`, `ask`, `runs` (runs, show),
  `answers` (resume, feedback), `upkeep` (recover, sweep, thresholds), `eval_cli`.
- shared: `errors` (exit codes, one-line errors), `output` and `report` (a run printed,
  the `--json` contract), `observer` (progress on a terminal), `prompts` (a pause
  answered at the terminal), `progress` (progress bars).
"""
