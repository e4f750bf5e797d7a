"""The fake server itself: defaults and scripting other test suites rely on."""

from __future__ import annotations

from google import genai
from google.genai import types

from agent.schemas import PlanDraft
from tests.fakes.fake_gemini import (
    GENERATE,
    CannedResponse,
    FakeGemini,
    RecordedRequest,
    fake_embedding,
    generate_body,
    sample_from_schema,
)


async def test_default_structured_reply_follows_the_schema(
    fake: FakeGemini, client: genai.Client
) -> None:
    response = await client.aio.models.generate_content(
        model="m",
        contents="plan please",
        config=types.GenerateContentConfig(
            response_mime_type="application/json", response_schema=PlanDraft
        ),
    )

    assert isinstance(response.parsed, PlanDraft)
    assert len(response.parsed.steps) == 1


async def test_default_text_reply_and_custom_responder(
    fake: FakeGemini, client: genai.Client
) -> None:
    first = await client.aio.models.generate_content(model="m", contents="hi")
    assert first.text == fake.default_text

    fake.set_responder(GENERATE, shout)
    second = await client.aio.models.generate_content(model="m", contents="hi")
    assert second.text == "HI"
    assert fake.pending() == 0


async def shout(request: RecordedRequest) -> CannedResponse:
    """A responder may be async; this one echoes the prompt in capitals."""
    return CannedResponse(generate_body(request.prompt.upper()))


def test_fake_embedding_is_deterministic_and_unit_length() -> None:
    a = fake_embedding("hello world", 16)
    assert a == fake_embedding("hello world", 16)
    assert abs(sum(x * x for x in a) - 1.0) < 1e-9
    assert len(fake_embedding("", 8)) == 8


def test_sample_from_schema_handles_json_schema_spelling() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}, "e": {"enum": ["x"]}}}
    assert sample_from_schema(schema) == {"n": 1, "e": "x"}
