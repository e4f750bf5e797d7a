"""Verified answers in the knowledge base: each one is a document of its own (one chunk,
source `verified answer <id>`) in the default collection, so the same hybrid search that
finds documents finds it, and its payload carries who verified it, when, until when, and
the thread's permalink. The database row (storage/verified_answers.py) is the record of
truth: removing an answer deletes the row and this copy."""

from __future__ import annotations

from typing import Protocol

from agent.citations import strip_citations
from agent.knowledge.chunks import Chunk
from agent.ports import VerifiedAnswer
from agent.schemas import (
    VERIFIED_PREFIX,
    InterventionKind,
    InterventionStatus,
    RunState,
    RunStatus,
    Source,
)


class VerifiedIndex(Protocol):
    """The part of the knowledge base verified answers are written through."""

    async def upsert_chunks(self, collection: str, chunks: list[Chunk]) -> int: ...

    async def delete_source(self, collection: str, source: str) -> int: ...

    @property
    def default_collection(self) -> str: ...


def verified_source(answer_id: str) -> str:
    """The source name a verified answer is stored (and cited) under."""
    return f"{VERIFIED_PREFIX}{answer_id}"


def verified_chunk(answer: VerifiedAnswer) -> Chunk:
    """The searchable copy: the question as its heading (so words of the question match)
    and the answer as its text."""
    return Chunk(
        source=verified_source(answer.answer_id),
        index=0,
        text=f"{answer.question}\n{answer.answer}",
        title=answer.question,
        doc_title=answer.question,
        doc_key=verified_source(answer.answer_id),
        verified=answer.verification(),
    )


async def index_verified(kb: VerifiedIndex, answer: VerifiedAnswer) -> None:
    """Write (or rewrite) the answer's copy in the default collection."""
    await kb.upsert_chunks(kb.default_collection, [verified_chunk(answer)])


async def unindex_verified(kb: VerifiedIndex, answer_id: str) -> int:
    """Remove the answer's copy; returns how many chunks went (0 when there was none)."""
    return await kb.delete_source(kb.default_collection, verified_source(answer_id))


def rests_on_a_reply(state: RunState) -> bool:
    """Whether the run's answer rests on what a person said in the thread: a reply to
    an escalation it cites, or an answered clarifying question. Only such an answer is
    offered for saving as a verified answer."""
    if state.status is not RunStatus.ANSWERED or not state.final_answer.strip():
        return False
    if any(s.from_person for s in state.sources):
        return True
    return any(
        i.kind is InterventionKind.ASK_USER
        and i.status is InterventionStatus.ANSWERED
        and i.answer is not None
        and bool((i.answer.text or "").strip() or i.answer.option is not None)
        for i in state.interventions
    )


def answer_words(state: RunState) -> str:
    """The run's answer as saved: its text without the `[Source: …]` marks."""
    lines = (
        strip_citations(line, with_space=True).rstrip() for line in state.final_answer.splitlines()
    )
    return "\n".join(line for line in lines if line).strip()


def visible_to(sources: list[Source], team_id: str) -> list[Source]:
    """The passages a run of `team_id` may rest on: documents, and the verified answers
    saved for every team or for this one — never another team's (issue 21)."""
    return [s for s in sources if s.verified is None or s.verified.visible_to(team_id)]
