"""`grace calibrate` as a team runs it: refusals with exit code 2, a fit stored in the
database and scored with by the next `grace` process, `--show` and `--reset`; on the
offline model and on Gemini (the fake Gemini server)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent.confidence import CALIBRATIONS, Calibration
from tests.durable.helpers import grace_env, grace_here, grace_here_async, run_grace
from tests.fakes.fake_gemini import (
    GENERATE,
    CannedResponse,
    FakeGemini,
    RecordedRequest,
    generate_body,
    json_body,
)
from tests.fakes.vacation_run import plan_for

EVAL = Path(__file__).parent.parent / "eval"
SMALL = EVAL / "data"
"""Eight cases: too few to calibrate on."""
DOCS = EVAL / "devset-docs"
"""39 questions on licence texts; the offline model gets some right and some wrong."""
QUESTION = (
    "how big a shareholding makes another company count as under common control in the "
    "Apache licence?"
)


def answer_step(report: dict[str, Any]) -> dict[str, Any]:
    """`grace ask --json`'s answering step: the last reasoning step scored by a map."""
    steps = [s for s in report["plan"]["steps"] if "calibrated" in s["breakdown"]]
    assert steps, report["plan"]["steps"]
    return steps[-1]


def ask(env: dict[str, str], *, here: bool = True) -> dict[str, Any]:
    args = ("ask", QUESTION, "--json", "--no-input")
    result = grace_here(env, *args) if here else run_grace(env, *args)
    assert result.returncode == 0, result.stderr
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def test_fewer_than_30_cases_are_refused_with_exit_code_2(tmp_path: Path) -> None:
    env = grace_env(tmp_path / "data")
    result = grace_here(env, "calibrate", str(SMALL / "cases.jsonl"), "--kb", str(SMALL / "kb"))
    assert result.returncode == 2
    assert result.stdout == ""
    assert "has 8 cases; calibrating needs at least 30 questions" in result.stderr
    shown = grace_here(env, "calibrate", "--show")
    assert "Confidence map for offline: shipped with GRACE" in shown.stdout
    assert "then σ(" in shown.stdout  # the shipped map's link, with the levels it keeps


def test_no_wrong_answers_to_learn_from_is_refused_with_exit_code_2(tmp_path: Path) -> None:
    first = json.loads((SMALL / "cases.jsonl").read_text(encoding="utf-8").splitlines()[0])
    cases = tmp_path / "easy.jsonl"
    cases.write_text(
        "".join(json.dumps({**first, "id": f"easy-{i}"}) + "\n" for i in range(30)),
        encoding="utf-8",
    )
    env = grace_env(tmp_path / "data")
    result = grace_here(env, "calibrate", str(cases), "--kb", str(SMALL / "kb"), "--json")
    assert result.returncode == 2
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "invalid_input"
    assert "Nothing to learn from: of 30 answers, 30 were right and 0 wrong" in error["message"]
    assert "at least 2 wrong answers" in error["message"]
    shown = json.loads(grace_here(env, "calibrate", "--show", "--json").stdout)
    assert shown["source"] == "shipped" and shown["fitted"] is None


def test_a_fit_is_stored_used_by_the_next_process_shown_and_reset(tmp_path: Path) -> None:
    env = grace_env(tmp_path / "data")
    ingested = grace_here(env, "ingest", str(DOCS / "kb"))
    assert ingested.returncode == 0, ingested.stderr
    shipped = CALIBRATIONS["offline"]
    step = answer_step(ask(env))
    assert step["breakdown"]["calibrated"] == pytest.approx(
        shipped.probability(step["breakdown"]), abs=1e-3
    )

    cases = str(DOCS / "cases.jsonl")
    result = grace_here(env, "calibrate", cases, "--kb", str(DOCS / "kb"), "--json", "--force")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["stored"] is True and out["before_map"] == "shipped with GRACE"
    fit = out["fit"]
    assert (fit["provider"], fit["cases_file"], fit["cases"], fit["folds"]) == (
        "offline",
        cases,
        39,
        5,
    )
    assert out["right"] >= 2 and out["wrong"] >= 2
    assert fit["answers"] == out["right"] + out["wrong"]
    for figures in (out["before"], out["after"], out["in_sample"]):
        assert 0.0 <= figures["auroc"] <= 1.0 and 0.0 <= figures["ece"] <= 1.0
        assert sum(level["n"] for level in figures["per_level"].values()) == 39
    fitted = Calibration.model_validate(fit["calibration"])
    assert fitted != shipped and set(fitted.weights) == set(shipped.weights)

    shown = grace_here(env, "calibrate", "--show")
    assert shown.returncode == 0, shown.stderr
    assert "Confidence map for offline: fitted on " in shown.stdout
    assert f"from {cases} (39 cases, {fit['answers']} answers, 5 folds)" in shown.stdout
    assert f"intercept         {fitted.intercept:+.3f}" in shown.stdout
    assert fitted.link is None and "then σ(" not in shown.stdout

    # a new process scores the same answer with the stored map, as the map predicts
    after = answer_step(ask(env, here=False))
    features = after["breakdown"]
    assert features["calibrated"] == pytest.approx(fitted.probability(features), abs=1e-3)
    assert abs(fitted.probability(features) - shipped.probability(features)) > 0.01
    assert after["confidence"] == pytest.approx(features["calibrated"], abs=1e-3)

    reset = grace_here(env, "calibrate", "--reset")
    assert reset.returncode == 0, reset.stderr
    assert "Forgot the fitted map for offline" in reset.stdout
    assert "shipped with GRACE" in grace_here(env, "calibrate", "--show").stdout
    again = answer_step(ask(env))["breakdown"]
    assert again["calibrated"] == pytest.approx(shipped.probability(again), abs=1e-3)
    second = grace_here(env, "calibrate", "--reset")
    assert "No fitted map was stored for offline" in second.stdout


