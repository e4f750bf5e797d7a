"""compose.yaml and .env.example, checked without a Docker engine: the compose file
validates against the Compose Specification's JSON schema (vendored in tests/data/compose,
Apache-2.0, from github.com/compose-spec/compose-spec), its services wire GRACE to the
PostgreSQL and Qdrant services it declares, and `.env.example` is exactly what
scripts/env_example.py writes from the settings model — every setting, with its default."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit

import jsonschema
import pytest
import yaml

from bot.service.settings import load_settings
from storage.db import make_engine

REPO = Path(__file__).resolve().parents[1]
COMPOSE = REPO / "compose.yaml"
ENV_EXAMPLE = REPO / ".env.example"
SCHEMA = REPO / "tests" / "data" / "compose" / "compose-spec.json"
VARIABLE = re.compile(r"\$\{([A-Z_][A-Z0-9_]*)(?::?[-?][^}]*)?\}")


def env_example_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "env_example", REPO / "scripts" / "env_example.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    loaded = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def interpolate(text: str, values: dict[str, str]) -> str:
    """Compose's `${VAR}`, `${VAR:-default}` and `${VAR:?message}`, enough for a check."""

    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        whole = match.group(0)
        if name in values:
            return values[name]
        if ":-" in whole:
            return whole.split(":-", 1)[1][:-1]
        raise AssertionError(f"{name} is required by compose.yaml and has no value")

    return VARIABLE.sub(one, text)


def test_compose_file_validates_against_the_compose_spec(compose: dict[str, Any]) -> None:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft7Validator(schema).validate(compose)


def test_an_invalid_compose_file_is_caught_by_the_schema() -> None:
    """The schema check can fail: a service with an unknown key is refused."""
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft7Validator(schema).validate({"services": {"grace": {"replica": 2}}})


def test_two_grace_replicas_with_postgres_and_a_qdrant_server(compose: dict[str, Any]) -> None:
    services = compose["services"]
    grace, postgres, qdrant = services["grace"], services["postgres"], services["qdrant"]
    assert grace["deploy"]["replicas"] >= 2
    assert grace["build"] == "."
    assert grace["command"] == ["grace", "serve", "--port", "3000"]
    assert grace["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert "healthcheck" in postgres
    assert re.fullmatch(r"qdrant/qdrant:v\d+\.\d+\.\d+", qdrant["image"]), "pin Qdrant"
    assert re.fullmatch(r"postgres:\d+", postgres["image"]), "pin PostgreSQL's major"

    values = {"POSTGRES_PASSWORD": "s3cret", "QDRANT_API_KEY": "k"}
    env = {k: interpolate(str(v), values) for k, v in grace["environment"].items()}
    database = urlsplit(env["GRACE_DATABASE_URL"])
    pg_env = {k: interpolate(str(v), values) for k, v in postgres["environment"].items()}
    assert database.hostname == "postgres"
    assert database.username == pg_env["POSTGRES_USER"]
    assert database.password == pg_env["POSTGRES_PASSWORD"]
    assert database.path == "/" + pg_env["POSTGRES_DB"]
    assert urlsplit(env["QDRANT_URL"]).hostname == "qdrant"
    qdrant_env = {k: interpolate(str(v), values) for k, v in qdrant["environment"].items()}
    assert env["GRACE_KNOWLEDGE__QDRANT_API_KEY"] == qdrant_env["QDRANT__SERVICE__API_KEY"]

    # The URL is one GRACE accepts: a PostgreSQL engine with the asyncpg driver.
    engine = make_engine(env["GRACE_DATABASE_URL"])
    assert (engine.dialect.name, engine.dialect.driver) == ("postgresql", "asyncpg")


def test_compose_reads_only_known_variables(compose: dict[str, Any]) -> None:
    """Every variable compose.yaml sets for GRACE is a setting GRACE reads, and every
    `${VAR}` it interpolates is listed in .env.example."""
    module = env_example_module()
    settings = {variable for _, variable, _ in module.settings_lines()}
    for name in compose["services"]["grace"]["environment"]:
        assert name in settings, f"compose.yaml sets {name}, which GRACE does not read"
    used = set(VARIABLE.findall(COMPOSE.read_text(encoding="utf-8")))
    documented = set(re.findall(r"^# ([A-Z_][A-Z0-9_]*)=", ENV_EXAMPLE.read_text(), re.M))
    assert used <= documented, f"not in .env.example: {sorted(used - documented)}"


def test_env_example_is_what_the_settings_model_writes() -> None:
    expected = env_example_module().render()
    assert ENV_EXAMPLE.read_text(encoding="utf-8") == expected, (
        "`.env.example` is out of date: python scripts/env_example.py > .env.example"
    )


def test_every_documented_default_is_accepted_by_the_settings(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Each line of .env.example, uncommented as it stands, loads: names and values are
    ones the settings model takes (a wrong name would be ignored, so also check that a
    changed value of a nested setting is read back)."""
    monkeypatch.chdir(tmp_path)  # no stray .env
    lines = env_example_module().settings_lines()
    for _, variable, default in lines:
        if default:
            monkeypatch.setenv(variable, default)
    settings = load_settings()
    assert settings.confidence.thresholds.silent == 0.9
    monkeypatch.setenv("GRACE_EXECUTION__TOP_K", "7")
    assert load_settings().execution.top_k == 7
