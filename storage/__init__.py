"""Durable storage (SPEC §5): the only package in the project that speaks SQL.

One module per aggregate, each a small store class on a shared engine (storage/sql.py):
runs.py (runs, versions, audit trail), leases.py, interventions.py (claims),
message_refs.py (where a run's Slack messages are), workspace_notes.py, feedback.py
(votes and the thresholds they move), stats.py, ledger.py (money spent), inbox.py and
outbox.py (what Slack sent us, what we owe Slack), sources.py (remembered knowledge
sources and task leases), verified_answers.py, calibrations.py (fitted confidence maps),
threshold_audit.py (who moved the thresholds), retention.py (forgetting old runs).
run_store.py puts the run-side ones
behind one object, `SqlRunStore`, for the callers that take one store. db.py makes the
engine and migrates (migrations/; migrations/columns.py holds the column sets several
revisions write, frozen); tables.py is the schema; errors.py turns every
database failure into a `StorageError` with one line saying what to do.
"""

from __future__ import annotations

from storage.db import default_database_url, make_engine, migrate
from storage.errors import StorageError
from storage.ledger import SqlUsageLedger
from storage.run_store import RecordedEvent, SqlRunStore

__all__ = [
    "RecordedEvent",
    "SqlRunStore",
    "SqlUsageLedger",
    "StorageError",
    "default_database_url",
    "make_engine",
    "migrate",
]
