"""Structured logs: one JSON object per line, with the run id when there is one."""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime

_STANDARD = set(vars(logging.makeLogRecord({})).keys()) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        payload: dict[str, object] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD and not key.startswith("_"):
                payload[key] = value
        if record.exc_info:
            payload["exc"] = self.formatException(record.exc_info)
        return json.dumps(payload, ensure_ascii=False, default=str)


CONTENT_LOGGERS = ("aiosqlite", "sqlalchemy.engine", "google_genai", "google.genai")
"""Libraries that log SQL parameters or request bodies — people's questions and
answers — at DEBUG or INFO: quiet unless `log_content` is set."""


def configure_logging(level: str = "INFO", fmt: str = "json", *, log_content: bool = False) -> None:
    """Logs carry ids, statuses and numbers; what people wrote appears only with
    `log_content` (GRACE_LOG_CONTENT=true), e.g. to debug a question locally."""
    handler = logging.StreamHandler(sys.stderr)
    if fmt == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    for noisy in ("httpx", "httpcore", "aiohttp.access", "slack_bolt", "slack_sdk"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, root.level))
    for name in CONTENT_LOGGERS:
        logging.getLogger(name).setLevel(
            root.level if log_content else max(logging.WARNING, root.level)
        )
