"""Atomic file writes: a reader or a crash sees the old file or the new one, never half of either."""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Iterator


def atomic_write_text(path: str | os.PathLike[str], text: str, encoding: str = "utf-8") -> None:
    atomic_write_bytes(path, text.encode(encoding))


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write to a temporary file in the same folder, fsync, then rename over the target: a reader
    (or a crash) sees the old file or the new one, never half of either."""
    with atomic_writer(path) as fh:
        fh.write(data)


@contextmanager
def atomic_writer(path: str | os.PathLike[str]) -> Iterator[BinaryIO]:
    """A binary file to write in pieces, published like `atomic_write_bytes` publishes: for a file
    too big to build in memory first (the embedding cache streams a compacted segment of any size
    through it). The block writes into a temporary file in the target's folder; when it ends
    normally the file is fsynced and renamed over the target, when it raises the temporary file
    is removed and the target is left as it was."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
