"""Atomic file writes: a reader or a crash sees the old file or the new one, never half of either."""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import BinaryIO


def atomic_write_text(path: str | os.PathLike[str], text: str, encoding: str = "utf-8") -> None:
    atomic_write_bytes(path, text.encode(encoding))


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write to a temporary file in the same folder, fsync, then rename over the target: a reader
    (or a crash) sees the old file or the new one, never half of either."""
    with atomic_writer(path) as fh:
        fh.write(data)


@contextmanager
def atomic_writer(path: str | os.PathLike[str], *, sync: bool = True) -> Iterator[BinaryIO]:
    """A binary file to write in pieces, published like `atomic_write_bytes` publishes: for a file
    too big to build in memory first (the embedding cache streams a compacted segment of any size
    through it). The block writes into a temporary file in the target's folder; when it ends
    normally the file is fsynced and renamed over the target, when it raises the temporary file
    is removed and the target is left as it was. `sync=False` skips the fsync, for a cache whose
    files check themselves when read (a crash may then leave the new name on unwritten data)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    mode = publish_mode(target)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        # mkstemp makes the temporary file 0600 (private while it is written); the rename would
        # publish that mode, turning a shared 0644 gold file owner-only. Set the final mode first.
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            if sync:
                os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        with suppress(OSError):
            os.unlink(tmp)
        raise


def publish_mode(target: Path) -> int:
    """The permission bits `target` gets when written: its own if it exists (a 0644 or 0664 gold
    file stays readable by whoever could read it), else what `open()` would give a new file,
    0o666 less the user's umask."""
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        return 0o666 & ~current_umask()


def current_umask() -> int:
    """The process umask, read without changing it where the system tells it (Linux's
    /proc/self/status): setting it to read it back would, for that instant, give a file another
    thread creates the wrong mode."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)  # elsewhere the only way to read it is to set it and put it back
    os.umask(mask)
    return mask
