"""The one settings object: environment, nested sections, YAML, validation."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from bot.service.settings import Settings


def test_defaults_are_the_embedded_offline_setup(clean_env: pytest.MonkeyPatch) -> None:
    settings = Settings()
    assert settings.use_gemini is False
    assert settings.data_dir == Path(".grace")
    assert settings.resolved_database_url.startswith("sqlite+aiosqlite:///")
    assert settings.resolved_database_url.endswith("/.grace/grace.db")
    assert settings.confidence.thresholds.silent == 0.9
    assert settings.replan.max_replans == 3
    assert settings.approvers == []


def test_environment_with_nested_sections_and_plain_names(
    clean_env: pytest.MonkeyPatch,
) -> None:
    clean_env.setenv("GRACE_CONFIDENCE__THRESHOLDS__SILENT", "0.95")
    clean_env.setenv("GRACE_REPLAN__MAX_REPLANS", "1")
    clean_env.setenv("GRACE_APPROVERS", "U1, U2")
    clean_env.setenv("GOOGLE_API_KEY", "key")
    clean_env.setenv("QDRANT_URL", "http://qdrant:6333")
    settings = Settings()
    assert settings.confidence.thresholds.silent == 0.95
    assert settings.agent_config().replan.max_replans == 1
    assert settings.approvers == ["U1", "U2"]
    assert settings.use_gemini is True
    assert settings.qdrant_url == "http://qdrant:6333"
    clean_env.setenv("GRACE_LLM__PROVIDER", "offline")
    assert Settings().use_gemini is False


def test_yaml_file(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    config = tmp_path / "grace.yaml"
    config.write_text(
        "intervention:\n  expiry_hours: 2\n  auto_proceed_on_timeout: true\n"
        "cost:\n  max_usd_per_day: 3\n",
        encoding="utf-8",
    )
    clean_env.setenv("GRACE_CONFIG_FILE", str(config))
    clean_env.setenv("GRACE_COST__MAX_USD_PER_DAY", "7")  # the environment wins
    settings = Settings()
    assert settings.intervention.expiry_hours == 2
    assert settings.intervention.auto_proceed_on_timeout is True
    assert settings.cost.max_usd_per_day == 7


def test_unordered_thresholds_are_refused(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("GRACE_CONFIDENCE__THRESHOLDS__CONFIRM", "0.95")
    with pytest.raises(ValidationError, match="silent >= notify >= confirm"):
        Settings()


def test_the_cli_reports_bad_configuration_without_a_traceback(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRACE_")}
    env["GRACE_REPLAN__MAX_REPLANS"] = "many"
    result = subprocess.run(
        [sys.executable, "-m", "bot.cli", "runs"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert "invalid configuration" in result.stderr
    assert "GRACE_REPLAN__MAX_REPLANS" in result.stderr
    assert "Traceback" not in result.stderr
