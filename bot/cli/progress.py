"""Progress bars on stderr, shown only when it is a terminal (tqdm is imported only then:
`grace` starts faster without it)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tqdm import tqdm

    from agent.evaluation import CaseRecord


class IngestProgress:
    """A progress bar on stderr (only used when stderr is a terminal), in bytes, so it
    moves through one large file as well as through many small ones."""

    def __init__(self) -> None:
        self._bar: tqdm[None] | None = None
        self._files = 0
        self._done = 0

    def start(self, files: int, size: int) -> None:
        from tqdm import tqdm  # only when a bar is shown: `grace` starts faster without it

        self._files = files
        self._bar = tqdm(
            total=size, unit="B", unit_scale=True, file=sys.stderr, leave=False, smoothing=0.1
        )

    def read(self, size: int) -> None:
        if self._bar is not None:
            self._bar.update(size)

    def advance(self, path: Path, chunks: int) -> None:
        self._done += 1
        if self._bar is not None:
            self._bar.set_postfix_str(f"{self._done}/{self._files} {path.name[-30:]}")

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


class EvalProgress:
    """A progress bar on stderr when it is a terminal; nothing otherwise."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.bar: Any = None

    def __enter__(self) -> Callable[[CaseRecord], None]:
        if sys.stderr.isatty():
            from tqdm import tqdm

            self.bar = tqdm(total=self.total, unit="question", file=sys.stderr, leave=False)
        return self.advance

    def advance(self, record: CaseRecord) -> None:
        if self.bar is not None:
            self.bar.set_postfix_str(f"{record.id}: {record.level}", refresh=False)
            self.bar.update(1)

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.close()
