"""A persistent embedding cache keyed by (model, sha256 of the exact embedded text).

Why this layout: moving a slider re-chunks the document, and most of the new chunks have texts
that were embedded a moment ago (changing the overlap of a window strategy keeps many windows;
a re-opened document keeps all of them). So the cache answers "which of these N texts do I
already have?" in one dictionary pass, and it must load fast and never trust a damaged file.

On disk, each model has its own folder below `<root>/embeddings/`. A folder holds *segment*
files, each written once, atomically (temporary file + fsync + rename), never appended to:

    header  : magic b"CIEMB001", uint32 dim, uint32 count, uint32 crc32(magic + dim + count)
    records : count x (32-byte sha256 key, dim x float32 little-endian, uint32 crc32(key + vector))

A reader keeps only records whose checksum matches and whose values are finite, so a truncated
file keeps its complete records, a garbled record is dropped (its text is embedded again), and a
file with a broken header is ignored. Damaged or too many segments are compacted into one on the
next load. Nothing here raises on a bad or unwritable cache: it degrades to memory only.

A memory layer (one dict per model) sits in front; new vectors are kept there and written as one
segment by `flush()` (embed_texts flushes when it finishes, and whenever many vectors are pending).
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
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from inspector.core.atomic import atomic_write_bytes

log = logging.getLogger(__name__)

MAGIC = b"CIEMB001"
_HEADER = struct.Struct("<8sIII")
KEY_BYTES = 32
SEGMENT_SUFFIX = ".emb"
#: More segments than this in one model folder are merged into one when the folder is loaded.
MAX_SEGMENTS = 16
#: `embed_texts` flushes when this many new vectors are pending in memory.
FLUSH_EVERY = 4096
ENV_VAR = "CHUNK_INSPECTOR_CACHE_DIR"


def text_key(text: str) -> bytes:
    """The cache key of an embedded text: sha256 of its UTF-8 bytes (32 bytes)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


def default_cache_dir() -> Path:
    """`$CHUNK_INSPECTOR_CACHE_DIR`, else the platform's user cache folder for the app."""
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env)
    import platformdirs

    return Path(platformdirs.user_cache_dir("chunk-inspector"))


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
    raw = np.frombuffer(body[:whole * dt.itemsize], dtype=np.uint8).reshape(whole, dt.itemsize)
    body_len = KEY_BYTES + 4 * fdim
    ok = np.fromiter((zlib.crc32(raw[i, :body_len].data) for i in range(whole)), dtype=np.uint32,
                     count=whole) == recs["crc"]
    vecs = recs["vec"]
    ok &= np.isfinite(vecs).all(axis=1)
    if not ok.all():
        intact = False
    keep = np.flatnonzero(ok)
    keys = [bytes(recs["key"][i]).ljust(KEY_BYTES, b"\0") for i in keep]
    out = np.array(vecs[keep], dtype=np.float32)  # a copy: the file buffer is released
    out.setflags(write=False)
    return keys, out, intact


