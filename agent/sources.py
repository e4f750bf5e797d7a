"""Remembered knowledge sources: what `grace ingest` was given, so `grace sync` can read
it again (`KnowledgeSource`), and where they are kept (`SourceCatalog`, a port).

A source is a folder, a file or a URL, with the options it was ingested with and what
its last ingest learnt: when it ran, and for a crawl each page's validators (`ETag`,
`Last-Modified`) so the next crawl asks "changed since?" instead of reading every page.
Two implementations here (in memory; a JSON file in the data directory, beside the
embedded index it describes); the database one, for an index replicas share, is
`storage.sources.SqlSourceCatalog`.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import json
import os
import tempfile
from enum import StrEnum
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel, Field, ValidationError

from agent.errors import InvalidInputError
from agent.knowledge.crawl import PageMemo

__all__ = [
    "SOURCES_FILE",
    "FileMemo",
    "FileSourceCatalog",
    "InMemorySourceCatalog",
    "KnowledgeSource",
    "SourceCatalog",
    "SourceKind",
    "SourceOptions",
    "find_source",
    "source_id",
]


SOURCES_FILE = "sources.json"
"""The file catalog's name in the data directory (`FileSourceCatalog(data_dir / SOURCES_FILE)`)."""


class SourceKind(StrEnum):
    FOLDER = "folder"
    FILE = "file"
    URL = "url"


class SourceOptions(BaseModel):
    """How a source is ingested (the same on every sync)."""

    collection: str | None = None
    """The knowledge-base collection (None: the default one)."""
    max_pages: int | None = Field(default=None, ge=1)
    """A crawl's page limit (None: the crawler's default)."""
    delay: float | None = Field(default=None, ge=0)
    """Seconds between two requests to the site (None: the crawler's default)."""


class FileMemo(BaseModel):
    """What the last ingest or sync saw of one file of a local source: `grace sync`
    compares size and modification time first (no read), then the content hash."""

    source: str
    """The name its chunks are stored under (the file name)."""
    size: int = Field(ge=0)
    mtime_ns: int
    sha256: str
    skipped: str | None = None
    """Why it could not be ingested (then it has no chunks), or None."""
    chunking: str = ""
    """The chunker version its chunks were cut with (`CHUNKING_VERSION`; empty: before
    versions were kept)."""


def source_id(location: str) -> str:
    """A source's short id (`grace sources`, `grace sources remove ID`): the same on every
    replica and every catalog, since it is derived from the location."""
    return hashlib.sha256(location.encode("utf-8")).hexdigest()[:8]


class KnowledgeSource(BaseModel):
    """One source `grace ingest` was given. Its `location` (an absolute path, or a URL)
    identifies it: ingesting the same location again updates this record."""

    kind: SourceKind
    location: str
    options: SourceOptions = Field(default_factory=SourceOptions)
    added_at: dt.datetime
    last_sync: dt.datetime | None = None
    pages: dict[str, PageMemo] = Field(default_factory=dict)
    """A crawl's pages by URL, with what the next crawl sends to ask if they changed."""
    files: dict[str, FileMemo] = Field(default_factory=dict)
    """A folder's or file's files by absolute path, as last ingested."""

    @property
    def id(self) -> str:
        return source_id(self.location)

    @property
    def documents(self) -> int:
        """How many documents it holds in the knowledge base (as last read)."""
        if self.kind is SourceKind.URL:
            return len(self.pages)
        return sum(1 for memo in self.files.values() if memo.skipped is None)


class SourceCatalog(Protocol):
    """Where remembered sources are kept."""

    async def get(self, location: str) -> KnowledgeSource | None: ...

    async def list(self) -> list[KnowledgeSource]: ...

    async def save(self, source: KnowledgeSource) -> None:
        """Add the source, or replace the one with the same location."""
        ...

    async def remove(self, location: str) -> bool:
        """Forget a source; False when there was none at that location."""
        ...


async def find_source(catalog: SourceCatalog, wanted: str) -> KnowledgeSource | None:
    """The source `wanted` names: its id, its location as stored, or a path that resolves
    to it (`grace sources remove ./docs`)."""
    sources = await catalog.list()
    for source in sources:
        if wanted in (source.id, source.location):
            return source
    if "://" not in wanted:
        resolved = _absolute(wanted)
        for source in sources:
            if source.location == resolved:
                return source
    return None


def _absolute(path: str) -> str:
    return str(Path(path).expanduser().resolve())


class InMemorySourceCatalog:
    """A catalog for one process (tests, a one-off ingest)."""

    def __init__(self) -> None:
        self._sources: dict[str, KnowledgeSource] = {}

    async def get(self, location: str) -> KnowledgeSource | None:
        found = self._sources.get(location)
        return found.model_copy(deep=True) if found is not None else None

    async def list(self) -> list[KnowledgeSource]:
        return [s.model_copy(deep=True) for s in self._sources.values()]

    async def save(self, source: KnowledgeSource) -> None:
        self._sources[source.location] = source.model_copy(deep=True)

    async def remove(self, location: str) -> bool:
        return self._sources.pop(location, None) is not None


class _CatalogFile(BaseModel):
    version: int = 1
    sources: list[KnowledgeSource] = Field(default_factory=list)


class FileSourceCatalog:
    """Sources in one JSON file (e.g. `DATA_DIR/sources.json`), rewritten atomically
    (temporary file + rename, mode 0600) so a crash never leaves half a file. One
    process at a time writes it, as with the rest of the data directory."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = asyncio.Lock()

    def _read(self) -> dict[str, KnowledgeSource]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise InvalidInputError(f"cannot read {self.path}: {exc.strerror or exc}") from exc
        try:
            stored = _CatalogFile.model_validate_json(text)
        except ValidationError as exc:
            raise InvalidInputError(
                f"cannot read {self.path}: not a GRACE sources file ({exc.error_count()} "
                "problem(s)); move it away to start a new one"
            ) from exc
        return {source.location: source for source in stored.sources}

    def _write(self, sources: dict[str, KnowledgeSource]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        body = _CatalogFile(sources=list(sources.values())).model_dump(mode="json")
        handle, temporary = tempfile.mkstemp(prefix=".sources-", dir=self.path.parent)
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as stream:
                json.dump(body, stream, ensure_ascii=False, indent=1)
                stream.flush()
                os.fsync(stream.fileno())
            os.chmod(temporary, 0o600)
            os.replace(temporary, self.path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise

    async def get(self, location: str) -> KnowledgeSource | None:
        return self._read().get(location)

    async def list(self) -> list[KnowledgeSource]:
        return list(self._read().values())

    async def save(self, source: KnowledgeSource) -> None:
        async with self._lock:
            sources = self._read()
            sources[source.location] = source
            self._write(sources)

    async def remove(self, location: str) -> bool:
        async with self._lock:
            sources = self._read()
            if sources.pop(location, None) is None:
                return False
            self._write(sources)
            return True
