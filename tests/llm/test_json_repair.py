"""The JSON repair used on structured output that the SDK could not parse."""

from __future__ import annotations

import json

import pytest

from agent.llm.json_repair import extract_json


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ('```json\n{"a": 1}\n```', {"a": 1}),
        ('```\n{"a": [1, 2]}\n```', {"a": [1, 2]}),
        ('Sure! Here it is: {"a": {"b": "}"}} Hope that helps {x}', {"a": {"b": "}"}}),
        ('[{"step_id": 1}]', [{"step_id": 1}]),
        ('{"a": "quote \\" and brace }"}', {"a": 'quote " and brace }'}),
    ],
)
def test_extract_json(text: str, expected: object) -> None:
    raw = extract_json(text)
    assert raw is not None
    assert json.loads(raw) == expected


def test_extract_json_without_brackets() -> None:
    assert extract_json("no json here") is None