class _ModelStore:
    """Vectors of one model: loaded segments plus vectors not yet written."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder
        self.loaded = False
        self.dim: int | None = None
        self.vectors: dict[bytes, np.ndarray] = {}
        self.pending: dict[bytes, np.ndarray] = {}
        self.segments: list[Path] = []
        """Segment files whose valid records are in `vectors` (replaced on compaction)."""


class EmbeddingCache:
    """Embeddings by (model id, text key), in memory and (unless `persist=False`) on disk.

    Thread-safe: one lock around every operation (calls are short: dictionary work and file I/O).
    """

    def __init__(self, folder: str | os.PathLike[str] | None = None, *, persist: bool = True) -> None:
        root = Path(folder) if folder is not None else default_cache_dir()
        self.folder: Path = root / "embeddings"
        """Where model folders live (`<root>/embeddings/<model>/`)."""
        self.persist = persist
        self.hits = 0
        """Vectors served from the cache since creation (memory or disk)."""
        self.misses = 0
        """Keys asked for and not found."""
        self.damaged = 0
        """Segment files found damaged (bad header, short, a bad record) while loading."""
        self._stores: dict[str, _ModelStore] = {}
        self._lock = threading.RLock()

    # -- lookups ------------------------------------------------------------------------------
    def get_many(self, model_id: str, keys: Sequence[bytes], dim: int) -> dict[bytes, np.ndarray]:
        """The cached vectors among `keys` (read-only float32 rows of length `dim`)."""
        with self._lock:
            store = self._store(model_id, dim)
            vecs, pend = store.vectors, store.pending
            found: dict[bytes, np.ndarray] = {}
            for k in keys:
                v = vecs.get(k)
                if v is None:
                    v = pend.get(k)
                if v is not None and v.shape[0] == dim:
                    found[k] = v
            self.hits += len(found)
            self.misses += len(set(keys)) - len(found)
            return found

    def get(self, model_id: str, key: bytes, dim: int) -> np.ndarray | None:
        return self.get_many(model_id, [key], dim).get(key)

    def __contains__(self, item: tuple[str, bytes]) -> bool:
        model_id, key = item
        with self._lock:
            store = self._stores.get(model_id)
            if store is None or not store.loaded:
                return False
            return key in store.vectors or key in store.pending

    def count(self, model_id: str) -> int:
        """Vectors held for a model (loaded from disk plus pending)."""
        with self._lock:
            store = self._stores.get(model_id)
            if store is None:
                return 0
            return len(store.vectors) + sum(1 for k in store.pending if k not in store.vectors)

    # -- updates ------------------------------------------------------------------------------
    def put_many(self, model_id: str, keys: Sequence[bytes], vectors: np.ndarray) -> None:
        """Remember vectors (rows aligned with keys) in memory; `flush()` writes them."""
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[0] != len(keys):
            raise ValueError(f"put_many: {len(keys)} keys but vectors of shape {vectors.shape}")
        with self._lock:
            store = self._store(model_id, vectors.shape[1])
            if store.dim is None:
                store.dim = vectors.shape[1]
            if store.dim != vectors.shape[1]:
                raise ValueError(f"cache for {model_id!r} holds {store.dim}-d vectors, "
                                 f"got {vectors.shape[1]}-d")
            block = vectors.copy()
            block.setflags(write=False)
            for i, k in enumerate(keys):
                if len(k) != KEY_BYTES:
                    raise ValueError(f"cache keys are {KEY_BYTES}-byte digests, got {len(k)} bytes")
                if k not in store.vectors:
                    store.pending[k] = block[i]

    def pending_count(self) -> int:
        with self._lock:
            return sum(len(s.pending) for s in self._stores.values())

    def flush(self) -> None:
        """Write pending vectors, one new segment per model (atomic). Errors are logged, the
        vectors stay in memory."""
        with self._lock:
            for store in self._stores.values():
                if not store.pending:
                    continue
                if not self.persist or store.folder is None or store.dim is None:
                    store.vectors.update(store.pending)
                    store.pending.clear()
                    continue
                keys = list(store.pending)
                mat = np.stack([store.pending[k] for k in keys]) if keys else np.zeros((0, store.dim))
                path = store.folder / f"seg-{uuid.uuid4().hex}{SEGMENT_SUFFIX}"
                try:
                    atomic_write_bytes(path, encode_segment(keys, mat))
                except OSError as e:
                    log.warning("embedding cache: cannot write %s: %s", path, e)
                    continue
                store.segments.append(path)
                store.vectors.update(store.pending)
                store.pending.clear()

    def clear(self, model_id: str | None = None) -> None:
        """Forget vectors (of one model, or all) in memory and on disk."""
        with self._lock:
            if model_id is None:
                stores = list(self._stores.values())
                folders = ([p for p in self.folder.iterdir() if p.is_dir()]
                           if self.persist and self.folder.is_dir() else [])
            else:
                stores = [self._stores[model_id]] if model_id in self._stores else []
                folders = [self.folder / _model_folder_name(model_id)] if self.persist else []
            for s in stores:
                s.vectors.clear()
                s.pending.clear()
                s.segments.clear()
            for f in folders:
                for p in f.glob(f"*{SEGMENT_SUFFIX}"):
                    _unlink(p)
            if model_id is None:
                self._stores.clear()
            else:
                self._stores.pop(model_id, None)

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
        folder = store.folder
        assert folder is not None
        try:
            paths = sorted(folder.glob(f"*{SEGMENT_SUFFIX}"))
        except OSError as e:
            log.warning("embedding cache: cannot list %s: %s", folder, e)
            return
        damaged = []
        for p in paths:
            try:
                data = p.read_bytes()
            except OSError as e:
                log.warning("embedding cache: cannot read %s: %s", p, e)
                damaged.append(p)
                continue
            keys, vecs, intact = decode_segment(data, dim)
            for i, k in enumerate(keys):
                store.vectors[k] = vecs[i]
            if intact:
                store.segments.append(p)
            else:
                damaged.append(p)
        if damaged:
            self.damaged += len(damaged)
            log.warning("embedding cache: %d damaged segment(s) in %s; their bad records will be "
                        "recomputed", len(damaged), folder)
        if damaged or len(store.segments) > MAX_SEGMENTS:
            self._compact(store, dim, store.segments + damaged)

    def _compact(self, store: _ModelStore, dim: int, old: Iterable[Path]) -> None:
        """One segment with every valid vector replaces the files it was read from."""
        assert store.folder is not None
        keys = list(store.vectors)
        path = store.folder / f"seg-{uuid.uuid4().hex}{SEGMENT_SUFFIX}"
        if keys:
            try:
                atomic_write_bytes(path, encode_segment(keys, np.stack([store.vectors[k] for k in keys])))
            except OSError as e:
                log.warning("embedding cache: cannot compact %s: %s", store.folder, e)
                return
        for p in old:
            _unlink(p)
        store.segments = [path] if keys else []


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
