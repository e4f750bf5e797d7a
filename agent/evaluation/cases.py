"""Evaluation cases: one JSON object per line of a `.jsonl` file (`grace eval`).

A bad file is refused as a whole, before anything runs, with the line number and the
field that is wrong, so a person can fix it in one go.
"""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from agent.errors import InvalidInputError


class CaseKind(StrEnum):
    ANSWERABLE = "answerable"
    MULTI = "multi"
    UNANSWERABLE = "unanswerable"
    AMBIGUOUS = "ambiguous"
    CONTRADICTORY = "contradictory"


class EvalCase(BaseModel):
    """One question and what a good answer to it looks like."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    id: str = Field(min_length=1)
    kind: CaseKind
    q: str = Field(min_length=1)
    expect_any: list[str] = Field(default_factory=list)
    expect_all: list[str] = Field(default_factory=list)
    current: str | None = None
    source: list[str] = Field(default_factory=list)
    note: str = ""

    @field_validator("id", "q")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value.strip()

    @field_validator("expect_any", "expect_all", "source")
    @classmethod
    def _no_blank_items(cls, values: list[str]) -> list[str]:
        if any(not v.strip() for v in values):
            raise ValueError("must not contain empty strings")
        return values

    @model_validator(mode="after")
    def _expectations(self) -> EvalCase:
        if self.kind is CaseKind.MULTI and not self.expect_all:
            raise ValueError("expect_all: a multi case needs a non-empty list")
        if self.kind is CaseKind.ANSWERABLE and not self.expect_any:
            raise ValueError("expect_any: an answerable case needs a non-empty list")
        if self.kind is CaseKind.CONTRADICTORY and not (self.current or self.expect_any):
            raise ValueError("current: a contradictory case needs the current value")
        return self

    @property
    def expected(self) -> list[str]:
        """The strings that make an answer right: every one for multi, else any one."""
        if self.kind is CaseKind.MULTI:
            return list(self.expect_all)
        if self.kind is CaseKind.CONTRADICTORY and self.current:
            return [self.current]
        return list(self.expect_any)


class CaseFileError(InvalidInputError):
    """A case file that cannot be used; the message names the line and the field."""


def parse_cases(text: str, *, name: str = "cases") -> list[EvalCase]:
    """Cases from JSON Lines text. Blank lines and `#` comment lines are skipped;
    a repeated id, bad JSON or a bad field is refused with its line number."""
    cases: list[EvalCase] = []
    first_line: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        try:
            data = json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise CaseFileError(f"{name} line {number}: not valid JSON ({exc.msg})") from exc
        if not isinstance(data, dict):
            raise CaseFileError(f"{name} line {number}: expected a JSON object")
        try:
            case = EvalCase.model_validate(data)
        except ValidationError as exc:
            raise CaseFileError(f"{name} line {number}: {_describe(exc)}") from exc
        if case.id in first_line:
            raise CaseFileError(
                f"{name} line {number}: id: {case.id!r} is already used on line "
                f"{first_line[case.id]}"
            )
        first_line[case.id] = number
        cases.append(case)
    if not cases:
        raise CaseFileError(f"{name}: no cases (one JSON object per line)")
    return cases


def load_cases(path: Path) -> list[EvalCase]:
    """Cases from a `.jsonl` file; `CaseFileError` (exit code 2 in the CLI) when bad."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError as exc:
        raise CaseFileError(f"cannot read {path}: no such file") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise CaseFileError(f"cannot read {path}: {exc}") from exc
    return parse_cases(text, name=str(path))


def _describe(exc: ValidationError) -> str:
    """The first problem, as `field: what is wrong`."""
    error = exc.errors()[0]
    field = ".".join(str(part) for part in error["loc"])
    message = error["msg"].removeprefix("Value error, ")
    if error["type"] == "missing":
        return f"{field}: missing"
    if error["type"] == "enum":
        kinds = ", ".join(k.value for k in CaseKind)
        return f"{field}: {error.get('input')!r} is not one of {kinds}"
    if not field:  # a model-level rule names its field in the message
        return message
    return f"{field}: {message}"
