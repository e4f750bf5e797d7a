"""An evaluation as people read it: a terminal table, a Markdown summary, and JSON."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent.evaluation.metrics import EvalMetrics
from agent.evaluation.runner import EvalReport

LEVEL_WORDS = {
    "silent": "answered on its own (silent)",
    "notify": "answered and said so (notify)",
    "confirm": "asked to confirm (confirm)",
    "escalate": "handed to a person (escalate)",
    "asked": "asked a clarifying question",
    "approval": "waited for plan approval",
    "failed": "failed",
    "cancelled": "cancelled",
}
KIND_WORDS = {
    "answerable": "one fact",
    "multi": "several facts",
    "unanswerable": "not in the documents",
    "ambiguous": "unclear question",
    "contradictory": "documents disagree",
    "all": "all",
}


def report_json(report: EvalReport) -> dict[str, Any]:
    """The `--json` object and report.json (documented in the README)."""
    return report.model_dump(mode="json")


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.0f}%"


def _num(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _kind_rows(m: EvalMetrics) -> list[tuple[str, str, str, str, str]]:
    rows = []
    for kind, score in m.per_kind.items():
        if score.n == 0:
            continue
        found = f"{score.recall_hits}/{score.recall_n}" if score.recall_n else "-"
        rows.append(
            (KIND_WORDS.get(kind, kind), str(score.n), str(score.correct), _pct(score.rate), found)
        )
    return rows


def _level_rows(m: EvalMetrics) -> list[tuple[str, str, str, str, str]]:
    rows = []
    for level, score in m.per_level.items():
        if score.n == 0:
            continue
        rows.append(
            (
                LEVEL_WORDS.get(level, level),
                str(score.n),
                str(score.answers),
                str(score.right),
                _pct(score.rate),
            )
        )
    return rows


def _grace_rows(m: EvalMetrics) -> list[tuple[str, str]]:
    g = m.grace
    return [
        ("plan made", _pct(g.plan_generation_rate)),
        ("reached an answer", _pct(g.completion_rate)),
        ("confidence tracks correctness (correlation)", _num(g.confidence_accuracy)),
        ("wrong among answers given on its own", _pct(g.false_positive_rate)),
        ("paused though the answer was right", _pct(g.unnecessary_hitl_rate)),
        ("right after replanning", _pct(g.replan_success_rate)),
        ("replans per question", _num(g.avg_replan_count)),
        ("cost per question (USD)", _num(g.avg_cost_usd, 4)),
    ]


def _table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> list[str]:
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows, strict=False)]
    lines = []
    for row in [header, *rows]:
        cells = [
            str(c).ljust(w) if i == 0 else str(c).rjust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
    return lines


def render_text(report: EvalReport) -> str:
    """The terminal summary."""
    m = report.metrics
    lines = [
        f"Evaluated {m.cases} questions in {report.seconds:.1f} s "
        f"(model {report.model}, collection {report.collection!r}).",
        "",
        "How often it got each kind of question right:",
        *_table(("kind", "questions", "right", "rate", "source in top 5"), _kind_rows(m)),
        "",
        "Where it first stopped, and how often the answer (after Proceed) was right:",
        *_table(("first stop", "questions", "answers", "right", "rate"), _level_rows(m)),
        "",
    ]
    wrong = f"{m.confidently_wrong} of {m.cases} ({_pct(m.confidently_wrong_rate)})"
    if m.confidently_wrong_ids:
        shown = ", ".join(m.confidently_wrong_ids[:12])
        more = " …" if len(m.confidently_wrong_ids) > 12 else ""
        wrong += f": {shown}{more}"
    lines += [
        f"Answered on its own but wrong: {wrong}",
        f"Does confidence separate right from wrong answers? AUROC {_num(m.auroc)}, "
        f"calibration error {_num(m.ece)} (over {m.answers} answers)",
        f"Right document among the first five passages: {m.recall_hits} of {m.recall_n} "
        f"({_pct(m.recall_at_5)})",
        f"Time per question: mean {_num(m.mean_seconds, 3)} s, 95th percentile "
        f"{_num(m.p95_seconds, 3)} s",
        "",
        *_table(("GRACE metrics", "value"), _grace_rows(m)),
    ]
    return "\n".join(lines)


def _md_table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |" for row in rows]
    return out


def render_markdown(report: EvalReport, *, images: bool = False) -> str:
    """summary.md: the same figures as the terminal, plus one row per case."""
    m = report.metrics
    lines = [
        "# GRACE evaluation",
        "",
        f"{m.cases} questions from `{report.cases_file or 'cases'}`, model `{report.model}`, "
        f"collection `{report.collection}`, {report.started_at:%Y-%m-%d %H:%M} UTC, "
        f"{report.seconds:.1f} s. Proceed after pauses: {'yes' if report.proceed else 'no'}.",
        "",
        "## By kind of question",
        "",
        *_md_table(("kind", "questions", "right", "rate", "source in top 5"), _kind_rows(m)),
        "",
        "## By first stop (answers after Proceed)",
        "",
        *_md_table(("first stop", "questions", "answers", "right", "rate"), _level_rows(m)),
        "",
        "## Confidence and speed",
        "",
        *_md_table(
            ("measure", "value"),
            [
                (
                    "answered on its own but wrong",
                    f"{m.confidently_wrong} ({_pct(m.confidently_wrong_rate)})",
                ),
                ("AUROC (confidence, right vs wrong answers)", _num(m.auroc)),
                ("expected calibration error (10 bins)", _num(m.ece)),
                ("answers scored", str(m.answers)),
                ("recall@5", f"{m.recall_hits}/{m.recall_n} ({_pct(m.recall_at_5)})"),
                ("mean time per question (s)", _num(m.mean_seconds, 3)),
                ("p95 time per question (s)", _num(m.p95_seconds, 3)),
            ],
        ),
        "",
        "## GRACE metrics",
        "",
        *_md_table(("metric", "value"), _grace_rows(m)),
        "",
    ]
    if images:
        lines += [
            "## Reliability",
            "",
            "![reliability diagram](reliability.png)",
            "",
            "![confidence histogram](confidence_hist.png)",
            "",
        ]
    rows = [
        (
            r.id,
            r.kind.value,
            LEVEL_WORDS.get(r.level, r.level),
            "yes" if r.correct else "no",
            _num(r.final_confidence),
            "yes" if r.answer_correct else "no",
            " ".join(r.final_answer.split())[:120],
        )
        for r in report.records
    ]
    lines += [
        "## Cases",
        "",
        *_md_table(
            ("id", "kind", "first stop", "right", "confidence", "fact in answer", "answer"),
            rows,
        ),
        "",
    ]
    return "\n".join(lines)


def write_report(report: EvalReport, directory: Path) -> list[Path]:
    """report.json, summary.md, reliability.png and confidence_hist.png in `directory`."""
    import json

    from agent.evaluation.plots import write_plots  # matplotlib only when asked for

    directory.mkdir(parents=True, exist_ok=True)
    data = directory / "report.json"
    data.write_text(
        json.dumps(report_json(report), ensure_ascii=False, indent=2) + "\n", encoding="utf-8"
    )
    summary = directory / "summary.md"
    summary.write_text(render_markdown(report, images=True), encoding="utf-8")
    return [data, summary, *write_plots(report, directory)]