def test_a_case_file_and_show_together_are_bad_input(tmp_path: Path) -> None:
    env = grace_env(tmp_path / "data")
    result = grace_here(env, "calibrate", str(DOCS / "cases.jsonl"), "--show")
    assert result.returncode == 2
    assert "one of them" in result.stderr


# --------------------------------------------------------------------------- Gemini


def scripted_gemini(cases: list[dict[str, Any]]) -> Any:
    """A fake Gemini that plans a search then an answer, answers every other case with its
    expected fact and the rest with a wrong one, and judges its own answers as a real
    model roughly would: higher self-evaluation for the right ones."""
    right = {case["q"]: i % 2 == 0 for i, case in enumerate(cases)}
    expected = {
        case["q"]: "; ".join(case.get("expect_any", [])[:1] or case.get("expect_all", []))
        or "nothing"
        for case in cases
    }

    def question_in(prompt: str) -> str | None:
        return next((q for q in sorted(right, key=len, reverse=True) if q in prompt), None)

    def respond(request: RecordedRequest) -> CannedResponse:
        prompt = request.prompt
        question = question_in(prompt)
        schema = json.dumps(request.generation_config.get("responseSchema") or {})
        if '"steps"' in schema:
            plan = plan_for(question or "licence")
            # --kb's throw-away collection, or the default one `grace ask` searches
            collection = "grace_eval" if "grace_eval" in prompt else "grace_docs"
            plan["steps"][0]["collection"] = collection
            return CannedResponse(json_body(plan))
        if '"self_eval"' in schema:
            good = question is not None and expected[question] in prompt
            score = 0.9 if good else 0.35
            return CannedResponse(
                json_body({"self_eval": score, "coverage": score, "rationale": "judged"})
            )
        if question is not None and right[question]:
            return CannedResponse(generate_body(f"{expected[question]} [Source: licence]"))
        return CannedResponse(generate_body("It depends on the project. [Source: licence]"))

    return respond


async def test_gemini_gets_a_fit_of_its_own_factors(tmp_path: Path) -> None:
    lines = (DOCS / "cases.jsonl").read_text(encoding="utf-8").splitlines()
    cases = [json.loads(line) for line in lines if line.strip()]
    async with FakeGemini(embedding_dimension=64) as fake:
        fake.set_responder(GENERATE, scripted_gemini(cases))
        env = grace_env(
            tmp_path / "data",
            GOOGLE_API_KEY="test-key",
            GRACE_LLM__BASE_URL=fake.base_url,
            GRACE_LLM__RETRY_ATTEMPTS="1",
            GRACE_LLM__EMBEDDING_DIMENSION="64",
        )
        shown = json.loads((await grace_here_async(env, "calibrate", "--show", "--json"))[1])
        assert shown == {
            "provider": "gemini", "source": "default", "calibration": None, "fitted": None
        }  # fmt: skip
        code, _, err = await grace_here_async(env, "ingest", str(DOCS / "kb"))
        assert code == 0, err
        before = await gemini_answer(env)
        assert "calibrated" not in before["breakdown"]  # the weighted mean of its factors
        code, out, err = await grace_here_async(
            env, "calibrate", str(DOCS / "cases.jsonl"), "--kb", str(DOCS / "kb"),
            "--json", "--force", "--concurrency", "4",
        )  # fmt: skip
        assert code == 0, err
        assert len(fake.calls(GENERATE)) >= 3 * 39
        result = json.loads(out)
        assert result["model"] == "gemini-2.5-flash" and result["stored"] is True
        assert result["before_map"].startswith(
            "none fitted; the answer's confidence is the weighted"
        )
        fitted = Calibration.model_validate(result["fit"]["calibration"])
        assert result["fit"]["provider"] == "gemini"
        # the model's own factors are fitted beside the evidence features
        assert {"llm_self_eval", "query_coverage", "search_quality"} <= set(fitted.weights)
        assert set(CALIBRATIONS["offline"].weights) <= set(fitted.weights)
        # its self-evaluation told right from wrong here, so the fit trusts it
        assert fitted.weights["llm_self_eval"] > 0
        assert result["after"]["auroc"] > 0.5
        code, out, _ = await grace_here_async(env, "calibrate", "--show", "--json")
        shown = json.loads(out)
        assert shown["source"] == "fitted" and shown["calibration"] == fitted.model_dump()
        # the next `grace ask` scores Gemini's answer with the fitted map
        features = (await gemini_answer(env))["breakdown"]
        assert features["calibrated"] == pytest.approx(fitted.probability(features), abs=1e-3)
        assert features["llm_self_eval"] == 0.9


async def gemini_answer(env: dict[str, str]) -> dict[str, Any]:
    """The reasoning step of `grace ask QUESTION` on Gemini (a case it answers right)."""
    code, out, err = await grace_here_async(env, "ask", QUESTION, "--json", "--no-input")
    assert code == 0, err
    steps = [s for s in json.loads(out)["plan"]["steps"] if s["action"] == "reasoning"]
    assert steps, out
    step: dict[str, Any] = steps[-1]
    return step
