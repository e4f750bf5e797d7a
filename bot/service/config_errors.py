"""A bad setting as one line a person can act on.

pydantic's `ValidationError` prints a block per field (its location, its message, a
link); the command line and `grace serve` promise one line, never a block, so each
error becomes `VARIABLE: why (got 'value')`, joined with `; `, naming the environment
variable to fix rather than the field's path in the model."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

ENV_PREFIX = "GRACE_"
NESTED = "__"
_SHOWN_INPUT = 40


def variable_name(location: tuple[int | str, ...]) -> str:
    """The environment variable behind a field's location: ("slack", "port") →
    GRACE_SLACK__PORT; an alias already spelled as a variable (GOOGLE_API_KEY) as is."""
    parts = [str(part) for part in location if not isinstance(part, int)]
    if not parts:
        return "a GRACE_ setting"
    if parts[0].isupper():
        return NESTED.join(parts)
    return ENV_PREFIX + NESTED.join(part.upper() for part in parts)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _SHOWN_INPUT else text[: _SHOWN_INPUT - 1] + "…"


def configuration_error_line(errors: Sequence[Mapping[str, Any]]) -> str:
    """`errors` (`ValidationError.errors()`) as one line ending with what to do. The
    value given is shown only for plain settings, never for a secret's."""
    parts = []
    for error in errors:
        name = variable_name(tuple(error.get("loc", ())))
        message = str(error.get("msg", "invalid value")).removeprefix("Value error, ")
        given = error.get("input")
        secret = any(word in name for word in ("TOKEN", "SECRET", "KEY", "PASSWORD", "URL"))
        shown = "" if secret or isinstance(given, dict) else f" (got {_shown(given)})"
        parts.append(f"{name}: {message}{shown}")
    return (
        "invalid configuration: "
        + "; ".join(parts)
        + " — fix it in the environment or in .env"
        + " (docs/configuration.md and .env.example list every setting)."
    )


def other_configuration_error_line(exc: BaseException, config_file: str | None) -> str:
    """A failure to read the settings that is not a validation error — a YAML file
    (`GRACE_CONFIG_FILE`) that does not parse, or has no mapping at its top — as one
    line: the message's lines joined, the file named."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    where = f"GRACE_CONFIG_FILE ({config_file}) could not be read: " if config_file else ""
    return f"invalid configuration: {where}{text} — fix it and run this again."
