"""Opening the knowledge base's engine: a Qdrant server, or Qdrant Edge in-process.

The embedded engine (the default: no server, one process per directory; `edge_client.py`)
locks its directory, so a second process (or a second client in the same process) gets
`KnowledgeBaseLockedError` saying what to do; a directory written by qdrant-client's old
local mode is moved to Edge on first open (`local_migration.py`). A Qdrant server
(`QDRANT_URL`) is reached through qdrant-client in `server_client.py`, imported only then:
it takes a second to load.
"""

from __future__ import annotations

import logging
import math
import sqlite3
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from agent.errors import KnowledgeBaseLockedError, VectorStoreError
from agent.knowledge.edge_client import EdgeClient, EdgeLockedError
from agent.knowledge.local_migration import has_local_mode_data, migrate_local_mode
from agent.knowledge.store import VectorStore

if TYPE_CHECKING:
    from qdrant_client import AsyncQdrantClient

log = logging.getLogger(__name__)

EDGE_DIR = "edge"
"""Where the embedded engine keeps its shards inside the knowledge-base directory."""


def open_vector_store(
    *, path: Path | None, url: str | None, api_key: str | None, timeout: float
) -> tuple[VectorStore, str]:
    """A Qdrant server at `url`, else the embedded engine at `path`, else the embedded
    engine in a temporary directory removed on close; with where it lives, for messages."""
    if url:
        from qdrant_client import AsyncQdrantClient

        from agent.knowledge.server_client import ServerClient

        server = AsyncQdrantClient(
            url=url,
            api_key=api_key or None,
            timeout=max(1, math.ceil(timeout)),
            check_compatibility=False,  # a blocking HTTP call at construction otherwise
        )
        return ServerClient(server), url
    if path is not None:
        directory = Path(path).expanduser()
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise VectorStoreError(
                f"cannot create the knowledge base directory {directory}: {exc.strerror or exc}"
            ) from exc
        return _open_embedded(directory), str(directory)
    return EdgeClient(None), ":memory:"


def as_store(client: VectorStore | AsyncQdrantClient) -> VectorStore:
    """The client as a `VectorStore`: an `AsyncQdrantClient` (a server, or local mode as
    tests and the retrieval benchmark open it) is wrapped; anything else already is one.
    qdrant-client is not imported to find out: if it is not loaded, this is not one."""
    qdrant = sys.modules.get("qdrant_client")
    if qdrant is not None and isinstance(client, qdrant.AsyncQdrantClient):
        from agent.knowledge.server_client import ServerClient

        return ServerClient(client)
    return client  # type: ignore[return-value]


def _locked(directory: Path) -> KnowledgeBaseLockedError:
    return KnowledgeBaseLockedError(
        f"The knowledge base directory {directory} is already in use by another "
        f"process. The embedded knowledge base allows one process at a time per "
        f"directory. Stop the other grace process, set GRACE_DATA_DIR to a different "
        f"directory, or run a Qdrant server and set QDRANT_URL."
    )


def _open_embedded(directory: Path) -> EdgeClient:
    """The embedded engine in `directory/edge`, moving a local-mode store there first."""
    edge_root = directory / EDGE_DIR
    if not edge_root.exists() and has_local_mode_data(directory):
        try:
            migrate_local_mode(directory, edge_root)
        except RuntimeError as exc:
            if "already accessed" in str(exc):
                raise _locked(directory) from exc
            raise VectorStoreError(
                f"cannot move the knowledge base at {directory} to the embedded engine: "
                f"{exc}; run `grace ingest` again into a new GRACE_DATA_DIR"
            ) from exc
    try:
        return EdgeClient(edge_root)
    except EdgeLockedError as exc:
        raise _locked(directory) from exc
    except OSError as exc:
        raise VectorStoreError(
            f"cannot open the knowledge base at {directory}: {exc.strerror or exc}"
        ) from exc


def speed_up_local_mode_commits(store: VectorStore, collection: str) -> None:
    """WAL and synchronous=NORMAL on the SQLite file of one collection in qdrant-client's
    local mode (`AsyncQdrantClient(path=...)`, as tests and the retrieval benchmark open it).

    Local mode commits every point to SQLite on its own, each with an fsync: 2–30 ms per
    chunk on a busy disk, minutes for a large file. WAL with synchronous=NORMAL makes those
    commits cheap and stays safe if the process crashes (a power cut may lose the last
    writes, which re-running `grace ingest` restores).

    qdrant-client offers no setting for this, nor a public handle on its SQLite
    connection, so this reaches through its private attributes (`_client`, `collections`,
    `storage`) — the one place that does. It does nothing when they are not there (a
    server, the embedded engine, another qdrant-client version).
    """
    local = getattr(getattr(store, "client", None), "_client", None)
    stored = getattr(local, "collections", {}).get(collection)
    connection = getattr(getattr(stored, "storage", None), "storage", None)
    if isinstance(connection, sqlite3.Connection):
        try:
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=NORMAL")
        except sqlite3.Error as exc:
            log.warning("could not tune the local storage of %s: %s", collection, exc)
