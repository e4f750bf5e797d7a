"""Fault-injection tests: real `grace serve` processes in HTTP mode against the fake
Slack Web API (with its fault switches), signed requests, the offline model."""

from __future__ import annotations

from tests.durable.conftest import data_dir, sample_data_dir

__all__ = ["data_dir", "sample_data_dir"]
