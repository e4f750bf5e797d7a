"""The Dockerfile, checked statically (no Docker engine here): base image, install step
(the README's `pip install` of the project), non-root user, data volume, exposed port,
the `grace serve` command, and a HEALTHCHECK command that is run for real."""

from __future__ import annotations

import asyncio
import json
import re
import shlex
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

REPO = Path(__file__).resolve().parents[1]
DOCKERFILE = REPO / "Dockerfile"
DOCKERIGNORE = REPO / ".dockerignore"
PORT = "3000"


@dataclass(frozen=True)
class Instruction:
    name: str
    args: str

    def exec_form(self) -> list[str]:
        """The JSON (exec) form of CMD / ENTRYPOINT / HEALTHCHECK CMD / VOLUME."""
        text = self.args
        if self.name == "HEALTHCHECK":
            text = text[text.index(" CMD ") + len(" CMD ") :]
        value = json.loads(text)
        assert isinstance(value, list) and all(isinstance(v, str) for v in value), value
        return value


def parse_dockerfile(text: str) -> list[Instruction]:
    """Instructions with line continuations joined and comment lines dropped."""
    instructions: list[Instruction] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1].strip() + " "
            continue
        full = (pending + line).strip()
        pending = ""
        name, _, args = full.partition(" ")
        instructions.append(Instruction(name.upper(), args.strip()))
    assert not pending, "Dockerfile ends inside a line continuation"
    return instructions


@pytest.fixture(scope="module")
def instructions() -> list[Instruction]:
    assert DOCKERFILE.is_file(), "Dockerfile is missing"
    return parse_dockerfile(DOCKERFILE.read_text(encoding="utf-8"))


def only(instructions: list[Instruction], name: str) -> Instruction:
    found = [i for i in instructions if i.name == name]
    assert len(found) == 1, f"expected one {name}, found {len(found)}"
    return found[0]


def pyproject() -> dict[str, Any]:
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


# --------------------------------------------------------------------------- tests


def test_base_image_is_python_311_slim(instructions: list[Instruction]) -> None:
    assert instructions[0].name == "FROM"
    assert only(instructions, "FROM").args == "python:3.11-slim"
    assert ">=3.11" in pyproject()["project"]["requires-python"]


def test_install_step_matches_the_readme(instructions: list[Instruction]) -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert re.search(r"pip install (-e )?\.(\s|$)", readme), "README installs with pip install"
    runs = [i for i in instructions if i.name == "RUN"]
    installs = [
        i
        for i in runs
        if re.search(r"(^|&&\s*)pip install (-e )?\"?\.(\[[a-z,]+\])?\"?(\s|$)", i.args) is not None
    ]
    assert len(installs) == 1, f"expected one `pip install .` step, got {[i.args for i in runs]}"
    install_at = instructions.index(installs[0])
    copied = set()
    for i in instructions[:install_at]:
        if i.name == "COPY":
            copied.update(shlex.split(i.args)[:-1])
    project = pyproject()
    needed = {"pyproject.toml", project["project"]["readme"]}
    needed |= set(project["tool"]["setuptools"]["packages"]["find"]["include"])
    needed = {n.rstrip("*") for n in needed}
    missing = needed - copied
    assert not missing, f"copied before `pip install .`: {copied}; missing {missing}"
    assert "." not in copied, "copy only what the package needs, not the whole context"


def test_image_has_the_postgresql_driver(instructions: list[Instruction]) -> None:
    """Replicas need PostgreSQL (GRACE_DATABASE_URL): the install step must take the
    extra that carries its driver, or the image stops at start-up for want of asyncpg."""
    extras = pyproject()["project"]["optional-dependencies"]
    assert any(dep.startswith("asyncpg") for dep in extras["postgres"])
    installs = [i.args for i in instructions if i.name == "RUN" and "pip install" in i.args]
    found = [re.search(r"pip install \"?\.\[([a-z,]+)\]", args) for args in installs]
    chosen = {extra for m in found if m for extra in m.group(1).split(",")}
    assert "postgres" in chosen, f"the image installs {installs}, without the postgres extra"


