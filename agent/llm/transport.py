"""Transport errors and the one retry policy every model adapter shares.

A provider adapter (today `agent.llm.gemini`) maps its SDK's failures to agent errors
(`agent.errors`) and hands each request to `call_with_retries`, which retries recoverable
ones with backoff, honours the server's `retry_after`, respects the step's request budget
(`agent.budget`) and never runs past the call's total deadline (`CallPolicy`). What is
left here is provider-neutral: which exceptions mean "the network" rather than "the
model", and how to say what went wrong in words (host and reason, not an object repr).
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import aiohttp
import httpx
import tenacity

from agent.budget import current_budget
from agent.errors import GraceError, NetworkError

logger = logging.getLogger(__name__)

TRANSPORT_ERRORS: tuple[type[BaseException], ...] = (
    aiohttp.ClientError,
    httpx.TransportError,
    asyncio.TimeoutError,
    OSError,  # ConnectionRefusedError & co. when they escape the HTTP library
)
TIMEOUT_ERRORS: tuple[type[BaseException], ...] = (asyncio.TimeoutError, httpx.TimeoutException)
try:  # an SDK may use httpx2 for some transports; map its errors the same way
    import httpx2  # type: ignore[import-not-found]

    TRANSPORT_ERRORS = (*TRANSPORT_ERRORS, httpx2.TransportError)
    TIMEOUT_ERRORS = (*TIMEOUT_ERRORS, httpx2.TimeoutException)
except ImportError:  # pragma: no cover - depends on the installed SDK extras
    pass


@dataclass(frozen=True)
class CallPolicy:
    """How hard one model call tries: attempts, backoff, and a total deadline.

    Worst case for one call: `attempts` requests, and never longer than
    `deadline_seconds` (a server asking to wait past the deadline ends the call at once).
    """

    attempts: int = 4
    deadline_seconds: float = 30.0
    attempt_timeout_seconds: float = 20.0
    initial_delay: float = 1.0
    max_delay: float = 8.0


def short(text: str, limit: int = 160) -> str:
    """`text` on one line, cut to `limit` characters with an ellipsis."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def is_timeout(exc: BaseException) -> bool:
    return isinstance(exc, TIMEOUT_ERRORS)


_REASONS = {
    errno.ECONNREFUSED: "connection refused",
    errno.ECONNRESET: "connection reset by the server",
    errno.ECONNABORTED: "connection aborted",
    errno.ETIMEDOUT: "connection timed out",
    errno.EHOSTUNREACH: "host unreachable",
    errno.ENETUNREACH: "network unreachable",
}
_OBJECT_REPR = re.compile(r"\s*\S*<[\w.]+ object at 0x[0-9a-fA-F]+>")


def _os_reason(error: OSError) -> str:
    """An OS error in words: 'connection refused', not 'Connect call failed (...)'."""
    code = error.errno
    if code in _REASONS:
        return _REASONS[code]
    if isinstance(error, ConnectionRefusedError):
        return _REASONS[errno.ECONNREFUSED]
    if isinstance(error, ConnectionResetError):
        return _REASONS[errno.ECONNRESET]
    if isinstance(error, TimeoutError):
        return _REASONS[errno.ETIMEDOUT]
    if error.strerror:
        return error.strerror
    return os.strerror(code) if code else str(error) or type(error).__name__


def describe_transport_error(exc: BaseException) -> str:
    """What failed on the wire, for a person: host and reason.

    aiohttp's own text names the TLS context by its repr (`ssl:<ssl.SSLContext object at
    0x…>`), which says nothing; the host, port and the OS's reason are what help.
    """
    if isinstance(exc, aiohttp.ClientConnectorError):
        reason = _os_reason(exc.os_error)
        return f"cannot connect to {exc.host}:{exc.port}: {reason}"
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return "the server closed the connection before answering"
    if isinstance(exc, aiohttp.ClientOSError | OSError) and getattr(exc, "errno", None):
        return _os_reason(exc)
    if isinstance(exc, httpx.ConnectError | httpx.ReadError) and exc.__context__ is not None:
        cause = exc.__context__
        if isinstance(cause, OSError) and cause.errno:
            return _os_reason(cause)
    text = _OBJECT_REPR.sub("", str(exc)).strip()
    return short(f"{type(exc).__name__}: {text}" if text else type(exc).__name__, 300)


def retryable(exc: BaseException) -> bool:
    """Recoverable, and the step's request budget (if any) allows another request."""
    if not (isinstance(exc, GraceError) and exc.recoverable):
        return False
    budget = current_budget()
    return budget is None or budget.may_retry


def _waiter(policy: CallPolicy) -> Callable[[tenacity.RetryCallState], float]:
    backoff = tenacity.wait_exponential_jitter(
        initial=policy.initial_delay, max=policy.max_delay, jitter=policy.initial_delay
    )

    def wait(state: tenacity.RetryCallState) -> float:
        """The server's own delay when it gave one (retryDelay / Retry-After), else backoff."""
        exc = state.outcome.exception() if state.outcome is not None else None
        asked = getattr(exc, "retry_after", None)
        if isinstance(asked, int | float) and asked >= 0:
            return float(asked)
        return float(backoff(state))

    return wait


MapError = Callable[[BaseException], GraceError | None]
"""An adapter's mapping of one request's failure to an agent error (None: not ours)."""


async def call_with_retries(
    call: Callable[[], Awaitable[object]],
    *,
    policy: CallPolicy,
    map_error: MapError,
    service: str,
    what: str,
    model: str,
) -> object:
    """Await a provider call under `policy`: the one retry layer, with a total deadline.

    Each attempt is bounded by what is left of the deadline; a recoverable failure is
    retried after the server's delay (or backoff) only when that still fits and the
    step's request budget (`agent.budget`) is not spent. The last error is raised as an
    agent error that says how many attempts were made. `service`, `what` and `model` name
    the call in messages ("Gemini planning with model 'gemini-2.5-flash'").
    """
    started = time.monotonic()
    deadline = started + policy.deadline_seconds
    attempts = 0

    async def attempt() -> object:
        nonlocal attempts
        attempts += 1
        budget = current_budget()
        if budget is not None:
            budget.spend()
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise NetworkError(
                f"{service} {what} with model {model!r} ran out of time "
                f"({policy.deadline_seconds:g} s deadline)."
            )
        try:
            return await asyncio.wait_for(
                call(), timeout=min(policy.attempt_timeout_seconds, remaining)
            )
        except Exception as exc:
            mapped = map_error(exc)
            if mapped is None:
                raise
            raise mapped from exc

    retrying = tenacity.AsyncRetrying(
        stop=tenacity.stop_after_attempt(max(1, policy.attempts))
        | tenacity.stop_before_delay(policy.deadline_seconds),
        wait=_waiter(policy),
        retry=tenacity.retry_if_exception(retryable),
        before_sleep=lambda state: logger.warning(
            "%s %s: attempt %d failed (%s); retrying in %.1f s",
            service,
            what,
            state.attempt_number,
            state.outcome.exception() if state.outcome else "?",
            state.upcoming_sleep,
        ),
        reraise=True,
    )
    try:
        return await retrying(attempt)
    except GraceError as exc:
        if exc.recoverable and attempts > 1:
            elapsed = time.monotonic() - started
            exc.message = f"{exc.message} (gave up after {attempts} attempts in {elapsed:.1f} s)"
            exc.args = (exc.message,)
        raise
