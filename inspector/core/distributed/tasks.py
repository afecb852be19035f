"""What runs on the Ray workers: the core's own functions, wrapped to travel.

Nothing here imports Ray: these are plain functions and classes that `engine.py` hands to
`ray.remote` and `Dataset.map_batches`. Each stage calls what the local engine calls —
`Workbench.chunks_for`, `Embedder.encode`, `build_piece_table`, `Workbench.build_index`,
`Workbench.evaluate`, `score_group` — so the two engines cannot drift apart.
"""

from __future__ import annotations

import logging
import pickle
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from inspector.core.chunking.chunk import Chunk
from inspector.core.chunking.params import Strategy
from inspector.core.documents.document import Document
from inspector.core.embedding.cache import text_key
from inspector.core.evaluation.config import EvalConfig
from inspector.core.evaluation.gold import GoldQuestion
from inspector.core.runtime.lru import SizedLRU
from inspector.core.workbench import Workbench
from inspector.core.workbench.evaluator import score_group
from inspector.core.workbench.index_store import IndexStore

log = logging.getLogger(__name__)


# -- the embedder, as something that travels ------------------------------------------------------

#: Embedders made in this worker process from travelling specs (`EmbedderSpec.worker_copy`), the
#: most recently used last; at most this many are kept (a sweep over models uses a few).
WORKER_EMBEDDERS_KEPT = 3
_WORKER_EMBEDDERS: SizedLRU[Any] = SizedLRU(WORKER_EMBEDDERS_KEPT, WORKER_EMBEDDERS_KEPT)


@dataclass(frozen=True)
class EmbedderSpec:
    """How to make the driver's embedder again on a worker. The bundled model holds locks and a
    loaded network, so it travels as its settings; any other embedder (the hash test embedder)
    travels pickled as it is."""

    model_id: str
    dim: int
    max_seq_length: int
    dtype: str
    """The precision vectors are computed in (part of the cache namespace)."""
    minilm: bool
    device: str = "auto"
    dtype_spec: str = "float32"
    batch_size: int | None = None
    backend: str | None = None
    obj: Any = None
    """The embedder itself when it is not the bundled model."""

    @classmethod
    def of(cls, embedder: Any) -> EmbedderSpec:
        from inspector.core.embedding.embedder import MiniLMEmbedder

        common = dict(model_id=embedder.model_id, dim=int(embedder.dim),
                      max_seq_length=int(embedder.max_seq_length),
                      dtype=str(getattr(embedder, "dtype", "float32") or "float32"))
        # The bundled model only: another folder or a sentence-transformers model (a subclass)
        # is not MiniLM on the workers; it travels pickled, as itself.
        if type(embedder) is MiniLMEmbedder and embedder.bundled:
            return cls(**common, minilm=True, device=embedder.device_spec, dtype_spec=embedder.dtype_spec,
                       batch_size=embedder._batch_size, backend=embedder.backend_spec)
        try:
            pickle.dumps(embedder)
        except Exception as exc:  # noqa: BLE001
            raise ValueError(f"the embedder {embedder.model_id!r} cannot be sent to Ray workers "
                             f"({type(exc).__name__}); use --engine local") from None
        return cls(**common, minilm=False, obj=embedder)

    def make(self) -> Any:
        """The real embedder (the model loads on first use), for the embedding actors."""
        if not self.minilm:
            return self.obj
        from inspector.core.embedding.embedder import MiniLMEmbedder

        return MiniLMEmbedder(device=self.device, dtype=self.dtype_spec, batch_size=self.batch_size,
                              backend=self.backend)

    def worker_copy(self) -> Any:
        """The embedder this process made from an equal spec before, else `make()`'s, kept. A
        task's spec arrives unpickled, a new object each time: a model other than the bundled one
        (st:, static:, openai:) then loaded once per document chunked by the semantic strategy;
        now once per worker process."""
        key = (self.model_id, self.dim, self.max_seq_length, self.dtype, self.device, self.dtype_spec,
               self.batch_size, self.backend, self.minilm, type(self.obj).__qualname__)
        return _WORKER_EMBEDDERS.get_or_make(key, self.make, 1)


    def shipped(self) -> Any:
        """For evaluation tasks: an embedder with the driver's cache namespace whose vectors come
        from the shared table; it loads the real model only if asked for a text the table lacks."""
        return _ShippedMiniLM(self) if self.minilm else self.obj


