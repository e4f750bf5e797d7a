"""`grace eval`: ask a set of questions with known answers and measure how GRACE did.

cases = load_cases(Path("cases.jsonl"))
report = await run_eval(orchestrator, cases, collection="docs")
print(render_text(report))
"""

from __future__ import annotations

from agent.evaluation.cases import CaseFileError, CaseKind, EvalCase, load_cases, parse_cases
from agent.evaluation.metrics import EvalMetrics, GraceMetrics, compute_metrics
from agent.evaluation.records import CaseRecord
from agent.evaluation.report import render_markdown, render_text, report_json
from agent.evaluation.runner import EvalReport, run_case, run_eval

__all__ = [
    "CaseFileError",
    "CaseKind",
    "CaseRecord",
    "EvalCase",
    "EvalMetrics",
    "EvalReport",
    "GraceMetrics",
    "compute_metrics",
    "load_cases",
    "parse_cases",
    "render_markdown",
    "render_text",
    "report_json",
    "run_case",
    "run_eval",
]
