"""A start-up on an up-to-date database checks one row and never loads Alembic; a
database behind the code is still migrated."""

from __future__ import annotations

import ast
import asyncio
import subprocess
import sys
from pathlib import Path

from alembic.script import ScriptDirectory

from storage.db import MIGRATIONS_DIR, alembic_config, current_revision, head_revision, migrate
from tests.databases import sqlite_url


def test_the_head_read_from_file_names_is_alembics_head() -> None:
    script = ScriptDirectory.from_config(alembic_config("sqlite+aiosqlite://"))
    assert head_revision() == script.get_current_head()


def test_every_revision_id_is_its_file_name() -> None:
    for path in (MIGRATIONS_DIR / "versions").glob("[0-9]*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        values = {
            node.target.id: node.value.value
            for node in tree.body
            if isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and isinstance(node.value, ast.Constant)
        }
        assert values["revision"] == path.stem, path.name


def test_an_up_to_date_database_is_opened_without_alembic(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path)
    asyncio.run(migrate(url))
    probe = (
        "import asyncio, sys\n"
        "from storage.db import migrate\n"
        f"asyncio.run(migrate({url!r}))\n"
        "print(sorted(m for m in ('alembic', 'mako') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    assert result.stdout.strip() == "[]"
    assert asyncio.run(current_revision(url)) == head_revision()


async def test_a_database_behind_the_code_is_still_upgraded(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path)
    await migrate(url, revision="0001_initial")
    assert await current_revision(url) == "0001_initial"
    await migrate(url)
    assert await current_revision(url) == head_revision()
