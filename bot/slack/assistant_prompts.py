"""What the assistant pane offers when a thread opens: a greeting and a few suggested
prompts drawn from whatever the knowledge base holds, so a newcomer sees at once what
GRACE can answer — whatever the knowledge base is about.

The prompts are questions the documents themselves ask and answer (an FAQ row, a section
headed by a question): a question asked in the knowledge base's own words finds its
answer directly. A "key points of <document>" prompt would ask for a summary of a whole
document, which a run searching for passages cannot give with confidence. A knowledge base
that asks no question of itself gets no prompts."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from agent.errors import GraceError
from agent.knowledge.qdrant_kb import StoredDocument
from blocks.limits import truncate

log = logging.getLogger(__name__)

MAX_PROMPTS = 3
"""Slack shows at most four; three leave room for the person's own question."""
PROMPT_TITLE_CHARS = 40
PROMPTS_TITLE = "Try asking"


@runtime_checkable
class DocumentCatalog(Protocol):
    """A knowledge base that can list its documents (`QdrantKnowledgeBase` can)."""

    @property
    def default_collection(self) -> str: ...

    async def documents(self, collection: str) -> dict[str, StoredDocument]: ...


@dataclass(frozen=True)
class Welcome:
    greeting: str
    prompts: list[dict[str, str]]


QUESTION_MARKS = ("?", "？")
SECTION_SEPARATOR = " › "
"""How a chunk's heading trail joins its headings (`agent/knowledge/chunking.py`)."""


def document_questions(document: StoredDocument) -> list[str]:
    """The questions a document answers, in its own order: sections (FAQ rows) whose
    heading is a question."""
    questions: list[str] = []
    for index in sorted(document.sections):
        heading = " ".join(document.sections[index].split(SECTION_SEPARATOR)[-1].split())
        if heading.endswith(QUESTION_MARKS) and heading not in questions:
            questions.append(heading)
    return questions


def _words(question: str) -> frozenset[str]:
    return frozenset(re.findall(r"\w+", question.casefold()))


def broad_questions(questions: list[str]) -> set[str]:
    """Questions whose every word is also in another, longer question ("What is Beacon?"
    beside "What is the latest version of Beacon Server?"): they could mean several
    passages, so the run would have to ask which or fall short; a prompt should not."""
    words = {q: _words(q) for q in questions}
    return {q for q in questions if any(words[q] < words[o] for o in questions)}


def prompts_for(documents: dict[str, StoredDocument], limit: int = MAX_PROMPTS) -> list[str]:
    """Up to `limit` specific questions from current documents (superseded versions left
    out): the first question of each document in turn, then the second…, documents in a
    stable order so the same knowledge base always offers the same prompts."""
    asked = [
        document_questions(documents[source])
        for source in sorted(documents, key=str.casefold)
        if documents[source].superseded_by is None
    ]
    broad = broad_questions([q for questions in asked for q in questions])
    per_document = [[q for q in questions if q not in broad] for questions in asked]
    chosen: list[str] = []
    for rank in range(max((len(q) for q in per_document), default=0)):
        for questions in per_document:
            if rank < len(questions) and questions[rank] not in chosen:
                chosen.append(questions[rank])
    return chosen[:limit]


def prompt(question: str) -> dict[str, str]:
    return {"title": truncate(question, PROMPT_TITLE_CHARS), "message": question}


async def welcome(knowledge_base: object, user: str) -> Welcome:
    """The greeting and prompts for a new assistant thread of `user`."""
    hello = f"Hi <@{user}>! " if user else "Hi! "
    if not isinstance(knowledge_base, DocumentCatalog):
        return Welcome(hello + "Ask me a question and I will look it up.", [])
    collection = knowledge_base.default_collection
    try:
        documents = await knowledge_base.documents(collection)
    except GraceError as exc:
        log.warning("could not list the knowledge base for suggested prompts: %s", exc)
        documents = {}
    where = "the knowledge base"
    current = sum(1 for d in documents.values() if d.superseded_by is None)
    if not current:
        return Welcome(
            hello + f"{where.capitalize()} is empty for now, so I have nothing to answer "
            "from yet. Once documents are added (`grace ingest`), ask me about them here.",
            [],
        )
    questions = prompts_for(documents)
    plural = "s" if current != 1 else ""
    greeting = (
        hello + f"I answer questions from {where} ({current} document{plural}). "
        "I show my plan while I work, and ask you when I am unsure. "
        + ("Ask me anything, or pick a suggestion below." if questions else "Ask me anything.")
    )
    return Welcome(greeting, [prompt(q) for q in questions])
