"""What a local source holds, file by file, for `grace sync` to compare with later: each
supported file's size, modification time and content hash (`FileMemo`).

Taken just before the files are read, so a file that changes while it is being ingested
looks changed to the next sync (read again) rather than unchanged (missed).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path

from agent.knowledge.chunking import CHUNKING_VERSION
from agent.knowledge.chunks import SkippedFile
from agent.knowledge.ingest import scan_files
from agent.sources import FileMemo

__all__ = ["file_digest", "mark_skipped", "memo_of", "snapshot", "unreadable"]

HASH_BLOCK = 1 << 20


def file_digest(path: Path) -> str:
    """The file's SHA-256, read in blocks (memory stays flat whatever its size)."""
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while block := stream.read(HASH_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def memo_of(path: Path) -> FileMemo:
    """A file's memo now; `OSError` when it cannot be read."""
    stat = path.stat()
    return FileMemo(
        source=path.name,
        size=stat.st_size,
        mtime_ns=stat.st_mtime_ns,
        sha256=file_digest(path),
        chunking=CHUNKING_VERSION,
    )


def unreadable(path: Path, exc: OSError) -> FileMemo:
    return FileMemo(
        source=path.name, size=0, mtime_ns=0, sha256="", skipped=exc.strerror or str(exc)
    )


def snapshot(root: Path) -> dict[str, FileMemo]:
    """Memos of every supported file under `root` (a folder or one file), by absolute
    path. A file that cannot be read gets its reason as `skipped`."""
    files, _ = scan_files([root])
    memos: dict[str, FileMemo] = {}
    for file in files:
        try:
            memos[str(file)] = memo_of(file)
        except OSError as exc:
            memos[str(file)] = unreadable(file, exc)
    return memos


def mark_skipped(memos: dict[str, FileMemo], skipped: Iterable[SkippedFile]) -> None:
    """Note on the memos the files an ingest skipped (names are unique within one ingest,
    so the file name finds the memo however the path was spelt)."""
    reasons = {Path(item.path).name: item.reason for item in skipped}
    for key, memo in memos.items():
        reason = reasons.get(memo.source)
        if reason is not None:
            memos[key] = memo.model_copy(update={"skipped": reason})
