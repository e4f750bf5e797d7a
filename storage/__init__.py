"""Durable storage (SPEC §5): the only package in the project that speaks SQL."""

from __future__ import annotations

from storage.db import default_database_url, make_engine, migrate
from storage.ledger import SqlUsageLedger
from storage.run_store import RecordedEvent, SqlRunStore

__all__ = [
    "RecordedEvent",
    "SqlRunStore",
    "SqlUsageLedger",
    "default_database_url",
    "make_engine",
    "migrate",
]
