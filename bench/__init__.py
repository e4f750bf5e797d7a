"""Benchmarks that print numbers. Run one from the repository root as a module —
`python -m bench.throughput` — so the shared fakes and helpers under `tests/` import as
`tests.…` without any `sys.path` edits."""
