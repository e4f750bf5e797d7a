"""Delivery to Slack, after the fact and exactly once: the outbox publisher that brings a
run's thread in step with its stored state (`publisher`, `thread_sync`), the plan as a
streamed reply (`plan_stream`, `stream_progress`), the assistant pane's status line
(`assistant_status`), and the conventions of every Web API call (`web_api`)."""
