"""What one evaluated case did: the data every metric and report is computed from."""

from __future__ import annotations

from pydantic import BaseModel, Field

from agent.evaluation.cases import CaseKind


class CaseRecord(BaseModel):
    """One case's run. "First stop" is where the run first answered or waited for a
    human, after any plan approval (which the evaluation grants, like clicking Run plan).

    `level`: silent | notify | confirm | escalate (the answer's level, or the level of the
    pause), asked (a clarifying question, ask_user), approval (still waiting on a plan
    approval — only if approving never got further), failed, cancelled."""

    id: str
    kind: CaseKind
    question: str
    status: str
    """At the first stop: answered | paused | failed | cancelled."""
    level: str
    pause: str | None = None
    """Why it paused at the first stop: confirm | escalate | ask_user (None if it did not)."""
    pauses: list[str] = Field(default_factory=list)
    """Every pause in order, approvals and the ones after Proceed included."""
    answer: str = ""
    """The answer at the first stop ("" when it paused)."""
    confidence: float | None = None
    """Overall confidence of that answer, or the paused step's confidence."""
    final_status: str = ""
    final_level: str | None = None
    final_answer: str = ""
    """The first answer, or the one given after Proceed ("proceed answer")."""
    final_confidence: float | None = None
    features: dict[str, float] = Field(default_factory=dict)
    """The final answer's confidence breakdown, evidence features included: what a
    confidence map is fitted on (`agent.evaluation.calibration`)."""
    proceeded: int = 0
    """How many times the evaluation clicked Proceed after the first stop."""
    sources: list[str] = Field(default_factory=list)
    """Files the final answer cites."""
    top5: list[str] = Field(default_factory=list)
    """Source files of the first search step's top five passages, best first."""
    recall_hit: bool | None = None
    """One of the case's `source` files is in `top5` (None when the case names none)."""
    plan_generated: bool = False
    replans: int = 0
    """Replans before the first stop."""
    replans_total: int = 0
    seconds: float = 0.0
    """Time to the first stop."""
    total_seconds: float = 0.0
    llm_calls: int = 0
    tokens: int = 0
    cost_usd: float = 0.0
    error: str | None = None
    correct: bool = False
    """Right for its kind (the devsets' scoring rule)."""
    answer_correct: bool = False
    """The final answer holds the expected fact."""
    confidently_wrong: bool = False
    """Answered at SILENT/NOTIFY without the expected fact."""

    @property
    def has_final_answer(self) -> bool:
        return self.final_status == "answered"
