"""What the ingester produces and the knowledge base stores."""

from __future__ import annotations

import hashlib
import uuid

from pydantic import BaseModel, Field

from agent.schemas import Verification

__all__ = [
    "CHUNK_NAMESPACE",
    "Chunk",
    "IngestReport",
    "IngestResult",
    "SkippedFile",
    "chunk_point_id",
]

CHUNK_NAMESPACE = uuid.UUID("6f1d8a52-3c1e-5b7a-9d0e-4a2b7c9e1f30")
"""Namespace of the uuid5 point ids; fixed forever, or re-ingesting would duplicate."""


def chunk_point_id(source: str, index: int) -> str:
    """Deterministic Qdrant point id of a source's n-th chunk: re-ingesting replaces it."""
    return str(uuid.uuid5(CHUNK_NAMESPACE, f"{source}\x00{index}"))


class Chunk(BaseModel):
    """One retrievable passage of a document."""

    source: str
    """The file name: what answers cite and what re-ingesting replaces."""
    index: int = Field(ge=0)
    text: str
    title: str = ""
    """The heading trail the chunk sits under (Markdown), for display."""
    path: str = ""
    doc_title: str = ""
    """The document's title (front matter, else its first heading)."""
    doc_key: str = ""
    """The file name without dates and version marks: what versions of it share."""
    name_date: str | None = None
    """ISO date in the file name ("time-off_2022-12-19.md"): the mark of a snapshot."""
    text_date: str | None = None
    """ISO date of the newest revision the document states (front matter, "updated …")."""
    superseded_by: str | None = None
    """The source of the current version, when this document is an older copy."""
    page: int | None = Field(default=None, ge=1)
    """The PDF page the chunk comes from (1-based), cited as "handbook.pdf, p. 12"."""
    url: str | None = None
    """The web address of the page the chunk comes from (crawled pages)."""
    verified: Verification | None = None
    """A saved verified answer's attribution (agent/knowledge/verified.py)."""

    @property
    def doc_date(self) -> str | None:
        return self.name_date or self.text_date

    @property
    def chunk_id(self) -> str:
        return f"{self.source}#{self.index}"

    @property
    def point_id(self) -> str:
        return chunk_point_id(self.source, self.index)

    @property
    def text_hash(self) -> str:
        """What the chunk says (heading trail and text), hashed: a re-ingest of a file
        whose every chunk hashes as stored changed nothing."""
        return hashlib.sha256(f"{self.title}\x00{self.text}".encode()).hexdigest()[:32]


class IngestReport(BaseModel):
    """What ingesting one file did."""

    path: str
    source: str
    chunks: int
    replaced: int = 0
    """How many chunks of an earlier ingest of the same source were removed first."""
    unchanged: bool = False
    """The same source was stored before with exactly these chunks: nothing changed."""

    def line(self) -> str:
        """What `grace ingest` says of this file: "added 6 chunks from a.md", "replaced
        1 chunk from b.md", "unchanged: 6 chunks from c.md"."""
        noun = "chunk" if self.chunks == 1 else "chunks"
        if self.unchanged:
            return f"unchanged {self.chunks:3d} {noun} from {self.source}"
        verb = "replaced" if self.replaced else "added"
        return f"{verb:9} {self.chunks:3d} {noun} from {self.source}"


class SkippedFile(BaseModel):
    """A file `grace ingest` did not ingest, and why (said in plain words)."""

    path: str
    reason: str


class IngestResult(BaseModel):
    """What one `grace ingest` did: per-file reports, skipped files, time taken."""

    reports: list[IngestReport] = Field(default_factory=list)
    skipped: list[SkippedFile] = Field(default_factory=list)
    seconds: float = 0.0
    not_reindexed: list[str] = Field(default_factory=list)
    """Stored sources still indexed by an older tokeniser (not in this ingest's input)."""

    @property
    def files(self) -> int:
        return len(self.reports)

    @property
    def chunks(self) -> int:
        return sum(report.chunks for report in self.reports)
