"""The two pictures of `--report DIR`: a reliability diagram and a confidence histogram.

matplotlib is imported here only, when a report is written, and used without pyplot
(a bare `Figure` renders with the Agg backend): no window, no global state.
"""

from __future__ import annotations

from pathlib import Path

from agent.evaluation.runner import EvalReport


def reliability_diagram(report: EvalReport, path: Path) -> None:
    """Accuracy of the answers in each confidence bin against the bin's mean
    confidence; a calibrated score lies on the diagonal. Bar widths show nothing but
    the bins; the numbers above the bars are how many answers fell in each."""
    from matplotlib.figure import Figure

    bins = report.metrics.reliability
    fig = Figure(figsize=(5.5, 5), dpi=100)
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, 1], linestyle="--", color="grey", label="perfectly calibrated")
    filled = [b for b in bins if b.n and b.accuracy is not None]
    ax.bar(
        [(b.lower + b.upper) / 2 for b in filled],
        [b.accuracy or 0.0 for b in filled],
        width=[b.upper - b.lower for b in filled],
        edgecolor="black",
        color="#4c78a8",
        alpha=0.8,
        label="share of right answers",
    )
    for b in filled:
        ax.annotate(
            str(b.n),
            ((b.lower + b.upper) / 2, (b.accuracy or 0.0) + 0.01),
            ha="center",
            fontsize=8,
        )
    ax.plot(
        [b.mean_confidence for b in filled],
        [b.accuracy for b in filled],
        marker="o",
        color="#e45756",
        label="mean confidence in bin",
    )
    m = report.metrics
    auroc = "-" if m.auroc is None else f"{m.auroc:.2f}"
    ece = "-" if m.ece is None else f"{m.ece:.2f}"
    ax.set_title(f"Reliability ({m.answers} answers, AUROC {auroc}, ECE {ece})")
    ax.set_xlabel("overall confidence")
    ax.set_ylabel("share of answers that are right")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.05)
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, format="png")


def confidence_histogram(report: EvalReport, path: Path) -> None:
    """How confident it was on right answers and on wrong ones."""
    from matplotlib.figure import Figure

    answered = [r for r in report.records if r.has_final_answer and r.final_confidence is not None]
    right = [float(r.final_confidence or 0.0) for r in answered if r.answer_correct]
    wrong = [float(r.final_confidence or 0.0) for r in answered if not r.answer_correct]
    edges = [i / 20 for i in range(21)]
    fig = Figure(figsize=(6, 4), dpi=100)
    ax = fig.add_subplot()
    ax.hist(
        [right, wrong],
        bins=edges,
        stacked=True,
        color=["#54a24b", "#e45756"],
        label=[f"right ({len(right)})", f"wrong ({len(wrong)})"],
        edgecolor="black",
    )
    ax.set_title("Overall confidence of the answers")
    ax.set_xlabel("overall confidence")
    ax.set_ylabel("answers")
    ax.set_xlim(0, 1)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, format="png")


def write_plots(report: EvalReport, directory: Path) -> list[Path]:
    paths = [directory / "reliability.png", directory / "confidence_hist.png"]
    reliability_diagram(report, paths[0])
    confidence_histogram(report, paths[1])
    return paths
