"""Files that keep a long document's expensive, derived data (its token index, its Markdown
structure, its word pieces) on disk between sessions and processes: one folder per kind of data
under the app's cache folder, one file per document text and key, checked when read, bounded in
size (issue 31).

Files are written on one writer thread (`KeptFolder.write_later`), off the path of the first
chunking that made their data (writing a 1 MB text's token index and structure took ~8 ms, 5-10%
of its first chunking); a process that exits normally writes them first.

A file: a magic of 8 bytes (the kind and its format), the payload, a CRC-32 of both. One whose
magic or checksum does not check out is removed and reported as missing: the caller builds the
data again and keeps it again. Written atomically without fsync (a file a crash left unwritten
fails its checksum). An unreadable or unwritable folder only costs the build. The folder is kept
under its bound, the least recently used files (by the time they were last read or written) first;
it is scanned for that only when the size this process knows of may pass the bound, or a minute
after its last scan (other processes write there too).

`$CHUNK_INSPECTOR_DOCUMENT_CACHE=0` turns every such folder off (the test suite does; the
benchmarks that time a first chunking empty them, `forget`).
"""

from __future__ import annotations

import logging
import os
import stat
import struct
import threading
import time
import zlib
from collections.abc import Callable, Sequence
from concurrent.futures import Future, wait
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from inspector.core.runtime.atomic import atomic_writer
from inspector.core.runtime.cachedir import default_cache_dir

log = logging.getLogger(__name__)
T = TypeVar("T")

ENV_VAR = "CHUNK_INSPECTOR_DOCUMENT_CACHE"
#: Texts shorter than this keep nothing on disk: their data is built in a few milliseconds, and a
#: corpus of small files would fill the folders with small files.
PERSIST_AT_LEAST = 1 << 17
_CRC = struct.Struct("<I")
#: Seconds after which a temporary file of a write that never finished (a process killed while
#: writing) is removed by the eviction.
STALE_TMP_S = 3600.0


def enabled() -> bool:
    """False when `$CHUNK_INSPECTOR_DOCUMENT_CACHE` says off ("0", "off", "no", "false")."""
    return os.environ.get(ENV_VAR, "").strip().lower() not in ("0", "off", "no", "false")


#: Texts this long or longer keep nothing: offsets are kept as int32.
PERSIST_BELOW = 1 << 31


def wanted(text_len: int) -> bool:
    """Whether a text of this length keeps its data on disk (and looks for it there)."""
    return PERSIST_AT_LEAST <= text_len < PERSIST_BELOW and enabled()


def code_key(magic: bytes, *, packages: Sequence[str] = (), parts: Sequence[str | bytes] = (),
             files: Sequence[Path] = ()) -> str:
    """sha256 (hex) of what kept data depends on besides its text: the format (`magic`), the
    installed versions of `packages`, other `parts`, and the bytes of `files` (the modules whose
    code made the data; a file that cannot be read counts by its name alone)."""
    import hashlib
    from importlib import metadata

    h = hashlib.sha256(magic)
    for package in packages:
        try:
            version = metadata.version(package)
        except metadata.PackageNotFoundError:
            version = "none"
        h.update(f"{package}={version}\0".encode())
    for part in parts:
        h.update((part if isinstance(part, bytes) else part.encode("utf-8", "surrogatepass")) + b"\0")
    for path in files:
        h.update(path.name.encode() + b"\0")
        with suppress(OSError):
            h.update(path.read_bytes())
    return h.hexdigest()


#: Files written on the writer thread (`KeptFolder.write_later`); False: by the caller, at once.
IN_BACKGROUND = True
_LOCK = threading.Lock()
_POOL: list[Any] = []  # the writer thread's executor, made on first use
_PENDING: set[Future[None]] = set()
#: Each folder's size in bytes as this process knows it (its last scan plus what it wrote since),
#: and when it was scanned (`time.monotonic`).
_SIZES: dict[str, tuple[int, float]] = {}
#: Seconds after which a folder is scanned again at its next write, whatever its known size.
RESCAN_S = 60.0
#: A folder past its bound is brought down to this share of it (the writes after, until it is
#: full again, need no scan).
LOW_WATER = 0.9


