"""Write `.env.example`: every setting GRACE reads, with its default, from the settings
model itself — so the file cannot drift from the code (tests/test_env_example.py checks
that it is what this script writes).

    python scripts/env_example.py > .env.example
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel, SecretStr
from pydantic.fields import FieldInfo

from bot.service.settings import Settings

HEADER = """\
# Every setting GRACE reads, with its default (written by scripts/env_example.py).
# Copy to `.env` and uncomment what you change: `grace` reads `.env` from the directory
# it starts in, and compose.yaml passes it to every replica. Nested settings use `__`
# (GRACE_LLM__MODEL). A commented line is the default; nothing here is required for the
# embedded defaults (offline model, embedded Qdrant, SQLite under GRACE_DATA_DIR).
# The same settings can come from a YAML file named by GRACE_CONFIG_FILE (environment
# variables win over it).
# GRACE_CONFIG_FILE=
"""


def _default_text(field: FieldInfo) -> str:
    """The default as it would be written in the environment."""
    if field.default_factory is not None:
        value = field.default_factory()  # type: ignore[call-arg]
    else:
        value = field.default
    if value is None or isinstance(value, SecretStr):
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    if isinstance(value, (int, float, str, Path)):
        return str(value)
    return json.dumps(value)


def _env_names(name: str, field: FieldInfo, prefix: str) -> list[str]:
    """The variable names a top-level field is read from: its alias(es) without the
    prefix first (SLACK_BOT_TOKEN), else GRACE_<NAME>."""
    alias = field.validation_alias
    choices = getattr(alias, "choices", None)
    if choices:
        return [str(c) for c in choices if isinstance(c, str)]
    return [f"{prefix}{name.upper()}"]


def settings_lines(
    model: type[BaseModel] = Settings, prefix: str = "GRACE_"
) -> Iterator[tuple[str, str, str]]:
    """(section, variable, default) for every leaf setting, nested ones flattened."""
    for name, field in model.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            for section, variable, default in settings_lines(
                annotation, f"{prefix}{name.upper()}__"
            ):
                yield (section if prefix != "GRACE_" else name), variable, default
            continue
        section = "general" if prefix == "GRACE_" else prefix
        yield section, _env_names(name, field, prefix)[0], _default_text(field)


COMPOSE = """
# --- compose.yaml only (read by `docker compose`, not by grace)
# POSTGRES_PASSWORD=          required: the password of the `grace` PostgreSQL user
# QDRANT_API_KEY=             required: the Qdrant server's API key (sent by every replica)
# GRACE_PUBLIC_HOST=:80       HTTP mode's public name (grace.example.com gets TLS)
"""

COMPOSE_VARIABLES = ("POSTGRES_PASSWORD", "QDRANT_API_KEY", "GRACE_PUBLIC_HOST")


def render() -> str:
    out = [HEADER]
    current = None
    for section, variable, default in settings_lines():
        if section != current:
            out.append(f"\n# --- {section}\n")
            current = section
        out.append(f"# {variable}={default}\n")
    out.append(COMPOSE)
    return "".join(out)


if __name__ == "__main__":
    sys.stdout.write(render())
