"""The Slack surface: the Bolt app and its listeners, the durable intake, delivery to Slack."""
