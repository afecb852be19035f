"""Rerankers: a second model that reads the question and each retrieved chunk together and orders
the retriever's top hits by how well the chunk answers.

A production pipeline often retrieves 50 chunks cheaply (dense, BM25, hybrid) and lets a
cross-encoder pick the k the LLM receives. On the handbooks we measured, every dense miss was a
ranking miss (a chunk holding the answer ranked 4th to 14th), which is exactly what a reranker
repairs: hit@k of a pipeline with a reranker is the figure the user's pipeline will see.

- `Reranker`: the Protocol (`model_id`, `score(query, texts) -> floats`, higher = more relevant).
- `CrossEncoderReranker`: a sentence-transformers CrossEncoder from a folder or the local
  Hugging Face cache (`st-ce:NAME_OR_PATH`); torch loads inside `load()`, on first use.
- `parse_reranker_spec`: `st-ce:...` and `http:URL` (a `/rerank` endpoint, in `rerank_http`).
- `rerank_hits`: the rerank stage over `Index.search` hits, with a score cache so that moving a
  slider does not score the unchanged chunks again.

What is scored is what the LLM receives: the returned chunk (the parent, for parent_child) as the
index presents it (`Chunk.embedded_text` with the index's prefix setting, what `ask` prints). A
reranker chooses the context the model reads, so it must judge that text; scoring the matched
child would rank parents by a fragment the model never sees alone.

Why this stage is not a branch of `Index.search`: the index knows nothing of models beyond its
embedder, and a search is called on every keystroke while reranking 50 pairs costs seconds on a
CPU (5-25 s on the 2 shared cores of benchmarks/README). The caller (the workbench, the gold-set
evaluation) decides when to pay for it.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import re
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from inspector.core.documents.document import Document
from inspector.core.embedding.cache import text_key
from inspector.core.errors import InputError
from inspector.core.retrieval.index import Hit
from inspector.core.runtime.cancel import check_cancelled
from inspector.core.runtime.lru import SizedLRU

RERANK_DEPTH = 50
"""Hits the reranker reads by default: the retriever's top 50 (the issue's `--rerank-depth`)."""

SPEC_PREFIXES = ("st-ce:", "http:")


@runtime_checkable
class Reranker(Protocol):
    """Anything that scores (query, text) pairs: one float per text, higher = more relevant."""

    model_id: str
    """Names the model uniquely (scores are cached under it): a folder's path and content
    fingerprint, a hub name and its revision, or an endpoint and its model."""

    def score(self, query: str, texts: Sequence[str]) -> np.ndarray:
        """One relevance score per text, in the order given (float; only their order matters)."""
        ...


# -- the score cache -----------------------------------------------------------------------------

class ScoreCache:
    """Reranker scores in memory, by (model_id, query) and then by the text's sha256.

    A slider move rechunks, and most chunks of a document come back unchanged: their pairs are
    answered from here, and only new texts reach the model. One LRU entry per (model, query)
    holding that query's scores keeps eviction cheap (the core's `SizedLRU` sums its entries'
    sizes on every put: per-pair entries would make each put walk every pair). Bounded by queries
    and by scores held (about 100 bytes a score). Thread-safe: the LRU is locked, and a query's
    scores are replaced, not mutated, so a reader never sees a half-written table."""

    def __init__(self, max_queries: int = 512, max_scores: int = 200_000) -> None:
        self._lru: SizedLRU[dict[bytes, float]] = SizedLRU(max_queries, max_scores)

    def scores(self, reranker: Reranker, query: str, texts: Sequence[str]) -> tuple[np.ndarray, int]:
        """(a score per text, how many pairs the model was asked to score): texts seen before
        with this model and query come from memory, identical texts are scored once."""
        key = (str(reranker.model_id), query)
        known = self._lru.lookup(key) or {}
        keys = [text_key(t) for t in texts]
        todo: dict[bytes, str] = {}
        for k, t in zip(keys, texts, strict=True):
            if k not in known and k not in todo:
                todo[k] = t
        if todo:
            fresh = _checked(reranker, reranker.score(query, list(todo.values())), len(todo))
            table = dict(known)
            table.update(zip(todo, fresh.tolist(), strict=True))
            self._lru.put(key, table, len(table))
            known = table
        return np.fromiter((known[k] for k in keys), dtype=np.float64, count=len(keys)), len(todo)

    def clear(self) -> None:
        self._lru.clear()

    def __len__(self) -> int:
        """Scores held (all models and queries together)."""
        return self._lru.total_size()


def _checked(reranker: Reranker, scores: Any, n: int) -> np.ndarray:
    """The scores as float64, one per text, or a ValueError naming the model (a NaN would leave
    the order undefined)."""
    out = np.asarray(scores, dtype=np.float64).reshape(-1)
    if out.shape[0] != n:
        raise ValueError(f"reranker {reranker.model_id}: {out.shape[0]} scores for {n} texts")
    if not np.all(np.isfinite(out)):
        raise ValueError(f"reranker {reranker.model_id}: a score is not a finite number")
    return out


_DEFAULT_CACHE = ScoreCache()


def default_score_cache() -> ScoreCache:
    """The process-wide score cache (`rerank_hits` uses it unless given another)."""
    return _DEFAULT_CACHE


# -- the rerank stage ----------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class RerankResult:
    """The reranked top k of one search."""

    hits: tuple[Hit, ...]
    """Best first, ranked 1..n; `score` is the reranker's, `rank_before` the retriever's rank,
    `retriever` the retriever's name with "+rerank"."""
    depth: int
    """Hits the reranker read: the retriever's top `depth` (fewer when it returned fewer)."""
    computed: int
    """Pairs the model scored for this call (the others came from the score cache)."""
    model_id: str
    seconds: float
    """Time spent scoring (cache lookups included)."""

    @property
    def moves(self) -> tuple[tuple[int, int], ...]:
        """(rank before, rank after) of every returned hit, best first: what the window shows as
        "7 → 1"."""
        return tuple((h.rank_before if h.rank_before is not None else h.rank, h.rank) for h in self.hits)