def _writer() -> Any:
    """The one writer thread: a ThreadPoolExecutor of one, whose work is done before the
    interpreter exits, in a multiprocessing child too (its bootstrap joins the threads like the
    main interpreter's exit; tests/core/test_piece_cache.py checks it with a spawned child)."""
    if not _POOL:
        from concurrent.futures import ThreadPoolExecutor

        _POOL.append(ThreadPoolExecutor(max_workers=1, thread_name_prefix="keep"))
    return _POOL[0]


def flush(timeout: float | None = None) -> None:
    """Wait until every file handed to the writer thread is written (or `timeout` seconds)."""
    with _LOCK:
        pending = list(_PENDING)
    if pending:
        wait(pending, timeout)


def _forget_writer() -> None:
    """In a forked child, which has none of the parent's threads: a writer of its own when needed."""
    global _LOCK, _PENDING
    _LOCK = threading.Lock()
    _POOL.clear()
    _PENDING = set()
    _SIZES.clear()


os.register_at_fork(after_in_child=_forget_writer)


@dataclass(frozen=True)
class KeptFolder:
    """One kind of kept data: its folder's name, its files' suffix and magic, its bound."""

    name: str
    suffix: str
    magic: bytes
    max_bytes: int

    def folder(self, base: Path | None = None) -> Path:
        return (default_cache_dir() if base is None else Path(base)) / self.name

    def path(self, sha256: str, key: str, base: Path | None = None) -> Path:
        """The file of the text with this sha256, for this key (what else the data depends on)."""
        return self.folder(base) / f"{sha256}-{key[:16]}{self.suffix}"

    def read(self, sha256: str, key: str, base: Path | None = None) -> memoryview | None:
        """The payload kept for this text and key, None when there is none or it does not check
        out (then the file is removed). A file read is marked as used, for the eviction's order."""
        path = self.path(sha256, key, base)
        try:
            # Checked before it is opened or a byte allocated, as `documents.document.load_document` checks
            # a user's file: a regular file (a named pipe would wait for a writer for good) no
            # larger than the folder's bound.
            st = path.stat()
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode) or st.st_size > self.max_bytes:
            self.discard(path, "not a file this folder writes")
            return None
        try:
            with open(path, "rb") as fh:
                size = os.fstat(fh.fileno()).st_size
                buf = bytearray(min(size, self.max_bytes))
                got = fh.readinto(buf)
        except OSError:
            return None
        view = memoryview(buf)[:got]
        head = len(self.magic)
        if got != size or got < head + _CRC.size or bytes(view[:head]) != self.magic \
                or zlib.crc32(view[:got - _CRC.size]) != _CRC.unpack(view[got - _CRC.size:])[0]:
            self.discard(path, "does not check out")
            return None
        with suppress(OSError):
            os.utime(path)
        return view[head:got - _CRC.size]

    def load(self, sha256: str, key: str, decode: Callable[[memoryview], T | None],
             base: Path | None = None) -> T | None:
        """`decode` of the payload kept for this text and key; None when there is none, or it does
        not check out, or `decode` refuses it (None: then the file is removed)."""
        payload = self.read(sha256, key, base)
        if payload is None:
            return None
        try:
            value = decode(payload)
        except Exception as exc:  # a payload no writer of ours made (MemoryError, OverflowError...)
            log.debug("%s: %r", self.path(sha256, key, base), exc)
            value = None
        if value is None:
            self.discard(self.path(sha256, key, base), "refused by its reader")
        return value

    def read_or_build(self, sha256: str, text_len: int | None, key: Callable[[], str],
                      decode: Callable[[memoryview], T | None], build: Callable[[], T],
                      encode: Callable[[T], Sequence[bytes | memoryview]]) -> tuple[T, bool]:
        """(the data of a text, whether it was read): `decode` of its file when the text is long
        enough to keep one (`wanted`; `text_len` None: kept whatever the length, where the data is
        dear however short its text, a PDF's conversion) and the file is there and checks out, else
        `build()`, kept for next time (`encode` of it, on the writer thread). `key()`: what else it
        depends on."""
        if not (enabled() if text_len is None else wanted(text_len)):
            return build(), False
        k = key()
        value = self.load(sha256, k, decode)
        if value is not None:
            return value, True
        value = build()
        self.write_later(sha256, k, lambda: encode(value))
        return value, False

    def discard(self, path: Path, why: str) -> None:
        log.debug("%s: %s, ignored", path, why)
        with suppress(OSError):
            path.unlink()

    def write_later(self, sha256: str, key: str, payload: Callable[[], Sequence[bytes | memoryview]],
                    base: Path | None = None) -> None:
        """`write(sha256, key, payload())` on the writer thread, off the caller's path (a first
        chunking of a long text should not wait for its files), or at once without
        `IN_BACKGROUND`. `flush` waits for it; a process that exits normally writes it first."""
        if not IN_BACKGROUND:
            self.write(sha256, key, payload(), base)
            return

        def job() -> None:
            try:
                self.write(sha256, key, payload(), base)
            except Exception:  # never raised to anyone: the data is built again next time
                log.exception("%s not kept", self.path(sha256, key, base))

        with _LOCK:
            pending = _PENDING
            future = _writer().submit(job)
            pending.add(future)
        future.add_done_callback(pending.discard)

    def write(self, sha256: str, key: str, payload: Sequence[bytes | memoryview],
              base: Path | None = None, max_bytes: int | None = None) -> bool:
        """Keep a payload (given as parts written one after another), then bring the folder back
        under `max_bytes` (default: the folder's bound). False when it could not be written
        (the cache is an optimisation: nothing raises)."""
        path = self.path(sha256, key, base)
        bound = self.max_bytes if max_bytes is None else max_bytes
        size = sum(len(part) for part in payload) + len(self.magic) + _CRC.size
        if size > bound:
            log.debug("%s not kept: larger than the folder's bound", path)
            return False  # it would be written and evicted at once
        try:
            # No fsync (~5 ms a megabyte on a first chunking's path): a file a crash left
            # unwritten fails its checksum when read, and is built again.
            with atomic_writer(path, sync=False) as fh:
                crc = zlib.crc32(self.magic)
                fh.write(self.magic)
                for part in payload:
                    crc = zlib.crc32(part, crc)
                    fh.write(part)
                fh.write(_CRC.pack(crc))
        except (OSError, ValueError) as exc:
            log.debug("%s not kept: %s", path, exc)
            return False
        self._bound(bound, path, size, base)
        return True

    def _bound(self, max_bytes: int, path: Path, size: int, base: Path | None) -> None:
        """After a file of `size` bytes was written: the folder brought back under `max_bytes`,
        scanning it only when its size, known from the last scan plus what was written since,
        may pass the bound, or the scan is older than RESCAN_S (other processes write there too).
        A scan per write stat-ed every file (31 ms at 6,500 files, on every write of a corpus run)."""
        folder = str(self.folder(base))
        with _LOCK:
            known = _SIZES.get(folder)
            if known is not None and time.monotonic() - known[1] < RESCAN_S and known[0] + size <= max_bytes:
                _SIZES[folder] = (known[0] + size, known[1])
                return
        self.evict(max_bytes, keep=path, base=base)

    def evict(self, max_bytes: int, keep: Path | None = None, base: Path | None = None) -> None:
        """Remove the least recently used files until the folder holds at most `max_bytes`, and
        when it held more, at most LOW_WATER of it (`keep`, the file just written, goes last); and
        temporary files left by a killed writer."""
        files: list[tuple[float, int, str]] = []
        now = time.time()
        try:
            entries = list(os.scandir(self.folder(base)))
        except OSError:
            return
        for entry in entries:
            try:
                st = entry.stat()
            except OSError:
                continue
            if entry.name.endswith(".tmp"):
                if now - st.st_mtime > STALE_TMP_S:
                    with suppress(OSError):
                        os.unlink(entry.path)
            elif entry.name.endswith(self.suffix):
                used = float("inf") if keep is not None and entry.path == str(keep) else st.st_mtime
                files.append((used, st.st_size, entry.path))
        total = sum(size for _t, size, _p in files)
        # Past the bound, down to LOW_WATER of it: a full folder is not scanned again at every write.
        target = max_bytes if total <= max_bytes else int(max_bytes * LOW_WATER)
        for _t, size, path in sorted(files):
            if total <= target:
                break
            with suppress(OSError):
                os.unlink(path)
                total -= size
        with _LOCK:
            _SIZES[str(self.folder(base))] = (total, time.monotonic())

    def forget(self, base: Path | None = None) -> None:
        """Remove every file of this kind (benchmarks that time a first chunking start from none),
        after the writes pending: one landing later would answer the next "first" chunking."""
        flush()
        with _LOCK:
            _SIZES.pop(str(self.folder(base)), None)
        with suppress(OSError):
            for entry in os.scandir(self.folder(base)):
                if entry.name.endswith(self.suffix):
                    with suppress(OSError):
                        os.unlink(entry.path)