class _ShippedMiniLM:
    """The bundled model as the evaluation tasks see it: the namespace of the driver's embedder
    (model, length limit, precision: the device does not matter), no model until one is needed.
    Every text an evaluation embeds is in the shared table, so `encode` is not expected to run;
    if it does, the real model is made here (and said so in the log)."""

    def __init__(self, spec: EmbedderSpec) -> None:
        self.spec = spec
        self.model_id = spec.model_id
        self.dim = spec.dim
        self.max_seq_length = spec.max_seq_length
        self.dtype = spec.dtype
        self.device = "cpu"
        self.backend: str | None = None
        self.batch_size = spec.batch_size or 32
        self._real: Any = None

    def _model(self) -> Any:
        if self._real is None:
            log.warning("an evaluation task loads the embedding model: a text was missing from the "
                        "vectors the driver shared")
            self._real = self.spec.make()
        return self._real

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return self._model().encode(texts)

    def encode_pooled(self, texts: Sequence[str], batch_size: int | None = None, *, specials: bool = False) -> Any:
        return self._model().encode_pooled(texts, batch_size, specials=specials)

    def token_states(self, input_ids: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
        return self._model().token_states(input_ids, attention_mask)


# -- stage 1: documents -> chunks ---------------------------------------------------------------------

def register_strategies(strategies: Sequence[Strategy]) -> None:
    """Strategies the driver registered at run time (plug-ins, strategy files), registered here too."""
    from inspector.core.chunking.registry import register_strategy
    from inspector.core.chunking.registry import strategies as known

    have = known()
    for s in strategies:
        if have.get(s.name) is not s:
            register_strategy(s)


def chunk_document(doc: Document, splits: Sequence[EvalConfig], wants: Sequence[tuple[int, bool]],
                   strategies: Sequence[Strategy], spec: EmbedderSpec | None) -> tuple:
    """One document chunked every way the run needs (its cold tokenization paid once, here).

    Returns one tuple of chunks per split (`Workbench.chunks_for`), then a dict for the driver:
    for each wanted (split, with_prefix), the embedded texts of the matchable chunks in index
    order, their cache keys and the distinct context prefixes."""
    register_strategies(strategies)
    if spec is not None and any(s.needs_embedder for s in strategies_of(splits)):
        from inspector.core.chunking.semantic import set_semantic_embedder

        if spec.minilm:
            from inspector.core.embedding.embedder import configure_default_embedder

            set_semantic_embedder(configure_default_embedder(device=spec.device, dtype=spec.dtype_spec,
                                                             batch_size=spec.batch_size))
        else:  # the driver's model (st:, static:, openai:, hash): its sentence vectors, as in the driver
            set_semantic_embedder(spec.worker_copy())
    wb = Workbench([doc], lazy_model=False)
    out = [wb.chunks_for(cfg, [doc]).get(doc.doc_id, ()) for cfg in splits]
    info: dict[tuple[int, bool], tuple[list[str], list[bytes], list[str]]] = {}
    for split, with_prefix in wants:
        matchable = [c for c in out[split] if c.role != "parent"]
        texts = [c.embedded_text(doc, with_prefix=with_prefix) for c in matchable]
        prefixes = sorted({c.prefix for c in matchable if c.prefix}) if with_prefix else []
        info[(split, with_prefix)] = (texts, [text_key(t) for t in texts], prefixes)
    return (*out, info)


def strategies_of(configs: Sequence[EvalConfig]) -> list[Strategy]:
    from inspector.core.chunking.registry import get_strategy

    return [get_strategy(c.strategy) for c in configs]


# -- stage 2: texts -> vectors, on an actor pool ------------------------------------------------------

class EmbedBatches:
    """A Ray Data actor: the model made and loaded once per worker; each input row is one model
    batch (texts and their cache keys, formed by the driver exactly as `embed_texts` forms them),
    embedded with the embedder's own `encode`."""

    def __init__(self, spec: EmbedderSpec) -> None:
        self.embedder = spec.make()
        load = getattr(self.embedder, "load", None)
        if load is not None:
            load()

    def __call__(self, batch: Mapping[str, Any]) -> dict[str, Any]:
        keys: list[bytes] = []
        vecs: list[np.ndarray] = []
        for texts, ks in zip(batch["texts"], batch["keys"], strict=True):
            texts = [str(t) for t in texts]
            v = np.asarray(self.embedder.encode(texts), dtype=np.float32)
            if v.shape != (len(texts), int(self.embedder.dim)):
                raise ValueError(f"{self.embedder.model_id}: encode returned shape {v.shape}")
            keys.extend(bytes(k) for k in ks)
            vecs.append(v)
        dim = int(self.embedder.dim)
        return {"key": np.array(keys, dtype=object),
                "vector": np.concatenate(vecs) if vecs else np.zeros((0, dim), np.float32),
                "device": np.array([str(getattr(self.embedder, "device", "cpu"))] * len(keys), dtype=object),
                "backend": np.array([str(getattr(self.embedder, "backend", None) or "numpy")] * len(keys),
                                    dtype=object)}


class BuildPieces:
    """A Ray Data actor for pooled embedding: per document (one row), its piece table when the
    driver's cache lacks it (`build_piece_table`, no cache folder: the driver writes it) and its
    context prefixes as pieces (`encode_prefix_pieces`). The model loads once per worker."""

    def __init__(self, spec: EmbedderSpec) -> None:
        from inspector.core.retrieval.pooled import piece_encoder_for

        self.embedder = spec.make()
        self.encoder = piece_encoder_for(self.embedder)

    def __call__(self, batch: Mapping[str, Any]) -> dict[str, Any]:
        from inspector.core.retrieval.pooled import build_piece_table, encode_prefix_pieces

        out = []
        for raw, build, prefixes in zip(batch["doc"], batch["build"], batch["prefixes"], strict=True):
            doc = pickle.loads(raw)
            table = build_piece_table(doc, self.encoder, cache_dir=None) if build else None
            pieces = encode_prefix_pieces(self.encoder, [str(p) for p in prefixes])
            out.append(pickle.dumps((doc.doc_id, table, pieces), protocol=pickle.HIGHEST_PROTOCOL))
        return {"result": np.array(out, dtype=object)}


# -- stage 3: one evaluation task per configuration ----------------------------------------------------

class SharedVectors:
    """The vectors the driver shared through the object store, as the embedding cache the core
    asks (`get_many`, `put_many`, `flush`): one namespace, read-only rows, nothing written to disk
    (a vector computed here would stay in this task)."""

    def __init__(self, namespace: str, keys: np.ndarray, matrix: np.ndarray) -> None:
        self.namespace = namespace
        self.matrix = matrix
        self.rows: dict[bytes, int] = {bytes(k): i for i, k in enumerate(keys)}
        self.extra: dict[bytes, np.ndarray] = {}

    def get_many(self, model_id: str, keys: Sequence[bytes], dim: int) -> dict[bytes, np.ndarray]:
        if model_id != self.namespace or self.matrix.shape[1] != dim:
            return {}
        found: dict[bytes, np.ndarray] = {}
        for k in keys:
            i = self.rows.get(k)
            if i is not None:
                found[k] = self.matrix[i]
            elif k in self.extra:
                found[k] = self.extra[k]
        return found

    def put_many(self, model_id: str, keys: Sequence[bytes], vectors: np.ndarray) -> None:
        if model_id == self.namespace:
            self.extra.update(zip(keys, np.asarray(vectors, dtype=np.float32), strict=True))

    def pending_count(self) -> int:
        return 0

    def flush(self) -> None:
        pass


class _SharedPiecesIndexes(IndexStore):
    """An index store whose pooled vectors come from the piece tables the driver shared."""

    def __init__(self, *, pieces: Mapping[str, tuple[Any, dict]] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._shared_pieces = pieces or {}
        self._built: dict[str, Any] = {}

    def build_pooled(self, doc: Document, *, progress: Any = None, cancel: Any = None, embedder: Any = None) -> Any:
        if embedder is not None and embedder is not self.embedder_for("dense"):  # another model's pieces
            return super().build_pooled(doc, progress=progress, cancel=cancel, embedder=embedder)
        hit = self._built.get(doc.doc_id)
        if hit is not None:
            return hit
        shared = self._shared_pieces.get(doc.doc_id)
        if shared is None or shared[0] is None:
            return super().build_pooled(doc, progress=progress, cancel=cancel)
        from inspector.core.retrieval.pooled import PooledVectors, piece_encoder_for

        table, prefixes = shared
        pv = PooledVectors(table, piece_encoder_for(self.embedder_for("dense")), doc=doc)
        pv.add_prefix_pieces(prefixes)
        self._built[doc.doc_id] = pv
        return pv


@dataclass(frozen=True)
class GroupJob:
    """One evaluation task: configurations sharing chunks and index (they differ in k only)."""

    members: tuple[EvalConfig, ...]
    budget: int | None
    against: EvalConfig | None
    spec: EmbedderSpec | None
    namespace: str | None
    sweep: bool
    """True: sweep rows (`score_group`); False: one configuration's Report (`Workbench.evaluate`)."""


def evaluate_group(job: GroupJob, questions: tuple[GoldQuestion, ...], vectors: tuple[np.ndarray, np.ndarray] | None,
                   pieces: Mapping[str, tuple[Any, dict]] | None, n_docs: int, *docs_and_chunks: Any) -> Any:
    """Index and score one group on the workers, with the local engine's own functions."""
    docs: list[Document] = list(docs_and_chunks[:n_docs])
    chunk_lists: Sequence[tuple[Chunk, ...]] = docs_and_chunks[n_docs:]
    chunks = {d.doc_id: tuple(cs) for d, cs in zip(docs, chunk_lists, strict=True)}
    first = job.members[0]
    dense = first.retriever != "bm25"
    embedder = job.spec.shipped() if dense and job.spec is not None else None
    cache = None
    if dense and vectors is not None and job.namespace is not None:
        cache = SharedVectors(job.namespace, vectors[0], vectors[1])
    indexes = _SharedPiecesIndexes(embedder=embedder, cache=cache, lazy_model=False, pieces=pieces)
    wb = Workbench(docs, questions, index_store=indexes)
    if not job.sweep:
        return wb.evaluate(first, chunks_by_doc=chunks, docs=docs, budget=job.budget)
    index = wb.build_index(first, chunks, docs)
    return score_group(job.members, index, chunks, docs, wb.questions(docs), budget=job.budget,
                       against=job.against)


__all__ = ["EmbedderSpec", "chunk_document", "EmbedBatches", "BuildPieces", "SharedVectors", "GroupJob",
           "evaluate_group", "register_strategies"]
