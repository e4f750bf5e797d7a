"""Start-up: how long `grace --help` takes, and what `grace ask` costs before the agent works.

    python -m bench.startup [--runs 10] [--question "..."]

Every figure is a fresh process, launched the way a person launches it: the `grace`
console script next to this Python (or `python -m bot.cli` when there is none), with
this checkout first on PYTHONPATH. The checkout's modules are byte-compiled first, as
`pip install` does and as Python itself does on a first run — unless
PYTHONDONTWRITEBYTECODE is set (as in some sandboxes), when every run would compile
GRACE's own ~50 modules again (~0.1 s) and time that instead.

- floor: `python -c pass` — the interpreter's own start, which no change of ours removes;
- `grace --help`: the whole command, start to exit;
- `grace ask` overhead: the wall time of `grace ask QUESTION --json --no-input` on the
  shipped sample knowledge base (ingested once, not timed) and the offline model, minus
  the agent's own time as the run reports it (the `run_summary` log line's `seconds`).
  What is left is start-up, imports, settings, migrations check, opening the stores,
  printing and shutting down.

Best and median of N runs are printed, with CPU seconds (user + system: the figure to
compare on a busy machine, where wall time waits for the other processes), the verdict
against the targets (judged on the best run: the one least disturbed by the rest of the
machine), and which libraries the `ask` imports spend their time in (`-X importtime`).
It is a benchmark: the exit code is 0 whatever the numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HELP_TARGET_S = 0.3
ASK_OVERHEAD_TARGET_S = 0.6
QUESTION = "How many vacation days do new employees get?"
PACKAGES = ("agent", "blocks", "bot", "storage")


def grace_command() -> list[str]:
    """The console script `pip install` made for this Python, else the module."""
    script = Path(sys.executable).parent / "grace"
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-m", "bot.cli"]


@dataclass
class Timed:
    wall: float
    cpu: float
    stdout: str
    stderr: str


def run_with_cpu(command: Sequence[str], env: dict[str, str]) -> Timed:
    """Run to completion: wall seconds, and the child's CPU seconds (the change in
    RUSAGE_CHILDREN around it; the bench runs one child at a time)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    result = subprocess.run(list(command), env=env, capture_output=True, text=True, timeout=300)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Timed(wall, cpu, result.stdout, result.stderr)


@dataclass
class Series:
    name: str
    walls: list[float] = field(default_factory=list)
    cpus: list[float] = field(default_factory=list)

    def add(self, wall: float, cpu: float) -> None:
        self.walls.append(wall)
        self.cpus.append(cpu)

    @property
    def best(self) -> float:
        return min(self.walls)

    def line(self) -> str:
        return (
            f"{self.name:<22} wall best {self.best:6.3f} s  median "
            f"{statistics.median(self.walls):6.3f} s   CPU median "
            f"{statistics.median(self.cpus):6.3f} s"
        )


def run_summary_seconds(stderr: str) -> float:
    """The agent's own time: `seconds` of the last run_summary JSON log line."""
    seconds: float | None = None
    for line in stderr.splitlines():
        if '"run_summary"' not in line:
            continue
        record = json.loads(line)
        if record.get("event") == "run_summary":
            seconds = float(record["seconds"])
    if seconds is None:
        raise RuntimeError(f"no run_summary line in grace ask's log:\n{stderr[-2000:]}")
    return seconds


_IMPORT_LINE = re.compile(r"import time:\s+(\d+) \|\s+\d+ \|\s*(\S+)")


def import_breakdown(stderr: str) -> list[tuple[str, float]]:
    """Seconds of import time per top-level package (self times summed), largest first."""
    totals: Counter[str] = Counter()
    for line in stderr.splitlines():
        match = _IMPORT_LINE.match(line)
        if match:
            totals[match.group(2).split(".")[0]] += int(match.group(1)) / 1e6
    return totals.most_common()


def verdict(value: float, target: float) -> str:
    return "PASS" if value < target else "FAIL"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10, help="processes per figure (10)")
    parser.add_argument("--question", default=QUESTION)
    args = parser.parse_args(argv)

    grace = grace_command()
    with tempfile.TemporaryDirectory(prefix="grace-startup-") as tmp:
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
            "GRACE_DATA_DIR": str(Path(tmp) / "data"),
            "GRACE_LOG_FORMAT": "json",
            "GRACE_LOG_LEVEL": "INFO",
        }
        for name in ("GRACE_LLM__PROVIDER", "GOOGLE_API_KEY", "QDRANT_URL", "GRACE_DATABASE_URL"):
            env.pop(name, None)  # the embedded defaults and the offline model
        subprocess.run(
            [sys.executable, "-m", "compileall", "-q", *PACKAGES],
            cwd=ROOT,
            capture_output=True,
            check=True,
            timeout=300,
        )
        ingest = subprocess.run(
            [*grace, "ingest", "--sample"], env=env, capture_output=True, text=True, timeout=600
        )
        if ingest.returncode != 0:
            print(f"grace ingest --sample failed:\n{ingest.stderr[-2000:]}", file=sys.stderr)
            return 0

        floor, help_, ask, overhead = (
            Series("python -c pass"),
            Series("grace --help"),
            Series("grace ask (total)"),
            Series("grace ask overhead"),
        )
        agent_seconds: list[float] = []
        print(
            f"{' '.join(grace)} — {args.runs} runs each, on {os.cpu_count()} cores, "
            f"load average {os.getloadavg()[0]:.1f} at start\n"
        )
        for _ in range(args.runs):
            result = run_with_cpu([sys.executable, "-c", "pass"], env)
            floor.add(result.wall, result.cpu)
            result = run_with_cpu([*grace, "--help"], env)
            help_.add(result.wall, result.cpu)
            result = run_with_cpu([*grace, "ask", args.question, "--json", "--no-input"], env)
            spent = run_summary_seconds(result.stderr)
            agent_seconds.append(spent)
            ask.add(result.wall, result.cpu)
            overhead.add(result.wall - spent, max(result.cpu - spent, 0.0))
        imports = subprocess.run(
            [
                sys.executable,
                "-X",
                "importtime",
                "-m",
                "bot.cli",
                "ask",
                args.question,
                "--json",
                "--no-input",
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    for series in (floor, help_, ask, overhead):
        print(series.line())
    print(
        f"{'the agent itself':<22} median {statistics.median(agent_seconds):6.3f} s "
        "(run_summary seconds; the offline model)"
    )
    print("  (overhead CPU = the process's CPU minus the agent's wall time: a lower bound)")
    top = import_breakdown(imports.stderr)
    total = sum(seconds for _, seconds in top)
    print(
        f"\nimports of one `grace ask`: {total:.2f} s, of which "
        + ", ".join(f"{name} {seconds:.2f}" for name, seconds in top[:8])
    )
    print()
    cpu_help = statistics.median(help_.cpus)
    cpu_overhead = statistics.median(overhead.cpus)
    print(f"{'':<19} {'wall best':>10} {'CPU median':>11}   target")
    for name, wall, cpu, target in (
        ("grace --help", help_.best, cpu_help, HELP_TARGET_S),
        ("grace ask overhead", overhead.best, cpu_overhead, ASK_OVERHEAD_TARGET_S),
    ):
        print(
            f"{name:<19} {wall:9.3f}s {cpu:10.3f}s   < {target} s   "
            f"wall {verdict(wall, target)}, CPU {verdict(cpu, target)}"
        )
    print("(on a busy machine wall time includes waiting for other processes: judge by CPU)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
