"""One well-behaved run on the Gemini path, scripted: the vacation question, the plan the
fake Gemini answers with, the cited answer and the self-evaluation. Shared by the Gemini
end-to-end tests and bench/throughput.py so they script the same run."""

from __future__ import annotations

from typing import Any

QUESTION = "How many vacation days do new employees get?"
SEARCH_QUERY = "vacation days new employees"


def plan_for(query: str) -> dict[str, Any]:
    """The JSON plan the fake Gemini answers with: search for `query`, then answer."""
    return {
        "complexity": 0.2,
        "steps": [
            {
                "step_id": 1,
                "action": "rag_search",
                "description": "Search the knowledge base",
                "query": query,
                "collection": "grace_docs",
                "depends_on": [],
                "expected_output": "relevant passages",
                "fallback": "web_search",
            },
            {
                "step_id": 2,
                "action": "reasoning",
                "description": "Answer with citations",
                "depends_on": [1],
                "expected_output": "a cited answer",
            },
        ],
        "success_criteria": "a cited answer",
    }


ANSWER = (
    "New employees get 15 days of paid vacation per year, starting on their first day. "
    "[Source: vacation-policy.md]"
)
EVALUATION = {"self_eval": 0.95, "coverage": 0.9, "rationale": "fully grounded"}
