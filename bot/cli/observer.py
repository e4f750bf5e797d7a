"""`TerminalObserver`: a run's progress on stderr as it happens, for a person watching a
terminal (elsewhere the INFO logs tell the same story)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agent.ports import RunEvent
    from agent.schemas import ExecutionPlan, RunState


def plan_lines(plan: ExecutionPlan) -> list[tuple[int, str, str]]:
    return [(s.step_id, s.action.value, s.description) for s in plan.steps]


class TerminalObserver:
    """Prints progress as it happens, for a person watching stderr on a terminal."""

    def __init__(self) -> None:
        self.shown_plan: list[tuple[int, str, str]] | None = None

    def showed(self, plan: ExecutionPlan | None) -> bool:
        """Whether this plan is the one last printed (the summary need not repeat it)."""
        return plan is not None and self.shown_plan == plan_lines(plan)

    async def on_event(self, event: RunEvent, state: RunState) -> None:
        from agent.ports import RunEventType
        from bot.cli.report import STEP_ICON

        out = sys.stderr
        if event.type is RunEventType.PLAN_CREATED and state.plan is not None:
            self.shown_plan = plan_lines(state.plan)
            print(f"Plan (complexity {state.plan.complexity:.2f}):", file=out)
            for step in state.plan.steps:
                deps = f" (after {step.depends_on})" if step.depends_on else ""
                print(
                    f"  {step.step_id}. {step.action.value}: {step.description}{deps}",
                    file=out,
                )
        elif event.type is RunEventType.STEP_FINISHED and event.step_id is not None:
            result = state.step_results.get(event.step_id)
            if result is not None:
                level = f" [{result.level.value}]" if result.level else ""
                print(
                    f"  {STEP_ICON[result.status.value]} step {event.step_id} "
                    f"{result.status.value}, confidence {result.confidence:.2f}{level}",
                    file=out,
                )
        elif event.type is RunEventType.REPLANNED:
            print(f"  ↻ replanned: {event.message}", file=out)
            if state.plan is not None and self.shown_plan is not None:
                lines = plan_lines(state.plan)
                for step_id, action, description in lines:
                    if (step_id, action, description) not in self.shown_plan:
                        print(f"    {step_id}. {action}: {description}", file=out)
                self.shown_plan = lines
        elif event.type in (RunEventType.RUN_FAILED, RunEventType.RUN_CANCELLED):
            print(f"  {event.message}", file=out)
