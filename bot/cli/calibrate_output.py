"""What `grace calibrate` prints for people: the before/after table, a map's weights and
where the map in force came from (plain functions of the typed results)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agent.confidence import Calibration, FittedCalibration
    from agent.evaluation.metrics import LevelScore
    from agent.evaluation.refit import Refit


def provenance(fit: FittedCalibration | None, calibration: Calibration | None) -> str:
    """Where the provider's map in force came from, in a phrase."""
    if fit is not None:
        return (
            f"fitted on {fit.fitted_at:%Y-%m-%d %H:%M} UTC from {fit.cases_file} "
            f"({fit.cases} cases, {fit.answers} answers, {fit.folds} folds)"
        )
    if calibration is not None:
        return "shipped with GRACE"
    return (
        "none fitted; the answer's confidence is the weighted mean of the model's factors "
        "(GRACE_CONFIDENCE__WEIGHTS__*)"
    )


def map_lines(calibration: Calibration) -> str:
    width = max(len(name) for name in [*calibration.weights, "intercept"])
    lines = [f"  {'intercept':<{width}}  {calibration.intercept:+.3f}"]
    lines += [f"  {name:<{width}}  {w:+.3f}" for name, w in calibration.weights.items()]
    if (link := calibration.link) is not None:
        edges = ", ".join(f"{e:g}" for e in link.edges)
        lines.append(
            f"  then σ({link.slope:.3f}·z {link.offset:+.3f}) of that sum z, kept within "
            f"the level the sum alone gives (thresholds {edges})"
        )
    return "\n".join(lines)


def render(result: Refit, *, model: str, before: str, stored: bool = True) -> str:
    """The before/after table a person reads."""
    fit = result.fit
    lines = [
        f"Fitted a confidence map for {fit.provider} ({model}) on {fit.cases} cases of "
        f"{fit.cases_file}: {fit.answers} answers, {result.right} right and {result.wrong} "
        "wrong.",
        f"Before: the map in force ({before}), on every case.",
        f"After: {fit.folds}-fold cross-validated — each fold scored by a map fitted on the "
        "other folds, never on itself.",
        "",
        f"{'':<28}{'before':>14}{'after':>14}",
        _row("AUROC (higher is better)", result.before.auroc, result.after.auroc),
        _row("ECE (lower is better)", result.before.ece, result.after.ece),
        f"{'confidently wrong':<28}{result.before.confidently_wrong:>14}"
        f"{result.after.confidently_wrong:>14}",
        "",
        "Where runs first stopped, and how many of their answers were right:",
    ]
    for level in result.before.per_level:
        b, a = result.before.per_level[level], result.after.per_level.get(level)
        if not b.n and (a is None or not a.n):
            continue
        lines.append(f"  {level.upper():<26}{_level(b):>14}{_level(a):>14}")
    lines += [
        "",
        f"In sample (fitted on every case, for comparison only): AUROC "
        f"{_num(result.in_sample.auroc)}, ECE {_num(result.in_sample.ece)}.",
        "",
    ]
    if stored:
        lines += [
            "Stored: every grace process started from now on scores with this map "
            "(restart a running `grace serve`).",
            map_lines(fit.calibration),
            "`grace calibrate --show` prints it; `grace calibrate --reset` goes back to the "
            "shipped map.",
        ]
    else:
        lines += [
            "Not stored: out of sample it tells right from wrong answers less well (AUROC) "
            "than the map in force. More cases, or cases more like your team's questions, "
            "may give a better fit; --force stores it anyway.",
            map_lines(fit.calibration),
        ]
    return "\n".join(lines)


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def _row(name: str, before: float | None, after: float | None) -> str:
    return f"{name:<28}{_num(before):>14}{_num(after):>14}"


def _level(score: LevelScore | None) -> str:
    """ "right/answers of n": one level's cases, their answers and the right ones."""
    if score is None or not score.n:
        return "–"
    return f"{score.right}/{score.answers} of {score.n}"
