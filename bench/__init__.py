"""Benchmarks that print numbers. Run one from the repository root as a module —
`python -m bench.throughput` — so the shared fakes and helpers under `tests/` import as
`tests.…` without any `sys.path` edits."""

from pathlib import Path

SHARED_DEVSETS = Path(__file__).resolve().parents[2] / "shared" / "devsets"
"""The shared development sets (`../shared/devsets/` beside the checkout)."""
