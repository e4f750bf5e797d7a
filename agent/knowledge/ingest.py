"""Files and folders into the knowledge base (`grace ingest`).

Files are read into chunks by `documents.py` (Markdown, plain text, CSV FAQs, PDF, Word
and HTML, with what version resolution needs); `ingest_documents` stores any documents,
files or fetched web pages (`source_ingest.py` dispatches a folder, a file or a URL). After
ingesting, older copies of a document are marked `superseded_by` the current one
(`versions.py`).

Ingesting is idempotent per file: the source's chunks are overwritten in place (point
ids are deterministic) and any left over from a longer earlier version are deleted. The
source name is the file name. Writes are batched across files, so memory stays bounded
and 2,000 small files are a few dozen Qdrant calls, not thousands. A file that cannot be
ingested (unsupported type, unreadable, not UTF-8, binary, empty) is skipped and named
in the result with the reason; only when nothing at all can be ingested is it an error.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import time
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from pathlib import Path

from agent.errors import InvalidInputError
from agent.knowledge.chunking import CHUNK_CHARS
from agent.knowledge.chunks import (
    Chunk,
    IngestReport,
    IngestResult,
    SkippedFile,
    chunk_point_id,
)
from agent.knowledge.documents import (
    SUPPORTED_SUFFIXES,
    Document,
    check_suffix,
    document_chunks,
    find_files,
    load_documents,
    load_file,
    with_info,
)
from agent.knowledge.qdrant_kb import QdrantKnowledgeBase, StoredDocument
from agent.knowledge.tokenize import LEXICAL_VERSION
from agent.knowledge.vectors import SparseValues, chunk_sparse_vectors
from agent.knowledge.versions import DocumentInfo, current_versions

log = logging.getLogger(__name__)

__all__ = [
    "CHUNK_CHARS",
    "SAMPLE_KB_DIR",
    "SUPPORTED_SUFFIXES",
    "Chunk",
    "IngestReport",
    "IngestResult",
    "find_files",
    "ingest",
    "ingest_documents",
    "ingest_paths",
    "load_documents",
    "load_file",
    "refresh_versions",
    "scan_files",
]

SAMPLE_KB_DIR = Path(__file__).resolve().parent.parent / "sample_kb"
"""The sample knowledge base shipped with the project (Northwind Labs)."""

WRITE_BATCH = 512
"""Chunks buffered (across files) before one write to Qdrant."""
PARALLEL_BYTES = 8 << 20
"""Inputs at least this large compute sparse vectors in a worker process (`_Writer`)."""

ProgressCallback = Callable[[Path, int], None]
"""Called after each file with the file and the chunks it gave (0 when skipped)."""
ReadCallback = Callable[[int], None]
"""Called as files are read with how many more bytes were read and stored since the last
call, so a progress bar moves through one large file too."""


# --------------------------------------------------------------------------- ingest


def _scan(paths: Sequence[Path]) -> tuple[list[Path], list[SkippedFile]]:
    """The files to ingest, and the files skipped for their type (hidden ones silently)."""
    files: list[Path] = []
    skipped: list[SkippedFile] = []
    for path in map(Path, paths):
        if not path.exists() and not path.is_symlink():
            raise InvalidInputError(f"cannot ingest {path}: no such file or directory")
        candidates = (
            sorted(
                p
                for p in path.rglob("*")
                if (p.is_file() or p.is_symlink())
                and not any(part.startswith(".") for part in p.relative_to(path).parts)
            )
            if path.is_dir()
            else [path]
        )
        if len(paths) == 1 and not path.is_dir():
            check_suffix(path)  # one file named on its own: say plainly why not
        for file in candidates:
            if file.suffix.lower() in SUPPORTED_SUFFIXES:
                files.append(file)
            else:
                kind = file.suffix or "(none)"
                skipped.append(
                    SkippedFile(
                        path=str(file),
                        reason=f"unsupported file type {kind!r}",
                    )
                )
    return files, skipped


def scan_files(paths: Sequence[Path]) -> tuple[list[Path], list[SkippedFile]]:
    """The supported files under `paths` (one per file name, as `ingest` reads them), and
    the ones skipped for their type; `InvalidInputError` as `ingest` raises it."""
    files, skipped = _scan(paths)
    return _unique_names(files), skipped


def _unique_names(files: Sequence[Path]) -> list[Path]:
    """Files by name; two different files with one name would replace each other."""
    seen: dict[str, Path] = {}
    unique: list[Path] = []
    for file in files:
        other = seen.get(file.name)
        if other is not None:
            if other.resolve() != file.resolve():
                raise InvalidInputError(
                    f"cannot ingest both {other} and {file}: sources are named by file "
                    f"name, so one would replace the other; rename one of them"
                )
            continue
        seen[file.name] = file
        unique.append(file)
    return unique


class _Writer:
    """Buffers chunks across files and writes them in batches.

    With a worker `pool`, a batch's sparse vectors are computed in the worker while the
    caller reads and chunks on, and the batch is written when the next one is handed
    over (at most one write outstanding, in order): two cores instead of one."""

    def __init__(
        self, kb: QdrantKnowledgeBase, collection: str, pool: Executor | None = None
    ) -> None:
        self.kb = kb
        self.collection = collection
        self.pool = pool
        self.buffer: list[Chunk] = []
        self.doomed: list[str] = []
        """Point ids to delete: the tails of shorter new versions."""
        self.pending: asyncio.Task[int] | None = None

    async def add(self, chunk: Chunk) -> bool:
        """Buffer a chunk; True when that flushed the buffer."""
        self.buffer.append(chunk)
        if len(self.buffer) >= WRITE_BATCH:
            await self.flush(final=False)
            return True
        return False

    async def flush(self, *, final: bool = True) -> None:
        """Hand the buffer over; `final`: and wait until everything handed over is stored."""
        if self.buffer:
            batch, self.buffer = self.buffer, []
            if self.pool is None:
                await self.kb.upsert_chunks(self.collection, batch)
            else:
                pieces = [(c.title, c.text) for c in batch]
                vectors = asyncio.get_running_loop().run_in_executor(
                    self.pool, chunk_sparse_vectors, pieces
                )
                await self.drain()
                self.pending = asyncio.ensure_future(self._write(batch, vectors))
        if final or self.doomed:
            await self.drain()
        if self.doomed:
            doomed, self.doomed = self.doomed, []
            await self.kb.delete_points(self.collection, doomed)

    async def _write(self, batch: list[Chunk], vectors: Awaitable[list[SparseValues]]) -> int:
        return await self.kb.upsert_chunks(self.collection, batch, sparse=await vectors)

    async def drain(self) -> None:
        """Wait for the outstanding write, if any (its errors surface here)."""
        if self.pending is not None:
            pending, self.pending = self.pending, None
            await pending

    def abandon(self) -> None:
        if self.pending is not None and not self.pending.done():
            self.pending.cancel()


def _worker_pool(total_bytes: int, parallel_bytes: int) -> Executor | None:
    """A worker process for inputs worth it (starting one costs about a second), when
    there is a second core to run it on."""
    if total_bytes < parallel_bytes or (os.cpu_count() or 1) < 2:
        return None
    return ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))


async def ingest(
    kb: QdrantKnowledgeBase,
    paths: Sequence[Path],
    *,
    collection: str | None = None,
    on_file: ProgressCallback | None = None,
    on_start: Callable[[int, int], None] | None = None,
    on_read: ReadCallback | None = None,
    parallel_bytes: int = PARALLEL_BYTES,
) -> IngestResult:
    """Ingest files and directories into `collection` (default: the KB's default).

    Streamed: a file is read in blocks and its chunks are written in batches as they
    come, so memory stays bounded whatever the file's size. For a progress bar,
    `on_start` hears how many files and bytes will be read, `on_read` how many more
    bytes were read and written, `on_file` about each file as it is done. From
    `parallel_bytes` of input on, a second process computes the sparse vectors."""
    started = time.perf_counter()
    files, skipped = _scan(paths)
    files = _unique_names(files)
    if not files:
        kinds = ", ".join(sorted(SUPPORTED_SUFFIXES))
        where = ", ".join(str(p) for p in paths)
        raise InvalidInputError(f"cannot ingest {where}: no supported files ({kinds}) inside")
    return await ingest_documents(
        kb,
        [Document(file) for file in files],
        collection=collection,
        skipped=skipped,
        on_file=on_file,
        on_start=on_start,
        on_read=on_read,
        parallel_bytes=parallel_bytes,
        started=started,
    )


async def ingest_documents(
    kb: QdrantKnowledgeBase,
    documents: Sequence[Document],
    *,
    collection: str | None = None,
    skipped: Sequence[SkippedFile] = (),
    on_file: ProgressCallback | None = None,
    on_start: Callable[[int, int], None] | None = None,
    on_read: ReadCallback | None = None,
    parallel_bytes: int = PARALLEL_BYTES,
    started: float | None = None,
) -> IngestResult:
    """Store documents (files, or web pages fetched into memory) under their source names;
    `skipped` are carried into the result. See `ingest`."""
    started = time.perf_counter() if started is None else started
    name = collection or kb.default_collection
    skipped = list(skipped)
    sizes = {document.source: _document_size(document) for document in documents}
    if on_start is not None:
        on_start(len(documents), sum(sizes.values()))
    await kb.ensure_collection(name)
    stale = await kb.index_is_stale(name)
    stored = await kb.documents(name)
    pool = _worker_pool(sum(sizes.values()), parallel_bytes)
    writer = _Writer(kb, name, pool)
    reports: list[IngestReport] = []
    infos: dict[str, DocumentInfo] = {
        source: doc.info for source, doc in stored.items() if doc.info is not None
    }
    written: dict[str, int] = {}
    removed: set[str] = set()

    def finished(document: Document, chunks: int, reported: int) -> None:
        """Tell the progress callbacks a file is done: its chunks, the bytes not yet told."""
        if on_file is not None:
            on_file(document.path, chunks)
        size = sizes[document.source]
        if on_read is not None and size > reported:
            on_read(size - reported)

    try:
        for document in documents:
            source = document.source
            count = 0
            hashes: dict[str, str] = {}
            flushed_early = False
            reported = 0
            try:
                for chunk in document_chunks(document):
                    count += 1
                    hashes[chunk.point_id] = chunk.text_hash
                    if await writer.add(chunk):
                        flushed_early = True
                        if on_read is not None and document.bytes_read > reported:
                            on_read(document.bytes_read - reported)
                            reported = document.bytes_read
            except InvalidInputError as exc:
                writer.buffer = [c for c in writer.buffer if c.source != source]
                if flushed_early:  # only possible for an I/O error mid-way through a big file
                    await writer.flush()
                    await kb.delete_source(name, source)
                    infos.pop(source, None)
                    removed.add(source)
                skipped.append(
                    SkippedFile(path=document.where, reason=_reason(exc, document.where))
                )
                finished(document, 0, reported)
                continue
            old = stored.get(source)
            old_count = len(old.ids) if old is not None else 0
            if count == 0:
                skipped.append(SkippedFile(path=document.where, reason="empty: no text in it"))
                if old_count:
                    writer.doomed.extend(old.ids if old is not None else [])
                    infos.pop(source, None)
                    removed.add(source)
                finished(document, 0, reported)
                continue
            info = document.info()
            infos[source] = info
            written[source] = count
            writer.buffer = [with_info(c, info) if c.source == source else c for c in writer.buffer]
            if old is not None:
                keep = {chunk_point_id(source, i) for i in range(count)}
                writer.doomed.extend(i for i in old.ids if i not in keep)
            reports.append(
                IngestReport(
                    path=document.where,
                    source=source,
                    chunks=count,
                    replaced=old_count,
                    unchanged=old is not None and old.hashes == hashes,
                )
            )
            finished(document, count, reported)
        await writer.flush()
    finally:
        writer.abandon()
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
    await _resolve_versions(kb, name, infos, stored, written)
    not_reindexed = sorted(
        source
        for source, document in stored.items()
        if source not in written
        and source not in removed
        and (document.lexical_version or 0) < LEXICAL_VERSION
    )
    if stale and not not_reindexed:
        await kb.stamp_lexical_version(name)  # every document was indexed by today's rules
    elif stale:
        log.warning(
            "collection %s still has %d document(s) indexed by an older GRACE (%s); "
            "ingest them again to re-index the collection",
            name,
            len(not_reindexed),
            ", ".join(not_reindexed[:5]) + (" …" if len(not_reindexed) > 5 else ""),
        )
    return IngestResult(
        reports=reports,
        skipped=skipped,
        seconds=round(time.perf_counter() - started, 3),
        not_reindexed=not_reindexed if stale else [],
    )


async def _resolve_versions(
    kb: QdrantKnowledgeBase,
    collection: str,
    infos: dict[str, DocumentInfo],
    stored: dict[str, StoredDocument],
    written: dict[str, int],
) -> None:
    """Mark older copies `superseded_by` their current version (and unmark the rest)."""
    decided = current_versions(list(infos.values()))
    for source, superseded_by in decided.items():
        if source in written:
            if superseded_by is None:
                continue  # new chunks are written as current
            ids = [chunk_point_id(source, i) for i in range(written[source])]
        else:
            old = stored.get(source)
            if old is None or old.superseded_by == superseded_by:
                continue
            ids = old.ids
        await kb.mark_superseded(collection, ids, superseded_by=superseded_by)


async def refresh_versions(kb: QdrantKnowledgeBase, collection: str | None = None) -> None:
    """Decide again which stored documents are older copies of which, after documents
    were removed without ingesting anything (`grace sync`, `grace sources remove`)."""
    name = collection or kb.default_collection
    stored = await kb.documents(name)
    infos = {source: doc.info for source, doc in stored.items() if doc.info is not None}
    await _resolve_versions(kb, name, infos, stored, {})


def _size(file: Path) -> int:
    try:
        return file.stat().st_size
    except OSError:
        return 0  # named in the skipped list when it is read


def _document_size(document: Document) -> int:
    return len(document.content) if document.content is not None else _size(document.path)


def _reason(exc: InvalidInputError, file: Path | str) -> str:
    """The plain reason of a read error, without the "cannot read PATH:" prefix."""
    message = exc.message
    for prefix in (f"cannot read {file}: ", f"cannot ingest {file}: "):
        if message.startswith(prefix):
            return message[len(prefix) :]
    return message


async def ingest_paths(
    kb: QdrantKnowledgeBase, paths: Sequence[Path], *, collection: str | None = None
) -> list[IngestReport]:
    """`ingest`, keeping only the per-file reports."""
    return (await ingest(kb, paths, collection=collection)).reports
