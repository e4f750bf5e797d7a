"""`grace --help` and argument errors answer at once: building the parser imports none of
the heavy libraries (they load inside the commands that use them). `grace ask` on the
embedded knowledge base (Qdrant Edge) and the offline model loads only what it uses:
not qdrant-client (a second to import; only for a Qdrant server), numpy, Alembic (the
database is already at the latest schema), SQLAlchemy's PostgreSQL dialect, google-genai
or the Slack libraries."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from agent.schemas import RunStatus
from bot.cli.parser import RUN_STATUSES
from tests.durable.helpers import copy_data_dir, grace_env

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


NOT_FOR_ASK = (
    "aiohttp",
    "alembic",
    "google",
    "httpx",
    "matplotlib",
    "numpy",
    "qdrant_client",
    "slack_bolt",
    "slack_sdk",
    "sqlalchemy.dialects.postgresql",
)


def _loaded_after(
    code: str, heavy: tuple[str, ...] = HEAVY, env: dict[str, str] | None = None
) -> list[str]:
    """The `heavy` packages (or modules) a fresh interpreter holds after running `code`."""
    probe = (
        "import io, sys\n"
        "sys.stdout = sys.stderr = io.StringIO()\n"
        f"{code}\n"
        "sys.stdout = sys.__stdout__\n"
        f"held = {{p for m in sys.modules for p in {heavy!r} if m == p or m.startswith(p + '.')}}\n"
        "print(' '.join(sorted(held)))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        env=env,
    )
    return result.stdout.split()


def test_importing_the_cli_and_building_its_parser_loads_no_heavy_library() -> None:
    assert _loaded_after("import bot.cli.main; bot.cli.main.build_parser()") == []


def test_help_and_a_bad_argument_load_no_heavy_library() -> None:
    shown = (
        "import bot.cli.main\ntry:\n    bot.cli.main.main(['--help'])\nexcept SystemExit:\n    pass"
    )
    assert _loaded_after(shown) == []
    refused = "import bot.cli.main; assert bot.cli.main.main(['runs', '--status', 'nope']) == 2"
    assert _loaded_after(refused) == []


def test_purge_and_reembed_load_their_stores_only_when_they_run() -> None:
    """`grace purge` with a date that is not one is refused before any store is loaded:
    its SQL (storage.retention) and reembed's knowledge base load inside the commands."""
    refused = (
        "import bot.cli.main\n"
        "assert bot.cli.main.main(['purge', '--before', 'someday']) == 2\n"
        "assert bot.cli.main.main(['reembed', '--nope']) == 2"
    )
    assert _loaded_after(refused) == []


def test_the_status_choices_are_the_run_statuses() -> None:
    assert RUN_STATUSES == tuple(s.value for s in RunStatus)


def test_ask_on_the_embedded_knowledge_base_loads_only_what_it_uses(
    sample_data_dir: Path, tmp_path: Path
) -> None:
    env = grace_env(copy_data_dir(sample_data_dir, tmp_path / "data"))  # the offline model
    env.pop("QDRANT_URL", None)  # the embedded knowledge base
    ask = (
        "import bot.cli.main\n"
        "code = bot.cli.main.main(['ask', 'How many vacation days do new employees get?', "
        "'--json', '--no-input'])\n"
        "assert code == 0, code"
    )
    # It did search the knowledge base and store the run in SQLite, and loaded nothing else.
    held = _loaded_after(ask, ("qdrant_edge", "sqlalchemy", *NOT_FOR_ASK), env)
    assert held == ["qdrant_edge", "sqlalchemy"]
