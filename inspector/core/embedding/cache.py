"""A persistent embedding cache keyed by (model, sha256 of the exact embedded text).

Why this layout: moving a slider re-chunks the document, and most of the new chunks have texts
that were embedded a moment ago (changing the overlap of a window strategy keeps many windows;
a re-opened document keeps all of them). So the cache answers "which of these N texts do I
already have?" in one vectorised pass, and it must load fast and never trust a damaged file.

On disk, each model has its own folder below `<root>/embeddings/`. A folder holds *segment*
files, each written once, atomically (temporary file + fsync + rename), never appended to:

    header  : magic b"CIEMB001", uint32 dim, uint32 count, uint32 crc32(magic + dim + count)
    records : count x (32-byte sha256 key, dim x float32 little-endian, uint32 crc32(key + vector))

What stays in memory is bounded, whatever the size of the cache on disk (a user with a million
cached chunk vectors would otherwise hold gigabytes for the life of the process):

* per segment, an *index*: its valid keys, sorted, and the record row of each (40 bytes a key).
  Lookups are one `np.searchsorted` per segment; compaction keeps at most MAX_SEGMENTS + 1 of
  them. Vectors stay in the file and are read on demand, a few nearby records per read call,
  each record's checksum, key and values checked again (a file changed since it was indexed
  yields a miss, never a wrong vector). No file is kept open or mapped between calls, so
  compaction and `clear()` can always delete files (also on Windows, where an open or mapped
  file cannot be removed).
* a memory layer in front: recently used vectors in one LRU per cache, capped in bytes
  (`memory_bytes`, vector bytes plus the measured per-entry overhead `ENTRY_OVERHEAD`).
* vectors put but not yet flushed (`pending`), written as one segment by `flush()`: embed_texts
  flushes when it finishes, and whenever FLUSH_EVERY vectors are pending, which bounds them.

An indexer keeps only records whose checksum matches and whose values are finite, so a truncated
file keeps its complete records, a garbled record is dropped (its text is embedded again), and a
file with a broken header is ignored. Damaged segments are rewritten on the next load; more than
MAX_SEGMENTS are merged into one, streaming records (memory bounded by READ_CHUNK, not by the
size of the cache). Nothing here raises on a bad or unwritable cache: it degrades to memory only.
"""

from __future__ import annotations

import atexit
import hashlib
import logging
import os
import re
import struct
import threading
import uuid
import zlib
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Protocol

from inspector.core.runtime.atomic import atomic_write_bytes, atomic_writer
from inspector.core.runtime.cachedir import default_cache_dir

if TYPE_CHECKING:
    import numpy as np
else:
    from inspector.core.runtime.lazy_numpy import np

log = logging.getLogger(__name__)

MAGIC = b"CIEMB001"
_HEADER = struct.Struct("<8sIII")
KEY_BYTES = 32
_KEY_DTYPE = f"S{KEY_BYTES}"
SEGMENT_SUFFIX = ".emb"
#: More segments than this in one model folder are merged (all of them when the folder is
#: loaded, the smaller half when a flush adds one too many).
MAX_SEGMENTS = 16
#: `embed_texts` flushes when this many new vectors are pending in memory.
FLUSH_EVERY = 4096
#: Bytes read from a segment file in one call while indexing, reading or compacting it: what a
#: pass over a file of any size holds at once.
READ_CHUNK = 1 << 20
#: Wanted records at most this many bytes apart are read with one call (reading the bytes
#: between them costs less than another system call).
_GAP_BYTES = 32 << 10
#: The memory layer's default bound. 64 MiB holds ~36,000 MiniLM vectors (384 floats, plus
#: overhead): the chunks of a large working set (a 1 MB document cut at 128 tokens is ~2,000
#: chunks; a few dozen documents at every overlap a slider visits), while a vector that falls out
#: is read back from disk (the OS page cache) at a few microseconds. More would only hold vectors
#: nobody asks for again, for the life of the process.
DEFAULT_MEMORY_BYTES = 64 << 20
#: What one memory-layer entry costs beyond its vector's bytes, counted against the bound
#: (measured with tracemalloc, CPython 3.11: ~245 bytes for the ndarray object, the OrderedDict
#: node and the (model, key) tuple, plus the 65-byte key it keeps alive).
ENTRY_OVERHEAD = 320


