"""The index store: the embedder a retriever needs, each document's pooled piece vectors, and the
indexes built over chunks (BM25, exact or pooled vectors), remembered in locked LRUs.

What it is given (embedder, persistent cache) is replaced whole, never mutated: a job that started
keeps the embedder it began with. `predict_exact` and `exact_cached` tell, without embedding,
whether exact vectors are at hand or how long they would take (the window's staging asks them)."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import TYPE_CHECKING

from inspector.core.documents.document import Document
from inspector.core.evaluation.config import Cancel, EvalConfig, IndexFactory, Progress
from inspector.core.retrieval.kinds import Retriever
from inspector.core.runtime.lru import SizedLRU
from inspector.core.workbench.chunk_store import ChunksByDoc

if TYPE_CHECKING:  # the embedding and retrieval modules load when first used, not with this one
    from inspector.core.embedding.cache import VectorCache
    from inspector.core.embedding.embedder import Embedder
    from inspector.core.retrieval.index import Index, SearchIndex
    from inspector.core.retrieval.pooled import PooledVectors


def pooled_key(emb: Embedder | None) -> str:
    """Which piece vectors an embedder can use: its model and precision (the cache namespace),
    never its device."""
    from inspector.core.embedding.embedder import cache_namespace

    if emb is None:  # no model yet: what the fallback below made of None
        return str(id(emb))
    try:
        return cache_namespace(emb)
    except AttributeError:
        return str(getattr(emb, "model_id", id(emb)))


class IndexStore:
    """Indexes and pooled vectors, and the embedder and persistent cache they are built with.

    `embedder`: the embedding model (None: the bundled one, made when first needed, unless
    `lazy_model=False`); `cache`: the persistent embedding cache (None: vectors are not persisted);
    `index_factory`: how indexes are built (tests hand in their own); `indexes`: how many indexes
    are remembered."""

    def __init__(self, *, embedder: Embedder | None = None, cache: VectorCache | None = None,
                 index_factory: IndexFactory | None = None,
                 lazy_model: bool = True, indexes: int = 6) -> None:
        self.embedder = embedder
        self.cache = cache
        self.index_factory = index_factory
        self.lazy_model = lazy_model
        """Whether a dense request without an embedder loads the bundled model (the CLI) or is
        answered by BM25 until `embedder` is set (the window, which loads it in the background)."""
        self._indexes: SizedLRU[Index] = SizedLRU(indexes, indexes)
        self._pooled: SizedLRU[PooledVectors] = SizedLRU(8, 8)
        self._models: SizedLRU[Embedder] = SizedLRU(4, 4)
        """Embedders configurations name beside the store's own (`model_for`)."""

    # -- the embedder and pooled vectors ----------------------------------------------------------
    def embedder_for(self, retriever: Retriever) -> Embedder | None:
        """The embedder a retriever needs: none for BM25; the bundled model when none was given
        and the store may load it."""
        if retriever == "bm25":
            return None
        if self.embedder is None and self.lazy_model:
            from inspector.core.embedding.embedder import default_embedder

            self.embedder = default_embedder()
        return self.embedder

    def pooled_vectors(self, doc: Document) -> PooledVectors | None:
        """The document's pooled piece vectors if built for the current embedder, else None."""
        emb = self.embedder
        if emb is None:
            return None
        return self._pooled.lookup((pooled_key(emb), doc.sha256))

    def build_pooled(self, doc: Document, *, progress: Callable[[int, int], None] | None = None,
                     cancel: Cancel | None = None, embedder: Embedder | None = None) -> PooledVectors:
        """The document's pooled piece vectors (embedded once per document, persisted), by
        `embedder` (default: the store's own)."""
        from inspector.core.retrieval.pooled import pooled_for

        emb = embedder if embedder is not None else self.embedder_for("dense")
        key = (pooled_key(emb), doc.sha256)
        hit = self._pooled.lookup(key)
        if hit is None:
            hit = pooled_for(doc, emb, progress=progress, cancel=cancel)
            self._pooled.put(key, hit)
        return hit

    # -- indexes ------------------------------------------------------------------------------------
    def exact_cached(self, docs: Sequence[Document], chunks_by_doc: ChunksByDoc, with_prefix: bool) -> bool:
        """True when every chunk's vector is in the persistent cache (an exact index costs lookups)."""
        emb, cache = self.embedder, self.cache
        if cache is None or emb is None:
            return False
        from inspector.core.embedding.cache import text_key
        from inspector.core.embedding.embedder import cache_namespace

        keys = list({text_key(c.embedded_text(d, with_prefix=with_prefix))
                     for d in docs for c in chunks_by_doc.get(d.doc_id, ()) if c.role != "parent"})
        if not keys:
            return True
        return len(cache.get_many(cache_namespace(emb), keys, int(emb.dim))) == len(keys)

    def model_for(self, config: EvalConfig) -> Embedder | None:
        """The embedder of a configuration's vectors: none for BM25; the model it names
        (`config.embedder`, made once and kept: a comparison of models on the same chunks), else
        the store's own."""
        if config.retriever == "bm25":
            return None
        spec = config.embedder
        if spec is None:
            return self.embedder_for(config.retriever)
        own = self.embedder
        if own is not None and getattr(own, "spec", None) == spec:
            return own

        def make() -> Embedder:
            from inspector.core.embedding.spec import make_embedder

            return make_embedder(spec, device=str(getattr(own, "device_spec", "auto")),
                                 dtype=str(getattr(own, "dtype_spec", "float32")))

        return self._models.get_or_make(spec, make, 1)

    def build_index(self, config: EvalConfig, chunks_by_doc: ChunksByDoc, docs: Sequence[Document], *,
                    progress: Progress | None = None, cancel: Cancel | None = None) -> SearchIndex:
        """An index over these chunks of these documents as `config` asks (BM25, exact or pooled
        vectors, by the model it names: `model_for`); documents without chunks are left out."""
        docs = [d for d in docs if d.doc_id in chunks_by_doc]
        if self.index_factory is not None:
            return self.index_factory(docs, chunks_by_doc, config)
        from inspector.core.retrieval import index as retrieval

        emb = self.model_for(config)
        if emb is not None:
            from inspector.core.stores.source import store_source

            source = store_source(config.strategy)
            if source is not None:  # the user's vector store: its own vectors, exact whatever was asked
                return source.index(docs, chunks_by_doc, emb, cache=self.cache)
        embed_progress = None
        if progress is not None:
            def embed_progress(done: int, total: int) -> None:
                progress(done, total, f"Embedding {total:,} chunks")
        vectors = None
        if emb is not None and config.embedding == "pooled":
            from inspector.core.retrieval import pooled

            pv = {d.doc_id: self.build_pooled(d, cancel=cancel, embedder=emb) for d in docs}
            # Pooled where needed; a chunk whose exact vector is cached gets that one.
            vectors = pooled.index_vectors(chunks_by_doc, pv, with_prefix=bool(config.with_prefix),
                                           cache=self.cache)
        return retrieval.build_index(docs, chunks_by_doc, emb, with_prefix=bool(config.with_prefix),
                                     cache=self.cache, progress=embed_progress, cancel=cancel,
                                     vectors=vectors)

    def lookup(self, key: Hashable) -> Index | None:
        """A remembered index (the staging's keys: kind, corpus fingerprint, prefix, namespace)."""
        return self._indexes.lookup(key)

    def put(self, key: Hashable, index: Index) -> None:
        self._indexes.put(key, index)

    def get_or_make(self, key: Hashable, make: Callable[[], Index]) -> Index:
        return self._indexes.get_or_make(key, make, 1)

    def forget(self) -> None:
        """Drop remembered indexes (e.g. after the embedder changed)."""
        self._indexes.clear()

    def predict_exact(self, docs: Sequence[Document], chunks_by_doc: ChunksByDoc, with_prefix: bool,
                      *, uncached_only: bool = False) -> float | None:
        """Seconds the current embedder is predicted to take to embed these chunks exactly, from
        the throughput it has shown in this process (None before it has embedded anything, or
        without an embedder). By default every chunk is counted, as if none were cached: an
        upper bound that costs no hashing (the window asks this on its GUI thread);
        `uncached_only` looks the texts up in the cache first (exact, but hashes every text)."""
        from inspector.core.embedding.throughput import (
            Throughput,
            cost_units_of_lengths,
        )

        emb = self.embedder
        tp = getattr(emb, "throughput", None)
        if emb is None or not isinstance(tp, Throughput) or tp.rate is None:
            return None
        matchable = [(d, c) for d in docs for c in chunks_by_doc.get(d.doc_id, ()) if c.role != "parent"]
        if uncached_only and self.cache is not None and matchable:
            from inspector.core.embedding.cache import text_key
            from inspector.core.embedding.embedder import cache_namespace

            texts = [c.embedded_text(d, with_prefix=with_prefix) for d, c in matchable]
            keys = [text_key(t) for t in texts]
            found = self.cache.get_many(cache_namespace(emb), keys, int(emb.dim))
            lengths = [len(t) for t, k in zip(texts, keys, strict=True) if k not in found]
        else:  # lengths from the spans: no text is built
            lengths = [c.end - c.start + (len(c.prefix) + 2 if with_prefix and c.prefix else 0)
                       for _d, c in matchable]
        return tp.predict(cost_units_of_lengths(lengths, int(getattr(emb, "max_seq_length", 256))))


__all__ = ["IndexStore", "pooled_key"]
