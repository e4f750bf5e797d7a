"""Where a run was asked may change how it is answered: the collections it searches,
who may answer its pauses, who is called when it escalates, and its thresholds.

The bot turns a Slack channel's settings into a `RunPolicy` and hands it to
`Orchestrator.register`; the run keeps it in its state, so a resume in another process
follows the same policy. The agent knows nothing of channels: an empty policy means
"the global configuration"."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from agent.config import Thresholds


class RunPolicy(BaseModel):
    """Per-run overrides of the global configuration; every unset field falls back."""

    model_config = ConfigDict(frozen=True)

    collections: list[str] = Field(default_factory=list)
    """The collections this run may search (the first is its default); empty: all."""
    approvers: list[str] | None = None
    """Who, besides the asker, may answer the run's pauses; None: the global approvers."""
    experts: list[str] = Field(default_factory=list)
    """Who is called (mentioned) when the run escalates: user ids (U…/W…) or user
    groups (S…). They may answer the escalation (a group's members, as checked by the
    caller)."""
    thresholds: Thresholds | None = None
    """The confidence thresholds for this run; None: the shared (learned) ones."""

    @property
    def expert_users(self) -> list[str]:
        """The experts that are single people (a group's members are not known here)."""
        return [e for e in self.experts if not e.startswith("S")]

    @property
    def expert_groups(self) -> list[str]:
        """The experts that are user groups: their members may answer an escalation once
        the caller has checked they belong."""
        return [e for e in self.experts if e.startswith("S")]

    @property
    def is_default(self) -> bool:
        return self == RunPolicy()