def test_runs_as_non_root_user(instructions: list[Instruction]) -> None:
    users = [i for i in instructions if i.name == "USER"]
    assert users, "no USER instruction: the image would run as root"
    assert users[-1].args == "grace"
    assert any(i.name == "RUN" and "useradd" in i.args and "grace" in i.args for i in instructions)
    assert only(instructions, "WORKDIR").args == "/app"


def test_data_volume(instructions: list[Instruction]) -> None:
    volume = only(instructions, "VOLUME")
    assert volume.exec_form() == ["/data"]
    env = " ".join(i.args for i in instructions if i.name == "ENV")
    assert re.search(r"(^|\s)GRACE_DATA_DIR=/data(\s|$)", env), env
    # The grace user must own /data before VOLUME, so a fresh named volume is writable.
    chown_at = next(
        n for n, i in enumerate(instructions) if i.name == "RUN" and "chown grace" in i.args
    )
    assert "/data" in instructions[chown_at].args
    assert chown_at < instructions.index(volume)


def test_cmd_serves_on_the_exposed_port(instructions: list[Instruction]) -> None:
    assert only(instructions, "EXPOSE").args == PORT
    assert only(instructions, "CMD").exec_form() == ["grace", "serve", "--port", PORT]
    assert not any(i.name == "ENTRYPOINT" for i in instructions)
    assert pyproject()["project"]["scripts"]["grace"] == "bot.cli.main:main"
    cli = (REPO / "bot" / "cli" / "parser.py").read_text(encoding="utf-8")
    assert 'add_parser("serve"' in cli and '"--port"' in cli


def test_healthcheck_probes_healthz_without_curl(instructions: list[Instruction]) -> None:
    health = only(instructions, "HEALTHCHECK")
    command = health.exec_form()
    assert command[:2] == ["python", "-c"], "python:3.11-slim has no curl"
    assert f"http://127.0.0.1:{PORT}/healthz" in command[2]
    assert "urllib" in command[2]
    runners = (REPO / "bot" / "slack" / "runners.py").read_text(encoding="utf-8")
    assert 'add_get("/healthz"' in runners


def test_dockerignore_keeps_secrets_and_state_out() -> None:
    assert DOCKERIGNORE.is_file(), ".dockerignore is missing"
    patterns = {
        line.strip()
        for line in DOCKERIGNORE.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    }
    for pattern in (".git", ".env", ".grace", "**/__pycache__", ".pytest_cache", "tests"):
        assert pattern in patterns, f".dockerignore should exclude {pattern}"
    for needed in ("pyproject.toml", "README.md", "agent", "bot", "storage", "blocks"):
        assert needed not in patterns and f"/{needed}" not in patterns


# --------------------------------------------------------------------------- the probe, for real


def _health_app(healthy: bool) -> web.Application:
    """`/healthz` with the contract of `bot.slack.runners.http_app`: 200 ok, 503 when a part
    is down.

    (The real handler is tested with the bot; here only the probe's behaviour matters.)
    """

    async def healthz(request: web.Request) -> web.Response:
        if healthy:
            return web.json_response({"ok": True, "model": "offline"})
        return web.json_response({"ok": False, "error": "database is gone"}, status=503)

    app = web.Application()
    app.router.add_get("/healthz", healthz)
    return app


async def _probe(command: list[str], port: int) -> int:
    """Run the HEALTHCHECK command with the test server's port; return its exit code."""
    code = command[2].replace(f":{PORT}/", f":{port}/")
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        code,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    return await asyncio.wait_for(process.wait(), timeout=30)


@pytest.mark.parametrize("healthy", [True, False])
async def test_healthcheck_command_exit_code(
    instructions: list[Instruction], healthy: bool
) -> None:
    """The HEALTHCHECK command, run for real: 200 → exit 0, 503 → non-zero (unhealthy)."""
    runner = web.AppRunner(_health_app(healthy), access_log=None)
    await runner.setup()
    try:
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = int(runner.addresses[0][1])
        exit_code = await _probe(only(instructions, "HEALTHCHECK").exec_form(), port)
    finally:
        await runner.cleanup()
    assert (exit_code == 0) is healthy, f"exit code {exit_code}"
