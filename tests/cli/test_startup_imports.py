"""`grace --help` and argument errors answer at once: building the parser imports none of
the heavy libraries (they load inside the commands that use them)."""

from __future__ import annotations

import subprocess
import sys

from agent.schemas import RunStatus
from bot.cli import RUN_STATUSES

HEAVY = (
    "agent",
    "aiohttp",
    "blocks",
    "google",
    "matplotlib",
    "numpy",
    "pydantic",
    "qdrant_client",
    "slack_bolt",
    "slack_sdk",
    "sqlalchemy",
    "storage",
)


def _loaded_after(code: str) -> list[str]:
    """The heavy packages a fresh interpreter holds after running `code`."""
    probe = (
        "import io, sys\n"
        "sys.stdout = sys.stderr = io.StringIO()\n"
        f"{code}\n"
        "sys.stdout = sys.__stdout__\n"
        f"print(' '.join(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    return result.stdout.split()


def test_importing_the_cli_and_building_its_parser_loads_no_heavy_library() -> None:
    assert _loaded_after("import bot.cli; bot.cli._parser()") == []


def test_help_and_a_bad_argument_load_no_heavy_library() -> None:
    shown = "import bot.cli\ntry:\n    bot.cli.main(['--help'])\nexcept SystemExit:\n    pass"
    assert _loaded_after(shown) == []
    refused = "import bot.cli; assert bot.cli.main(['runs', '--status', 'nope']) == 2"
    assert _loaded_after(refused) == []


def test_the_status_choices_are_the_run_statuses() -> None:
    assert RUN_STATUSES == tuple(s.value for s in RunStatus)