def rerank_hits(hits: Sequence[Hit], query: str, reranker: Reranker, k: int, depth: int = RERANK_DEPTH,
                *, docs: Mapping[str, Document], with_prefix: bool = True,
                cache: ScoreCache | None = None) -> RerankResult:
    """The retriever's top `depth` hits ordered by `reranker`, cut to `k`.

    `hits` are a search's results best first (`Index.search(query, depth, ...)`); hits beyond
    `depth` are never read. Each hit is scored on what the LLM receives: its returned chunk's
    embedded text (`Chunk.embedded_text(doc, with_prefix=...)`, pass the index's `with_prefix`).
    Equal scores keep the retriever's order. The result holds min(k, depth, len(hits)) hits: a
    depth below k hands back `depth` hits, as a pipeline that reranks its top `depth` does.
    `cache` (default: the process-wide one; pass a fresh `ScoreCache()` to score everything)
    keeps scores by model, query and text."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    if depth < 1:
        raise ValueError(f"the rerank depth must be at least 1, got {depth}")
    pool = list(hits[:depth])
    t0 = time.perf_counter()
    if not pool:
        return RerankResult((), 0, 0, str(reranker.model_id), 0.0)
    texts = [h.chunk.embedded_text(docs[h.chunk.doc_id], with_prefix=with_prefix) for h in pool]
    scores, computed = (cache if cache is not None else _DEFAULT_CACHE).scores(reranker, query, texts)
    # lexsort's last key sorts first: by score descending, ties by position in the retriever's list.
    order = np.lexsort((np.arange(len(pool)), -scores))[:k]
    out = tuple(replace(pool[i], rank=n, score=float(scores[i]), retriever=f"{pool[i].retriever}+rerank",
                        rank_before=pool[i].rank)
                for n, i in enumerate(order.tolist(), 1))
    return RerankResult(out, len(pool), computed, str(reranker.model_id), time.perf_counter() - t0)


# -- sentence-transformers CrossEncoder ----------------------------------------------------------

_HUB_NAME_RE = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")
_FINGERPRINT_SAMPLE = 1 << 20


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def folder_fingerprint(folder: Path) -> str:
    """A content fingerprint of a model folder: every file's relative name, size and sha256 of
    its first and last MiB. Two folders holding the same model agree wherever they sit; a model
    saved again after training differs (its weights change throughout). Reading the ends only
    keeps a 2 GB model's fingerprint under a second, against a few seconds for a full hash, and
    the scores it keys live in memory only, for one run."""
    h = hashlib.sha256()
    files = sorted(p for p in folder.rglob("*") if p.is_file() and ".git" not in p.relative_to(folder).parts)
    for p in files:
        size = p.stat().st_size
        h.update(f"{p.relative_to(folder).as_posix()}\0{size}\0".encode())
        with open(p, "rb") as f:
            h.update(f.read(_FINGERPRINT_SAMPLE))
            if size > 2 * _FINGERPRINT_SAMPLE:
                f.seek(size - _FINGERPRINT_SAMPLE)
                h.update(f.read(_FINGERPRINT_SAMPLE))
            elif size > _FINGERPRINT_SAMPLE:
                h.update(f.read())
    return h.hexdigest()[:16]


def check_cross_encoder_folder(folder: Path, shown: str) -> None:
    """InputError unless `folder` holds a cross-encoder, told from its config files alone (no
    torch): sentence-transformers saves `model_type: CrossEncoder`; older cross-encoders are a
    `...ForSequenceClassification` model. Why check at all: sentence-transformers "converts" an
    embedding model handed to CrossEncoder by putting a random head on it, which would score
    noise without a word of warning."""
    if not (folder / "config.json").is_file():
        raise InputError(f"{shown}: no config.json in {folder}: not a Hugging Face model folder")
    st_type = _read_json(folder / "config_sentence_transformers.json").get("model_type")
    if st_type == "CrossEncoder":
        return
    if st_type:
        raise InputError(f"{shown} is a {st_type} model, not a cross-encoder (an embedding model is "
                         f"given with --embedder st:PATH)")
    archs = _read_json(folder / "config.json").get("architectures") or []
    if any(str(a).endswith("ForSequenceClassification") for a in archs):
        return
    what = f"a {archs[0]}" if archs else "a model without a classification head"
    raise InputError(f"{shown} is not a cross-encoder: it is {what} (a reranker is a "
                     f"...ForSequenceClassification model, e.g. cross-encoder/ms-marco-MiniLM-L6-v2)")


def _hub_snapshot(name: str, revision: str | None, shown: str, cache_dir: str | None = None) -> Path:
    """The cached snapshot folder of hub model `name`; never downloads (InputError when absent)."""
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(name, revision=revision, local_files_only=True, cache_dir=cache_dir))
    except Exception as exc:  # noqa: BLE001  (not cached, a bad name, no huggingface_hub: one line)
        why = type(exc).__name__
        raise InputError(f"{shown}: no such folder, and {name}{'@' + revision if revision else ''} is not in the "
                         f"Hugging Face cache on this machine ({why}); the app does not download models: "
                         f"fetch it once (`hf download {name}`) or give the model's folder") from None


class CrossEncoderReranker:
    """A sentence-transformers CrossEncoder (`st-ce:NAME_OR_PATH`), offline, on a device.

    `name_or_path`: a folder, or a hub name ("cross-encoder/ms-marco-MiniLM-L6-v2", optionally
    "@revision") found in the local Hugging Face cache. The place and kind are checked when the
    reranker is made (InputError: no such folder, not cached, not a cross-encoder); torch and
    sentence-transformers load on first `score` (or `load()`). `device`: "auto" (CUDA, then MPS,
    then the CPU), "cpu", "cuda", "cuda:N" or "mps", resolved as the embedder resolves it;
    `batch_size`: None picks the embedder's default for the device (8 on the CPU, 256 on CUDA).
    `cache_dir`: the Hugging Face cache to look in (default: the usual one, HF_HUB_CACHE).

    Scores are the model's raw relevance logits: the model's own activation (a sigmoid for
    one-label models) is left out, because in float32 it rounds logits beyond ~17 to 1.0 and two
    clearly different chunks would tie. The order is the same wherever nothing saturates.
    """

    backend = "torch"

    def __init__(self, name_or_path: str | os.PathLike[str], *, device: str = "auto",
                 batch_size: int | None = None, max_length: int | None = None,
                 trust_remote_code: bool = False, cache_dir: str | os.PathLike[str] | None = None) -> None:
        from inspector.core.embedding.device import parse_device

        text = os.fspath(name_or_path).strip()
        if not text:
            raise InputError("st-ce: needs a model folder or a Hugging Face model name")
        self.spec = f"st-ce:{text}"
        self.device_spec = parse_device(device)
        self._batch_size = batch_size
        self.max_length = max_length
        """Word pieces of query + text the model reads (None: the model's own limit, after load)."""
        self.trust_remote_code = trust_remote_code
        path = Path(text).expanduser()
        if path.is_dir():
            self.path = path.resolve()
            self.revision: str | None = None
            check_cross_encoder_folder(self.path, self.spec)
            self.model_id = f"st-ce:{self.path}#{folder_fingerprint(self.path)}"
        elif path.exists():
            raise InputError(f"{self.spec}: {path} is a file; give the model's folder")
        elif text.startswith(("/", ".", "~")) or "\\" in text or text.count("/") > 1:
            raise InputError(f"{self.spec}: no such folder: {path}")
        else:
            name, _, rev = text.partition("@")
            if not _HUB_NAME_RE.match(name):
                raise InputError(f"{self.spec}: neither a folder nor a Hugging Face model name")
            self.path = _hub_snapshot(name, rev or None, self.spec, None if cache_dir is None else os.fspath(cache_dir))
            self.revision = self.path.name  # snapshots/<commit>
            check_cross_encoder_folder(self.path, self.spec)
            self.model_id = f"st-ce:{name}@{self.revision}"
        self._device: str | None = None
        self._model: Any = None
        self._lock = threading.Lock()
        self._score_lock = threading.Lock()

    # -- where it runs ---------------------------------------------------------------------------
    @property
    def device(self) -> str:
        """"cpu", "cuda:N" or "mps" (resolving "auto" on first use; DeviceError if absent)."""
        if self._device is None:
            from inspector.core.embedding.device import resolve_device

            self._device = resolve_device(self.device_spec)
        return self._device

    @property
    def batch_size(self) -> int:
        if self._batch_size:
            return int(self._batch_size)
        from inspector.core.embedding.device import default_batch_size

        return default_batch_size(self.device)

    @batch_size.setter
    def batch_size(self, value: int | None) -> None:
        self._batch_size = value

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def describe(self) -> str:
        """"reranker ms-marco-MiniLM-L6-v2 on cpu" (one line for the status bar)."""
        name = self.spec.split(":", 1)[1].rstrip("/").rsplit("/", 1)[-1]
        return f"reranker {name} on {self.device}"

    def info(self) -> dict[str, Any]:
        """What a report says about the reranker (JSON-able)."""
        return {"spec": self.spec, "model_id": self.model_id, "max_tokens": self.max_length,
                "backend": self.backend, "device": self._device or self.device_spec}

    # -- loading ---------------------------------------------------------------------------------
    def load(self) -> Any:
        """The loaded CrossEncoder (once, under a lock); never downloads. InputError when the
        model does not give one score per pair (a classifier with several labels, e.g. NLI)."""
        with self._lock:
            if self._model is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                from inspector.core.embedding.device import device_kind

                if device_kind(self.device) == "cpu":
                    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
                try:  # the "Loading weights" bar is noise in a desktop app's terminal
                    from transformers.utils import logging as hf_logging

                    hf_logging.disable_progress_bar()
                except ImportError:
                    pass
                from sentence_transformers import CrossEncoder

                model = CrossEncoder(str(self.path), device=self.device, local_files_only=True,
                                     max_length=self.max_length, trust_remote_code=self.trust_remote_code)
                labels = int(getattr(model, "num_labels", 1) or 1)
                if labels != 1:
                    raise InputError(f"{self.spec} gives {labels} scores per pair (a classifier); a reranker "
                                     "gives one relevance score")
                import torch

                # Raw logits (see the class docstring). Set on the model, not passed to predict:
                # the argument's name changed between sentence-transformers 3 and 4.
                if hasattr(model, "activation_fn"):
                    model.activation_fn = torch.nn.Identity()
                else:
                    model.default_activation_function = torch.nn.Identity()
                if self.max_length is None:  # sentence-transformers 6 renamed max_length
                    limit = getattr(model, "max_seq_length", None) or getattr(model, "max_length", None)
                    self.max_length = int(limit) if limit else None
                self._model = model
            return self._model

    # -- scoring ---------------------------------------------------------------------------------
    def score(self, query: str, texts: Sequence[str]) -> np.ndarray:
        """Raw relevance logits, one per text (float64). Batches of `batch_size`; a worker's
        cancel scope is checked between them."""
        texts = list(texts)
        if not texts:
            return np.zeros(0, dtype=np.float64)
        model = self.load()
        bs = self.batch_size
        out = np.empty(len(texts), dtype=np.float64)
        with self._score_lock:
            for b in range(0, len(texts), bs):
                check_cancelled()
                pairs = [(query, t) for t in texts[b:b + bs]]
                out[b:b + len(pairs)] = np.asarray(
                    model.predict(pairs, batch_size=bs, show_progress_bar=False, convert_to_numpy=True),
                    dtype=np.float64).reshape(-1)
        return out

    def __repr__(self) -> str:
        return f"CrossEncoderReranker({self.spec!r}, device={self.device_spec!r})"


# -- specs ---------------------------------------------------------------------------------------

def parse_reranker_spec(text: str, **options: Any) -> Reranker:
    """A reranker from its spec: `st-ce:NAME_OR_PATH` (a sentence-transformers CrossEncoder;
    `options`: device, batch_size, max_length, trust_remote_code, cache_dir) or `http:URL` (a `/rerank`
    endpoint as TEI, vLLM and infinity serve it: `rerank_http.HttpReranker(url, **options)`; a
    bare "http://..." or "https://..." URL is taken as well). InputError with one line for
    anything else."""
    spec = (text or "").strip()
    kind, sep, rest = spec.partition(":")
    kind = kind.lower()
    if kind in ("http", "https") and rest.startswith("//"):
        kind, rest = "http", spec  # a bare URL: "http://127.0.0.1:8080/rerank"
    if not sep or f"{kind}:" not in SPEC_PREFIXES:
        raise InputError(f"unknown reranker {spec!r} (use st-ce:NAME_OR_PATH or http:URL)")
    if kind == "st-ce":
        return CrossEncoderReranker(rest, **options)
    if not rest.strip():
        raise InputError("http: needs the reranker's URL, e.g. http:http://127.0.0.1:8080/rerank")
    try:
        module = importlib.import_module("inspector.core.retrieval.rerank_http")
    except ModuleNotFoundError as exc:
        if exc.name != "inspector.core.retrieval.rerank_http":
            raise
        raise InputError("http: rerankers are not available in this build") from None
    reranker: Reranker = module.HttpReranker(rest.strip(), **options)
    return reranker


__all__ = ["RERANK_DEPTH", "Reranker", "ScoreCache", "RerankResult", "CrossEncoderReranker",
           "check_cross_encoder_folder", "default_score_cache", "folder_fingerprint",
           "parse_reranker_spec", "rerank_hits"]
