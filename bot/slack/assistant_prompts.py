"""What the assistant pane offers when a thread opens: a greeting and a few suggested
prompts drawn from whatever the knowledge base holds (document titles), so a newcomer
sees at once what GRACE can answer — whatever the knowledge base is about."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import PurePath
from typing import Protocol, runtime_checkable

from agent.errors import GraceError
from agent.knowledge.qdrant_kb import StoredDocument
from blocks.limits import truncate
from bot.slack.delivery.assistant_status import readable_collection

log = logging.getLogger(__name__)

MAX_PROMPTS = 3
"""Slack shows at most four; three leave room for the person's own question."""
PROMPT_TITLE_CHARS = 40
PROMPTS_TITLE = "Try asking about"


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


def document_title(source: str, document: StoredDocument) -> str:
    """The document's own title, else its file name in words."""
    title = document.info.title if document.info is not None else ""
    if not title:
        title = PurePath(source).stem.replace("_", " ").replace("-", " ")
    return " ".join(title.split())


def prompts_for(documents: dict[str, StoredDocument], limit: int = MAX_PROMPTS) -> list[str]:
    """Titles of up to `limit` current documents (superseded versions left out), in a
    stable order so the same knowledge base always offers the same prompts."""
    titles = {
        document_title(source, document).casefold(): document_title(source, document)
        for source, document in documents.items()
        if document.superseded_by is None and document_title(source, document)
    }
    return [titles[key] for key in sorted(titles)][:limit]


def prompt(title: str) -> dict[str, str]:
    return {
        "title": truncate(title, PROMPT_TITLE_CHARS),
        "message": f"What are the key points of “{title}”?",
    }


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
    where = f"the {readable_collection(collection)} knowledge base"
    current = sum(1 for d in documents.values() if d.superseded_by is None)
    if not current:
        return Welcome(
            hello + f"{where.capitalize()} is empty for now, so I have nothing to answer "
            "from yet. Once documents are added (`grace ingest`), ask me about them here.",
            [],
        )
    titles = prompts_for(documents)
    plural = "s" if current != 1 else ""
    greeting = (
        hello + f"I answer questions from {where} ({current} document{plural}). "
        "I show my plan while I work, and ask you when I am unsure. "
        "Ask me anything, or pick a suggestion below."
    )
    return Welcome(greeting, [prompt(t) for t in titles])