def text_key(text: str) -> bytes:
    """The cache key of an embedded text: sha256 of its UTF-8 bytes (32 bytes)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


def _model_folder_name(model_id: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", model_id)[-48:].strip("._") or "model"
    return f"{slug}-{hashlib.sha256(model_id.encode('utf-8')).hexdigest()[:12]}"


def _record_dtype(dim: int) -> np.dtype:
    return np.dtype([("key", f"S{KEY_BYTES}"), ("vec", "<f4", (dim,)), ("crc", "<u4")])


def encode_segment(keys: Sequence[bytes], vectors: np.ndarray) -> bytes:
    """Bytes of one segment file (see the module docstring)."""
    vectors = np.ascontiguousarray(vectors, dtype="<f4")
    n, dim = vectors.shape
    head = MAGIC + struct.pack("<II", dim, n)
    if len(keys) != n or any(len(k) != KEY_BYTES for k in keys):
        raise ValueError(f"a segment needs {n} keys of {KEY_BYTES} bytes")
    recs = np.empty(n, dtype=_record_dtype(dim))
    recs["key"] = np.array(keys, dtype=f"S{KEY_BYTES}") if n else recs["key"]
    recs["vec"] = vectors
    raw = recs.view(np.uint8).reshape(n, -1) if n else np.zeros((0, 0), np.uint8)
    body_len = KEY_BYTES + 4 * dim
    crcs = [zlib.crc32(raw[i, :body_len].tobytes()) for i in range(n)]
    recs["crc"] = np.asarray(crcs, dtype="<u4")
    return head + struct.pack("<I", zlib.crc32(head)) + recs.tobytes()


def decode_segment(data: bytes, dim: int | None = None) -> tuple[list[bytes], np.ndarray, bool]:
    """(keys, vectors, intact) of the valid records in a segment's bytes. `intact` is False when
    anything was wrong (header, length, a checksum, a non-finite value); never raises."""
    if len(data) < _HEADER.size:
        return [], np.zeros((0, dim or 0), np.float32), False
    magic, fdim, count, hcrc = _HEADER.unpack_from(data)
    if magic != MAGIC or hcrc != zlib.crc32(data[:_HEADER.size - 4]) or fdim == 0 or (
            dim is not None and fdim != dim):
        return [], np.zeros((0, dim or 0), np.float32), False
    dt = _record_dtype(fdim)
    body = memoryview(data)[_HEADER.size:]
    whole = min(count, len(body) // dt.itemsize)
    intact = whole == count and len(body) == count * dt.itemsize
    recs = np.frombuffer(body[:whole * dt.itemsize], dtype=dt)
    ok = _valid(recs, fdim)
    if not ok.all():
        intact = False
    keep = np.flatnonzero(ok)
    keys = [bytes(recs["key"][i]).ljust(KEY_BYTES, b"\0") for i in keep]
    out = np.array(recs["vec"][keep], dtype=np.float32)  # a copy: the file buffer is released
    out.setflags(write=False)
    return keys, out, intact


def _valid(recs: np.ndarray, dim: int) -> np.ndarray:
    """Mask of the records (of `_record_dtype(dim)`) whose checksum matches and whose values are
    all finite."""
    n = len(recs)
    if n == 0:
        return np.zeros(0, dtype=bool)
    size, body = recs.dtype.itemsize, KEY_BYTES + 4 * dim
    raw = np.ascontiguousarray(recs).view(np.uint8).data  # one flat buffer: cheap slices
    crcs = np.fromiter((zlib.crc32(raw[i * size:i * size + body]) for i in range(n)), dtype=np.uint32,
                       count=n)
    return (crcs == recs["crc"]) & np.isfinite(recs["vec"]).all(axis=1)


def _pread(fh: BinaryIO, n: int, offset: int) -> bytes:
    """Up to `n` bytes at `offset` (fewer at the end of the file)."""
    if hasattr(os, "pread"):
        data = os.pread(fh.fileno(), n, offset)
        if len(data) == n or not data:
            return data  # the usual case: one call
    else:  # Windows: no pread; a file object here is used by one thread, under the lock
        fh.seek(offset)
        data = fh.read(n) or b""
    rest = _pread(fh, n - len(data), offset + len(data)) if data else b""
    return data + rest


def _read_records(fh: BinaryIO, dt: np.dtype, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The records at `rows` (ascending record numbers) of an open segment file, and a mask of
    those read whole (a file shortened since it was indexed ends early). Rows near each other are
    read with one call of at most READ_CHUNK bytes, of which only the wanted records are kept."""
    size = dt.itemsize
    gap, span_rows = max(1, _GAP_BYTES // size), max(1, READ_CHUNK // size)
    at = rows.tolist()
    n = len(at)
    pieces: list[bytes] = []
    got = np.zeros(n, dtype=bool)
    i = 0
    while i < n:
        first, j = at[i], i + 1
        while j < n and at[j] - at[j - 1] <= gap and at[j] - first < span_rows:
            j += 1
        data = _pread(fh, (at[j - 1] - first + 1) * size, _HEADER.size + first * size)
        have = len(data) // size
        if at[j - 1] - first + 1 == j - i:  # every record of the span is wanted
            pieces.append(data if len(data) == have * size else data[:have * size])
            got[i:i + have] = True
        else:
            for t, r in enumerate(at[i:j]):
                if r - first < have:
                    pieces.append(data[(r - first) * size:(r - first + 1) * size])
                    got[i + t] = True
        i = j
    out = np.zeros(n, dtype=dt)
    if pieces:
        out[got] = np.frombuffer(b"".join(pieces), dtype=dt)
    return out, got


class _Segment:
    """The in-memory index of one segment file: its valid keys, sorted (each once), and the record
    row of each. The vectors stay in the file."""

    __slots__ = ("path", "keys", "rows", "damaged")

    def __init__(self, path: Path, keys: np.ndarray, rows: np.ndarray, *, is_sorted: bool = False) -> None:
        if not is_sorted:
            order = np.argsort(keys, kind="stable")
            keys, rows = keys[order], rows[order]
            if len(keys) > 1:
                first = np.concatenate(([True], keys[1:] != keys[:-1]))
                keys, rows = keys[first], rows[first]
        rows = rows.astype(np.int64, copy=False)
        self.path = path
        self.keys: np.ndarray = keys
        self.rows: np.ndarray = rows
        self.damaged = False
        """The file was found damaged (it is counted in `EmbeddingCache.damaged` once)."""

    def lookup(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(indexes into `q` of the keys held here, their positions in `self.keys`)."""
        n = len(self.keys)
        if n == 0 or len(q) == 0:
            empty = np.zeros(0, dtype=np.intp)
            return empty, empty
        pos = np.searchsorted(self.keys, q)
        np.minimum(pos, n - 1, out=pos)
        hit = self.keys[pos] == q
        return np.flatnonzero(hit), pos[hit]

    def forget(self, positions: np.ndarray) -> None:
        """Drop keys (positions in `self.keys`) whose records turned out bad."""
        keep = np.ones(len(self.keys), dtype=bool)
        keep[positions] = False
        self.keys, self.rows = self.keys[keep], self.rows[keep]

    def nbytes(self) -> int:
        return int(self.keys.nbytes + self.rows.nbytes)


def _index_segment(path: Path, dim: int) -> tuple[_Segment | None, bool]:
    """(index, intact) of a segment file, read READ_CHUNK bytes at a time; the index is None when
    the header is bad or of another dimension. Raises OSError when the file cannot be read."""
    with open(path, "rb", buffering=0) as fh:
        size = os.fstat(fh.fileno()).st_size
        head = _pread(fh, _HEADER.size, 0)
        if len(head) < _HEADER.size:
            return None, False
        magic, fdim, count, hcrc = _HEADER.unpack(head)
        if magic != MAGIC or hcrc != zlib.crc32(head[:-4]) or fdim == 0 or fdim != dim:
            return None, False
        dt = _record_dtype(dim)
        whole = min(count, (size - _HEADER.size) // dt.itemsize)
        intact = whole == count and size == _HEADER.size + count * dt.itemsize
        step = max(1, READ_CHUNK // dt.itemsize)
        keys, rows = [np.zeros(0, dtype=_KEY_DTYPE)], [np.zeros(0, dtype=np.int64)]
        for start in range(0, whole, step):
            n = min(step, whole - start)
            data = _pread(fh, n * dt.itemsize, _HEADER.size + start * dt.itemsize)
            recs = np.frombuffer(data, dtype=dt, count=len(data) // dt.itemsize)
            ok = _valid(recs, dim)
            if len(recs) < n or not ok.all():
                intact = False
            keys.append(recs["key"][ok])  # copies: the chunk is released
            rows.append(start + np.flatnonzero(ok))
            if len(recs) < n:
                break  # shortened while we read it
    return _Segment(path, np.concatenate(keys), np.concatenate(rows)), intact


class _Changed(Exception):
    """A record read for compaction no longer checks out (the file changed since indexing)."""

    def __init__(self, segment: _Segment, positions: np.ndarray) -> None:
        super().__init__(str(segment.path))
        self.segment, self.positions = segment, positions


class _ModelStore:
    """One model's vectors: the index of each segment file plus vectors not yet written."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder
        """None: memory only (`persist=False`)."""
        self.loaded = False
        self.dim: int | None = None
        self.segments: list[_Segment] = []
        """Indexes of the segment files in use."""
        self.pending: dict[bytes, np.ndarray] = {}
        self.memory_entries = 0
        """This model's entries in the cache's memory layer."""
        self.disk_count: int | None = 0
        """Distinct keys over all segments (None: to be counted again)."""


@dataclass(frozen=True, slots=True)
class MemoryStats:
    """Where an `EmbeddingCache`'s vectors are (for probes and benchmarks)."""

    memory_entries: int
    """Vectors in the bounded memory layer."""
    memory_bytes: int
    """What they cost, as counted against the bound (vector bytes + ENTRY_OVERHEAD each)."""
    memory_limit: int
    """The bound (`memory_bytes` given to the cache)."""
    pending: int
    """Vectors put and not yet flushed (all models)."""
    pending_bytes: int
    """Their vector bytes."""
    disk_keys: int
    """Distinct keys indexed on disk (models used so far)."""
    index_bytes: int
    """Memory the indexes of the segment files take."""
    segments: int
    """Segment files indexed."""


class VectorCache(Protocol):
    """What the embedding paths ask of a cache of vectors (`EmbeddingCache` is the app's): the
    vectors found for a batch of text keys in a namespace (`cache_namespace`), new vectors put in
    batches, and a flush once `pending_count` reaches FLUSH_EVERY or the batch ends."""

    def get_many(self, model_id: str, keys: Sequence[bytes], dim: int) -> dict[bytes, np.ndarray]:
        """The vectors of `keys` the cache holds (a missing key is absent from the dict)."""
        ...

    def put_many(self, model_id: str, keys: Sequence[bytes], vectors: np.ndarray) -> None: ...

    def pending_count(self) -> int:
        """Vectors put and not flushed yet."""
        ...

    def flush(self) -> None: ...


class EmbeddingCache:
    """Embeddings by (model id, text key), in memory and (unless `persist=False`) on disk.

    `memory_bytes` bounds the memory layer (DEFAULT_MEMORY_BYTES says why 64 MB); a vector it lets
    go is read from disk again when asked for. With `persist=False` there is no disk: flushed
    vectors live in the memory layer only, and one it lets go is embedded again.

    Thread-safe: one lock around every operation (calls are short: index lookups and file reads).
    """

    def __init__(self, folder: str | os.PathLike[str] | None = None, *, persist: bool = True,
                 memory_bytes: int = DEFAULT_MEMORY_BYTES) -> None:
        root = Path(folder) if folder is not None else default_cache_dir()
        self.folder: Path = root / "embeddings"
        """Where model folders live (`<root>/embeddings/<model>/`)."""
        self.persist = persist
        self.memory_bytes = max(0, int(memory_bytes))
        """The memory layer's bound in bytes (0: no memory layer)."""
        self.hits = 0
        """Vectors served from the cache since creation (memory or disk)."""
        self.misses = 0
        """Keys asked for and not found."""
        self.damaged = 0
        """Segment files found damaged (bad header, short, a bad record) while loading or reading."""
        self._stores: dict[str, _ModelStore] = {}
        self._memory: OrderedDict[tuple[str, bytes], np.ndarray] = OrderedDict()
        """The memory layer: least recently used first."""
        self._memory_used = 0
        self._lock = threading.RLock()

    # -- lookups ------------------------------------------------------------------------------
    def get_many(self, model_id: str, keys: Sequence[bytes], dim: int) -> dict[bytes, np.ndarray]:
        """The cached vectors among `keys` (read-only float32 rows of length `dim`; none of them
        refers to a file)."""
        with self._lock:
            store = self._store(model_id, dim)
            found: dict[bytes, np.ndarray] = {}
            asked: set[bytes] = set()
            rest: list[bytes] = []
            memory, pending = self._memory, store.pending
            for k in keys:
                if k in asked:
                    continue
                asked.add(k)
                v = memory.get((model_id, k))
                if v is not None:
                    memory.move_to_end((model_id, k))
                else:
                    v = pending.get(k)
                if v is None:
                    if len(k) == KEY_BYTES:
                        rest.append(k)
                elif v.shape[0] == dim:
                    found[k] = v
            if rest and store.segments and store.dim == dim:
                self._read_disk(model_id, store, rest, found)
            self.hits += len(found)
            self.misses += len(asked) - len(found)
            return found

    def get(self, model_id: str, key: bytes, dim: int) -> np.ndarray | None:
        return self.get_many(model_id, [key], dim).get(key)

    def __contains__(self, item: tuple[str, bytes]) -> bool:
        model_id, key = item
        with self._lock:
            store = self._stores.get(model_id)
            if store is None or not store.loaded:
                return False
            if (model_id, key) in self._memory or key in store.pending:
                return True
            return len(key) == KEY_BYTES and bool(self._on_disk(store, [key])[0])

    def count(self, model_id: str) -> int:
        """Distinct vectors held for a model (on disk, or in memory only, plus pending)."""
        with self._lock:
            store = self._stores.get(model_id)
            if store is None:
                return 0
            if store.folder is None:
                return store.memory_entries + len(store.pending)
            return self._disk_count(store) + len(store.pending)

    def memory_stats(self) -> MemoryStats:
        """Entries and bytes in the memory layer, pending vectors, keys and segments on disk."""
        with self._lock:
            stores = list(self._stores.values())
            return MemoryStats(
                memory_entries=len(self._memory), memory_bytes=self._memory_used,
                memory_limit=self.memory_bytes,
                pending=sum(len(s.pending) for s in stores),
                pending_bytes=sum(int(v.nbytes) for s in stores for v in s.pending.values()),
                disk_keys=sum(self._disk_count(s) for s in stores),
                index_bytes=sum(seg.nbytes() for s in stores for seg in s.segments),
                segments=sum(len(s.segments) for s in stores))

    # -- updates ------------------------------------------------------------------------------
    def put_many(self, model_id: str, keys: Sequence[bytes], vectors: np.ndarray) -> None:
        """Remember vectors (rows aligned with keys) in memory; `flush()` writes them. Keys already
        cached on disk (or, memory only, in the memory layer) are skipped."""
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[0] != len(keys):
            raise ValueError(f"put_many: {len(keys)} keys but vectors of shape {vectors.shape}")
        for k in keys:
            if len(k) != KEY_BYTES:
                raise ValueError(f"cache keys are {KEY_BYTES}-byte digests, got {len(k)} bytes")
        with self._lock:
            store = self._store(model_id, vectors.shape[1])
            if store.dim is None:
                store.dim = vectors.shape[1]
            if store.dim != vectors.shape[1]:
                raise ValueError(f"cache for {model_id!r} holds {store.dim}-d vectors, "
                                 f"got {vectors.shape[1]}-d")
            block = vectors.copy()
            block.setflags(write=False)
            on_disk = self._on_disk(store, keys)
            for i, k in enumerate(keys):
                if not on_disk[i] and (model_id, k) not in self._memory:
                    store.pending[k] = block[i]

    def pending_count(self) -> int:
        with self._lock:
            return sum(len(s.pending) for s in self._stores.values())

    def flush(self) -> None:
        """Write pending vectors, one new segment per model (atomic); they join the new segment's
        index and the memory layer. Errors are logged, the vectors stay pending."""
        with self._lock:
            for model_id, store in list(self._stores.items()):
                if not store.pending:
                    continue
                keys = list(store.pending)
                if store.folder is not None and store.dim is not None:
                    path = store.folder / f"seg-{uuid.uuid4().hex}{SEGMENT_SUFFIX}"
                    try:
                        atomic_write_bytes(path, encode_segment(keys, np.stack([store.pending[k] for k in keys])))
                    except OSError as e:
                        log.warning("embedding cache: cannot write %s: %s", path, e)
                        continue
                    store.segments.append(_Segment(path, np.array(keys, dtype=_KEY_DTYPE),
                                                   np.arange(len(keys))))
                    if store.disk_count is not None:
                        store.disk_count += len(keys)  # a pending key is never on disk already
                for k in keys:
                    self._remember(model_id, store, k, store.pending[k])
                store.pending.clear()
                if len(store.segments) > MAX_SEGMENTS:
                    # Merge the smaller half: as the cache grows, a record is rewritten about
                    # log(size) times, and lookups never search more than MAX_SEGMENTS + 1 indexes.
                    small = sorted(store.segments, key=lambda s: len(s.keys))[:MAX_SEGMENTS // 2 + 1]
                    self._compact(store, small + [s for s in store.segments if s.damaged and s not in small])

    def clear(self, model_id: str | None = None) -> None:
        """Forget vectors (of one model, or all) in memory and on disk."""
        with self._lock:
            if model_id is None:
                stores = list(self._stores.values())
                folders = ([p for p in self.folder.iterdir() if p.is_dir()]
                           if self.persist and self.folder.is_dir() else [])
                self._memory.clear()
                self._memory_used = 0
            else:
                stores = [self._stores[model_id]] if model_id in self._stores else []
                folders = [self.folder / _model_folder_name(model_id)] if self.persist else []
                for mk in [mk for mk in self._memory if mk[0] == model_id]:
                    self._memory_used -= self._memory.pop(mk).nbytes + ENTRY_OVERHEAD
            for s in stores:
                s.pending.clear()
                s.segments.clear()
                s.memory_entries = 0
                s.disk_count = 0
            for f in folders:
                for p in f.glob(f"*{SEGMENT_SUFFIX}"):
                    _unlink(p)  # no file is held open or mapped between calls: each can go
            if model_id is None:
                self._stores.clear()
            else:
                self._stores.pop(model_id, None)

    # -- the memory layer ---------------------------------------------------------------------
    def _remember(self, model_id: str, store: _ModelStore, key: bytes, vec: np.ndarray) -> None:
        """Keep an owned, read-only copy of `vec` (a row of a larger block would keep the whole
        block alive behind the count), evicting the least recently used beyond the bound."""
        cost = vec.nbytes + ENTRY_OVERHEAD
        if cost > self.memory_bytes:
            return
        if vec.base is not None or vec.flags.writeable:
            vec = np.array(vec, dtype=np.float32)
            vec.setflags(write=False)
        mk = (model_id, key)
        old = self._memory.pop(mk, None)
        if old is None:
            store.memory_entries += 1
        else:
            self._memory_used -= old.nbytes + ENTRY_OVERHEAD
        self._memory[mk] = vec
        self._memory_used += cost
        while self._memory_used > self.memory_bytes:
            (m, _k), v = self._memory.popitem(last=False)
            self._memory_used -= v.nbytes + ENTRY_OVERHEAD
            self._stores[m].memory_entries -= 1

    # -- the disk -----------------------------------------------------------------------------
    def _on_disk(self, store: _ModelStore, keys: Sequence[bytes]) -> np.ndarray:
        """Mask of `keys` (each KEY_BYTES long) indexed in some segment."""
        mask = np.zeros(len(keys), dtype=bool)
        if store.segments and len(keys):
            q = np.array(keys, dtype=_KEY_DTYPE)
            for seg in store.segments:
                mask[seg.lookup(q)[0]] = True
        return mask

    def _disk_count(self, store: _ModelStore) -> int:
        if store.disk_count is None:
            if len(store.segments) <= 1:
                store.disk_count = sum(len(s.keys) for s in store.segments)
            else:  # a key written by two processes is in two segments: count it once
                store.disk_count = len(np.unique(np.concatenate([s.keys for s in store.segments])))
        return store.disk_count

    def _read_disk(self, model_id: str, store: _ModelStore, wanted: list[bytes],
                   found: dict[bytes, np.ndarray]) -> None:
        """Add the vectors of `wanted` keys (each KEY_BYTES long) held in segment files to `found`
        and to the memory layer; a record that no longer checks out is a miss."""
        q = np.array(wanted, dtype=_KEY_DTYPE)
        left = np.argsort(q)  # sorted queries: searchsorted walks each index in order
        for seg in list(reversed(store.segments)):  # newest first
            if not len(left):
                break
            qi, pos = seg.lookup(q[left])
            if len(qi):
                hit = self._read_segment(model_id, store, seg, [wanted[w] for w in left[qi].tolist()],
                                         q[left[qi]], pos, found)
                keep = np.ones(len(left), dtype=bool)
                keep[qi[hit]] = False
                left = left[keep]

    def _read_segment(self, model_id: str, store: _ModelStore, seg: _Segment, keys: list[bytes],
                      qkeys: np.ndarray, pos: np.ndarray, found: dict[bytes, np.ndarray]) -> np.ndarray:
        """Read the records of `keys` (at `pos` in `seg`) in file order, READ_CHUNK bytes of them at
        a time (what a lookup holds besides its result does not grow with it), and add those that
        check out to `found`; returns that mask. Bad records leave the index, so the recomputed
        vector is put and written again; a file that cannot be read any more leaves the store."""
        assert store.dim is not None
        dt = _record_dtype(store.dim)
        step = max(1, READ_CHUNK // dt.itemsize)
        hit = np.zeros(len(pos), dtype=bool)
        order = np.argsort(seg.rows[pos], kind="stable")
        try:
            with open(seg.path, "rb", buffering=0) as fh:  # closed at once: nothing holds the file
                for at in range(0, len(order), step):
                    part = order[at:at + step]
                    recs, got = _read_records(fh, dt, seg.rows[pos[part]])
                    ok = got & (recs["key"] == qkeys[part]) & _valid(recs, store.dim)
                    vecs = recs["vec"]
                    for i in np.flatnonzero(ok).tolist():
                        k = keys[int(part[i])]
                        v = np.array(vecs[i], dtype=np.float32)  # owned: holds neither batch nor file
                        v.setflags(write=False)
                        found[k] = v
                        self._remember(model_id, store, k, v)
                    hit[part[ok]] = True
        except OSError as e:
            log.warning("embedding cache: cannot read %s (%s); its vectors will be recomputed", seg.path, e)
            self._found_damaged(seg)
            store.segments.remove(seg)
            store.disk_count = None
            return hit
        if not hit.all():
            log.warning("embedding cache: %d record(s) of %s changed since it was loaded; they will "
                        "be recomputed", int((~hit).sum()), seg.path)
            self._found_damaged(seg)
            seg.forget(pos[~hit])
            store.disk_count = None
        return hit

    def _found_damaged(self, seg: _Segment) -> None:
        if not seg.damaged:
            seg.damaged = True
            self.damaged += 1

    # -- loading ------------------------------------------------------------------------------
    def model_folder(self, model_id: str) -> Path:
        return self.folder / _model_folder_name(model_id)

    def _store(self, model_id: str, dim: int) -> _ModelStore:
        store = self._stores.get(model_id)
        if store is None:
            store = _ModelStore(self.model_folder(model_id) if self.persist else None)
            self._stores[model_id] = store
        if not store.loaded:
            store.loaded = True
            store.dim = store.dim or dim
            if store.folder is not None:
                self._load(store, dim)
        return store

    def _load(self, store: _ModelStore, dim: int) -> None:
        """Index every segment file (each read in READ_CHUNK pieces; no vector is kept)."""
        folder = store.folder
        assert folder is not None
        try:
            paths = sorted(folder.glob(f"*{SEGMENT_SUFFIX}"))
        except OSError as e:
            log.warning("embedding cache: cannot list %s: %s", folder, e)
            return
        unusable: list[Path] = []
        for p in paths:
            try:
                seg, intact = _index_segment(p, dim)
            except OSError as e:
                log.warning("embedding cache: cannot read %s: %s", p, e)
                seg, intact = None, False
            if seg is None:
                unusable.append(p)
                continue
            seg.damaged = not intact
            store.segments.append(seg)
        store.disk_count = None
        damaged = [s for s in store.segments if s.damaged]
        if unusable or damaged:
            self.damaged += len(unusable) + len(damaged)
            log.warning("embedding cache: %d damaged segment(s) in %s; their bad records will be "
                        "recomputed", len(unusable) + len(damaged), folder)
        if len(store.segments) > MAX_SEGMENTS:
            self._compact(store, list(store.segments), unusable)
        elif unusable or damaged:
            self._compact(store, damaged, unusable)  # only these: one bad record rewrites one file

    def _compact(self, store: _ModelStore, segments: list[_Segment], unusable: Sequence[Path] = ()) -> None:
        """One new segment with every valid record of `segments`, each key once, replaces them
        (and the `unusable` files). Records are streamed READ_CHUNK bytes at a time and checked
        again on the way; one that no longer checks out leaves its index and the merge starts over
        (three tries)."""
        folder, dim = store.folder, store.dim
        assert folder is not None and dim is not None
        for _attempt in range(3):
            try:
                merged = _merge(folder, dim, segments)
            except _Changed as e:
                log.warning("embedding cache: %s changed while being compacted", e.segment.path)
                self._found_damaged(e.segment)
                e.segment.forget(e.positions)
                store.disk_count = None
                continue
            except OSError as e:
                log.warning("embedding cache: cannot compact %s: %s", folder, e)
                return
            for p in [s.path for s in segments] + list(unusable):
                _unlink(p)
            gone = {id(s) for s in segments}
            store.segments = ([merged] if merged is not None else []) + [
                s for s in store.segments if id(s) not in gone]
            return


def _merge(folder: Path, dim: int, segments: list[_Segment]) -> _Segment | None:
    """Write one segment with the records of `segments` (each key once), streamed in file order
    READ_CHUNK bytes at a time, and return its index (None when there is nothing to write).
    Besides the records in flight it holds a few arrays of the keys (sorting them), never vectors.
    Raises _Changed when a record no longer checks out, OSError when a file fails."""
    keys_all = np.concatenate([s.keys for s in segments]) if segments else np.zeros(0, _KEY_DTYPE)
    if not len(keys_all):
        return None
    keys, first = np.unique(keys_all, return_index=True)  # sorted, each key once
    del keys_all
    source = np.repeat(np.arange(len(segments), dtype=np.int32), [len(s.keys) for s in segments])[first]
    starts = np.cumsum([0] + [len(s.keys) for s in segments])
    rows = np.empty(len(keys), dtype=np.int64)  # each key's row in the new file
    dt = _record_dtype(dim)
    step = max(1, READ_CHUNK // dt.itemsize)
    path = folder / f"seg-{uuid.uuid4().hex}{SEGMENT_SUFFIX}"
    done = 0
    with atomic_writer(path) as out:
        head = MAGIC + struct.pack("<II", dim, len(keys))
        out.write(head + struct.pack("<I", zlib.crc32(head)))
        for i, seg in enumerate(segments):
            mine = np.flatnonzero(source == i)  # positions in `keys` this segment supplies
            pos = first[mine] - starts[i]  # their positions in seg.keys
            order = np.argsort(seg.rows[pos], kind="stable")  # file order: sequential reads
            mine, pos = mine[order], pos[order]
            with open(seg.path, "rb", buffering=0) as fh:
                for at in range(0, len(pos), step):
                    part = pos[at:at + step]
                    recs, got = _read_records(fh, dt, seg.rows[part])
                    ok = got & (recs["key"] == seg.keys[part]) & _valid(recs, dim)
                    if not ok.all():
                        raise _Changed(seg, part[~ok])
                    out.write(recs.tobytes())
            rows[mine] = done + np.arange(len(mine))
            done += len(mine)
    return _Segment(path, keys, rows, is_sorted=True)


def _unlink(p: Path) -> None:
    try:
        p.unlink()
    except FileNotFoundError:
        pass
    except OSError as e:
        log.warning("embedding cache: cannot remove %s: %s", p, e)


_DEFAULT: EmbeddingCache | None = None
_DEFAULT_LOCK = threading.Lock()


def default_cache() -> EmbeddingCache:
    """The process-wide cache in `default_cache_dir()` (created on first use; what is still
    pending, such as question vectors, is flushed when the process exits)."""
    global _DEFAULT
    with _DEFAULT_LOCK:
        if _DEFAULT is None:
            _DEFAULT = EmbeddingCache()
            atexit.register(_flush_at_exit, _DEFAULT)
        return _DEFAULT


def _flush_at_exit(cache: EmbeddingCache) -> None:
    try:
        cache.flush()
    except Exception as e:  # noqa: BLE001  (exiting: report, never raise)
        log.warning("embedding cache: flush at exit failed: %s", e)


def set_default_cache(cache: EmbeddingCache | None) -> None:
    """Replace the process-wide cache (None: create it again from the environment on next use)."""
    global _DEFAULT
    with _DEFAULT_LOCK:
        if _DEFAULT is not None and _DEFAULT is not cache:
            _DEFAULT.flush()
        _DEFAULT = cache
