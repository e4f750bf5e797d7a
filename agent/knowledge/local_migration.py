"""Moving a knowledge base from qdrant-client's local mode to the embedded engine (Edge).

Knowledge bases written before Qdrant Edge became the embedded default live in the same
directory as qdrant-client local-mode files (`meta.json`, `collection/`). On first open
they are copied, point by point with their vectors and payloads, into `edge/`, so nobody
has to re-ingest; the old files are then moved to `local-mode-backup/`, which can be
deleted. The copy is built under `edge.migrating/` and renamed when complete, so a crash
half-way leaves the old knowledge base untouched and the next start tries again.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import qdrant_edge as qe

from agent.knowledge.edge_client import create_shard

if TYPE_CHECKING:
    from qdrant_client import QdrantClient

__all__ = ["BACKUP_DIR", "has_local_mode_data", "migrate_local_mode"]

log = logging.getLogger(__name__)

BACKUP_DIR = "local-mode-backup"
BATCH = 512
_LEGACY = ("meta.json", "collection")


def has_local_mode_data(directory: Path) -> bool:
    """True when `directory` holds a qdrant-client local-mode store."""
    return (directory / "meta.json").is_file()


def migrate_local_mode(directory: Path, edge_root: Path) -> int:
    """Copy every collection of the local-mode store at `directory` into `edge_root`;
    returns how many points were copied. `RuntimeError` when another process has it open."""
    from qdrant_client import QdrantClient  # only to read the old store: slow to import

    staging = edge_root.with_name(edge_root.name + ".migrating")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    client = QdrantClient(path=str(directory))
    copied = 0
    try:
        for collection in client.get_collections().collections:
            copied += _copy(client, collection.name, staging / collection.name)
    finally:
        client.close()
    staging.rename(edge_root)
    backup = directory / BACKUP_DIR
    backup.mkdir(exist_ok=True)
    for name in _LEGACY:
        if (directory / name).exists():
            (directory / name).rename(backup / name)
    log.warning(
        "moved the knowledge base in %s to the embedded engine (%d chunks); the old "
        "files are in %s and can be deleted",
        directory,
        copied,
        backup,
    )
    return copied


def _copy(client: QdrantClient, name: str, target: Path) -> int:
    from qdrant_client import models

    params = client.get_collection(name).config.params
    vectors = params.vectors if isinstance(params.vectors, dict) else {}
    sparse = params.sparse_vectors or {}
    idf = any(p.modifier == models.Modifier.IDF for p in sparse.values())
    shard = create_shard(
        target, dense={k: v.size for k, v in vectors.items()}, sparse=list(sparse), idf=idf
    )
    copied = 0
    try:
        offset = None
        while True:
            records, offset = client.scroll(
                name, limit=BATCH, offset=offset, with_payload=True, with_vectors=True
            )
            points = [
                qe.Point(str(r.id), _vector(r.vector), dict(r.payload or {})) for r in records
            ]
            if points:
                shard.update(qe.UpdateOperation.upsert_points(points))
                copied += len(points)
            if offset is None:
                break
        shard.update(qe.UpdateOperation.create_field_index("source", qe.PayloadSchemaType.Keyword))
        shard.flush()
    finally:
        shard.close()
    return copied


def _vector(vector: object) -> dict[str, object]:
    from qdrant_client import models

    converted: dict[str, object] = {}
    for key, value in dict(vector or {}).items():  # type: ignore[call-overload]
        if isinstance(value, models.SparseVector):
            converted[key] = qe.SparseVector(list(value.indices), list(value.values))
        else:
            converted[key] = [float(v) for v in value]
    return converted
