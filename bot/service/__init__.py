"""What is neither Slack nor the command line: settings, wiring, upkeep, tasks, feedback."""
