"""Suite-wide fixtures."""

from __future__ import annotations

pytest_plugins = ["tests.fakes.gemini_fixtures", "tests.ordering"]
