"""Reading a Gemini `GenerateContentResponse`: usage, text, blocks, structured output.

Every response's usage counts, whatever became of the response. A blocked prompt or
answer is told apart from an empty one (resending a blocked prompt is useless), and a
structured reply is repaired where it can be (`agent.llm.json_repair`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from google.genai import types
from pydantic import BaseModel

from agent.llm.json_repair import UnusableReply, coerce_reply, decode_reply
from agent.schemas import TokenUsage

M = TypeVar("M", bound=BaseModel)

_BLOCK_FINISH_REASONS = {
    "SAFETY",
    "RECITATION",
    "BLOCKLIST",
    "PROHIBITED_CONTENT",
    "SPII",
    "IMAGE_SAFETY",
}


def usage_from(response: types.GenerateContentResponse) -> TokenUsage:
    """Token usage of one response. Thinking and tool-use prompt tokens are billed too."""
    meta = response.usage_metadata
    if meta is None:
        return TokenUsage(calls=1)
    output = (meta.candidates_token_count or 0) + (meta.thoughts_token_count or 0)
    prompt = (meta.prompt_token_count or 0) + (meta.tool_use_prompt_token_count or 0)
    return TokenUsage(input_tokens=prompt, output_tokens=output, calls=1)


def is_blocked(response: types.GenerateContentResponse) -> bool:
    """The prompt or the answer was stopped by a safety filter (resending it is useless)."""
    feedback = response.prompt_feedback
    if feedback is not None and feedback.block_reason is not None:
        return True
    if not response.candidates:
        return False
    reason = _enum_name(response.candidates[0].finish_reason or "")
    return reason in _BLOCK_FINISH_REASONS and response_text(response) is None


def _enum_name(value: Any) -> str:
    return str(getattr(value, "value", value))


def response_text(response: types.GenerateContentResponse) -> str | None:
    """The first candidate's text, or None when there is none (blocked, empty)."""
    if not response.candidates:
        return None
    candidate = response.candidates[0]
    if candidate.content is None or not candidate.content.parts:
        return None
    parts = [p.text for p in candidate.content.parts if p.text and not p.thought]
    return "".join(parts) if parts else None


def describe_empty(response: types.GenerateContentResponse) -> str:
    """Why a response carries no text: prompt blocked, no candidates, or the finish reason."""
    feedback = response.prompt_feedback
    if feedback is not None and feedback.block_reason is not None:
        detail = f": {feedback.block_reason_message}" if feedback.block_reason_message else ""
        return f"the prompt was blocked (block reason {_enum_name(feedback.block_reason)}){detail}"
    if not response.candidates:
        return "the response had no candidates"
    candidate = response.candidates[0]
    reason = _enum_name(candidate.finish_reason) if candidate.finish_reason else "unknown"
    message = f": {candidate.finish_message}" if candidate.finish_message else ""
    return f"the response was empty (finish reason {reason}){message}"


def parse_structured(
    response: types.GenerateContentResponse, coerce: Callable[[Any], M]
) -> tuple[M | None, str]:
    """Turn a structured-output response into a model, repairing what can be repaired.

    Returns (value, "") or (None, what was wrong) — the caller decides to retry or fail.
    """
    parsed = response.parsed
    if isinstance(parsed, BaseModel):
        data: Any = parsed.model_dump()
    else:
        text = response_text(response)
        if text is None or not text.strip():
            return None, describe_empty(response)
        try:
            data = decode_reply(text)
        except UnusableReply as exc:
            return None, str(exc)
    return coerce_reply(data, coerce)
