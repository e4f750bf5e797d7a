"""Error classes (SPEC §2.8). `recoverable` errors are retried with backoff."""

from __future__ import annotations

from agent.schemas import TokenUsage


class GraceError(Exception):
    """Base of every error the agent raises on purpose; `str()` is fit to show a user."""

    category = "error"
    recoverable = False

    def __init__(
        self,
        message: str,
        *,
        retry_after: float | None = None,
        usage: TokenUsage | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.retry_after = retry_after
        self.usage = usage
        """Tokens spent before the failure: they cost money even though nothing came of it."""


class NetworkError(GraceError):
    category = "network"
    recoverable = True


class RateLimitError(GraceError):
    category = "rate_limit"
    recoverable = True


class StepTimeoutError(GraceError):
    category = "timeout"
    recoverable = True


class InvalidInputError(GraceError):
    category = "invalid_input"


class ToolError(GraceError):
    category = "tool_failure"


class LLMError(GraceError):
    category = "llm_error"


class BlockedError(LLMError):
    """The model's safety filter refused the request, even rephrased: sending it again
    (or replanning into the same request) would only be refused again."""

    category = "blocked"


class PlanningError(LLMError):
    category = "planning_failure"


class VectorStoreError(GraceError):
    category = "vector_store"


class KnowledgeBaseLockedError(VectorStoreError):
    """Qdrant local mode allows one process per data directory."""


class CostLimitError(GraceError):
    category = "cost_limit"
