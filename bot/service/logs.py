"""Logs for people on a terminal, JSON lines for machines.

`auto` (the default) picks by where stderr goes: a terminal gets short text lines and only
warnings (the command's own output is what a person reads there); anything else — a file,
a pipe, a container's log collector — gets one JSON object per line, with the run id when
there is one, from INFO up. Other libraries' logs (Alembic, google-genai, aiosqlite, httpx,
Bolt …) show from WARNING up whatever the level, unless the level is DEBUG.
"""

from __future__ import annotations

import json
import logging
import re
import sys
from datetime import UTC, datetime
from typing import TextIO

_STANDARD = set(vars(logging.makeLogRecord({})).keys()) | {"message", "asctime"}
OUR_PACKAGES = ("agent", "bot", "storage", "blocks", "__main__")
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s %(message)s"


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


_TOKEN = re.compile(
    r"\bxox[a-z]-[A-Za-z0-9-]+|\bxoxe\.xox[a-z]-[A-Za-z0-9-]+|\bxoxe-[0-9]-[A-Za-z0-9-]+"
)


class RedactTokens(logging.Filter):
    """No Slack token in any log line, whoever logs it and at whatever level: slack_sdk
    logs request headers and `oauth.v2.access` answers at DEBUG (issue 21)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if "xox" in message:
            record.msg, record.args = _TOKEN.sub("xox…[redacted]", message), None
        return True


class LibraryFilter(logging.Filter):
    """Lets other libraries' records through only from `floor` up: their INFO lines
    ("Context impl SQLiteImpl.", "AFC is enabled …") are noise to a GRACE user."""

    def __init__(self, floor: int) -> None:
        super().__init__()
        self.floor = floor

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= self.floor:
            return True
        return record.name.split(".", 1)[0] in OUR_PACKAGES


def resolve_logging(
    level: str = "auto", fmt: str = "auto", *, tty: bool, server: bool = False
) -> tuple[int, str]:
    """(level, format) for these settings: `auto` means text at WARNING on a terminal
    (INFO for the long-running `serve` and `dev`), JSON at INFO elsewhere."""
    resolved_fmt = fmt if fmt != "auto" else ("text" if tty else "json")
    if level.lower() == "auto":
        resolved_level = logging.INFO if server or not tty else logging.WARNING
    else:
        resolved_level = logging.getLevelNamesMapping()[level.upper()]
    return resolved_level, resolved_fmt


def configure_logging(
    level: str = "auto",
    fmt: str = "auto",
    *,
    server: bool = False,
    stream: TextIO | None = None,
    log_content: bool = False,
) -> None:
    """Logs carry ids, statuses and numbers; what people wrote appears only with
    `log_content` (GRACE_LOG_CONTENT=true), e.g. to debug a question locally."""
    stream = stream or sys.stderr
    tty = stream.isatty()
    resolved_level, resolved_fmt = resolve_logging(level, fmt, tty=tty, server=server)
    handler = logging.StreamHandler(stream)
    if resolved_fmt == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter(TEXT_FORMAT))
    handler.addFilter(RedactTokens())
    if resolved_level > logging.DEBUG:
        handler.addFilter(LibraryFilter(max(logging.WARNING, resolved_level)))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(resolved_level)
    for name in CONTENT_LOGGERS:
        logging.getLogger(name).setLevel(
            resolved_level if log_content else max(logging.WARNING, resolved_level)
        )
