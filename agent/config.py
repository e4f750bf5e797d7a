"""Tunable knobs of the agent, as plain pydantic models.

The application's `Settings` (pydantic-settings, in `bot/settings.py`) reads them from the
environment; the agent only ever receives these validated models.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, model_validator


class ConfidenceWeights(BaseModel):
    """Weights of the factors in a non-search step's weighted mean (SPEC §2.5)."""

    search_quality: float = Field(default=0.30, ge=0)
    tool_success: float = Field(default=0.10, ge=0)
    source_agreement: float = Field(default=0.15, ge=0)
    llm_self_eval: float = Field(default=0.25, ge=0)
    query_coverage: float = Field(default=0.20, ge=0)


class Thresholds(BaseModel):
    silent: float = Field(default=0.9, ge=0, le=1)
    notify: float = Field(default=0.7, ge=0, le=1)
    confirm: float = Field(default=0.4, ge=0, le=1)

    @model_validator(mode="after")
    def _ordered(self) -> Thresholds:
        if not self.silent >= self.notify >= self.confirm:
            raise ValueError(
                f"thresholds must satisfy silent >= notify >= confirm, got "
                f"{self.silent} / {self.notify} / {self.confirm}"
            )
        return self


class ConfidenceConfig(BaseModel):
    thresholds: Thresholds = Field(default_factory=Thresholds)
    weights: ConfidenceWeights = Field(default_factory=ConfidenceWeights)
    aggregation: Literal["mean", "min", "weighted"] = "weighted"
    variance_penalty: float = Field(default=0.5, ge=0)
    """search_quality = 0.6·max + 0.4·mean − variance_penalty·variance."""
    overall_step_weight: float = Field(default=0.5, ge=0, le=1)
    """Share of the aggregated step scores in the overall confidence; the rest is split
    between the final self-evaluation and coverage."""


class InterventionConfig(BaseModel):
    expiry_hours: float = Field(default=24.0, gt=0)
    auto_proceed_on_timeout: bool = False
    pause_on_confirm: bool = True
    """Pause after an intermediate step whose level is CONFIRM."""
    learning_rate: float = Field(default=0.05, gt=0, le=0.5)
    feedback_window: int = Field(default=10, ge=1)


class ReplanConfig(BaseModel):
    max_replans: int = Field(default=3, ge=0, le=10)
    low_confidence: float = Field(default=0.4, ge=0, le=1)


class CostConfig(BaseModel):
    input_usd_per_million: float = Field(default=0.30, ge=0)
    output_usd_per_million: float = Field(default=2.50, ge=0)
    max_usd_per_query: float = Field(default=0.50, ge=0)
    max_usd_per_hour: float = Field(default=5.0, ge=0)
    max_usd_per_day: float = Field(default=50.0, ge=0)


class ExecutionConfig(BaseModel):
    max_question_chars: int = Field(default=4000, ge=10)
    top_k: int = Field(default=5, ge=1, le=50)
    default_step_timeout: float = Field(default=60.0, gt=0)
    """One step: an answer and its evaluation are two model calls."""
    run_deadline_seconds: float = Field(default=180.0, gt=0)
    """One run's planning and steps together (a paused run's waiting does not count)."""
    min_steps: int = Field(default=1, ge=1)
    max_steps: int = Field(default=6, ge=1, le=20)
    lease_seconds: float = Field(default=120.0, gt=0)
    """A worker that has not renewed its lease on a running run for this long is
    presumed dead, and another process may take the run over."""


class AgentConfig(BaseModel):
    confidence: ConfidenceConfig = Field(default_factory=ConfidenceConfig)
    intervention: InterventionConfig = Field(default_factory=InterventionConfig)
    replan: ReplanConfig = Field(default_factory=ReplanConfig)
    cost: CostConfig = Field(default_factory=CostConfig)
    execution: ExecutionConfig = Field(default_factory=ExecutionConfig)
