"""Pure functions from GRACE's domain objects (agent.schemas) to Slack Block Kit payloads.

No I/O here: the Slack layer posts what these build. `ids` holds the action ids the
listeners register and the codecs for button values and modal metadata; `limits` keeps
every payload inside Slack's limits.
"""
