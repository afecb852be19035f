"""The window's preview → exact staging: one question and the gold set, answered first with the best
index that can be made at once, then, when asked, with the model's exact vectors.

A policy object the window's retrieval controller owns (`inspector.qt.controllers.retrieval`):
it decides which index answers each stage (exact if its vectors are cached, else pooled piece
vectors, else BM25 while the model loads or the pieces are prepared), says so to people (`note`,
"Embedding 1,234 chunks: 12 s left"), and remembers the reports of the indexes it scored. The
chunk and index stores it works with are the workbench's; everything here is plain data and runs
on the controller's worker threads.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from inspector.core.chunking.chunk import Chunk
from inspector.core.documents.document import Document
from inspector.core.evaluation.config import EmbedView, EvalConfig
from inspector.core.evaluation.gold import GoldQuestion
from inspector.core.evaluation.metrics import IndexSearch, Report, evaluate
from inspector.core.evaluation.report import INTERVAL_SEED
from inspector.core.evaluation.uncertainty import report_intervals
from inspector.core.retrieval.kinds import EXACT, FALLBACK, POOLED, Mode, Retriever
from inspector.core.runtime.lru import SizedLRU
from inspector.core.workbench.chunk_store import ChunksByDoc, ChunkStore, corpus_fingerprint
from inspector.core.workbench.index_store import IndexStore

if TYPE_CHECKING:
    import numpy as np

    from inspector.core.embedding.embedder import Embedder
    from inspector.core.retrieval.index import Index

#: Exact figures predicted to take less than this are computed at once, even while dragging
#: (`Staging.fast_exact_note`).
FAST_EXACT_S = 0.2


@dataclass(frozen=True, slots=True, eq=False)
class RetrievalRequest:
    """Everything one question + gold-set evaluation in the window depends on (plain data)."""

    document: Document
    """The shown document."""
    chunks: tuple[Chunk, ...]
    """The shown document's chunks (spans; parents included for parent_child)."""
    chunk_request_id: int
    """Id of the chunking these chunks came from (stale results are told by it)."""
    strategy: str
    params: Mapping[str, Any]
    with_prefix: bool
    question: str
    """"" when no question is asked (the gold set alone)."""
    k: int
    retriever: Retriever
    """The user's choice: "dense", "bm25" or "hybrid"."""
    gold: tuple[GoldQuestion, ...] = ()
    """Questions of the loaded gold set about the open documents (empty: none loaded)."""
    exact: bool = False
    """Embed the chunks with the model now if they are not cached (else answer with a preview)."""
    preview: bool = True
    """Answer with a preview first when exact vectors are not at hand (False when the preview for
    these very chunks is already shown and only the exact stage is wanted)."""
    fallback_note: str = "the embedding model is loading"
    """Why BM25 answers for a dense or hybrid request, when it does."""
    documents: tuple[Document, ...] = ()
    """Every document of the open corpus (the shown one among them); retrieval and the gold set
    cover them all when there are several (the others chunked with the same strategy and params).
    Empty: the shown document alone."""
    filter_docs: tuple[str, ...] | None = None
    """Metadata filter for the question: only these document ids (None: all)."""
    heading_prefix: tuple[str, ...] | None = None
    """Metadata filter for the question: only chunks under this heading path (None: anywhere)."""
    budget: int | None = None
    """Context budget in cl100k tokens: the report also scores what fits into it (None: off)."""
    alternatives: bool = True
    """On exact stages, also score the gold set with the other retrievers on the same index (the
    panel shows BM25 and hybrid beside dense). Previews skip it: they must be quick."""
    exact_note: str = ""
    """Said with the exact figures when they were asked for while the user drags, because they
    were predicted to be fast (`Staging.fast_exact_note`): "exact while dragging (predicted 40 ms)"."""

    @property
    def dense(self) -> bool:
        return self.retriever != "bm25"


@dataclass(frozen=True, slots=True, eq=False)
class RetrievalResult:
    """One stage of a retrieval request: the question's hits and the gold set's report."""

    request: RetrievalRequest
    mode: Mode
    """EXACT, POOLED or FALLBACK."""
    retriever: Retriever
    """The retriever that actually answered."""
    hits: tuple[Any, ...]
    """`retrieval.Hit`s of the question, best first (empty without a question)."""
    report: Report | None
    """The gold set's report, or None without one."""
    config: EvalConfig | None
    """The configuration these figures stand for (what the CLI would be given)."""
    index: Index
    more_coming: bool
    """True when this request will answer again (the exact stage follows)."""
    exact_due: bool
    """True when the figures are a preview and an exact computation is still owed."""
    note: str = ""
    """Why the figures are not exact, for people ("" when they are)."""
    seconds: float = 0.0
    intervals: Mapping[str, tuple[float, float] | None] | None = None
    """95 % bootstrap intervals of the report's metrics (`<metric>_ci`), None without a report."""
    alternatives: Mapping[str, Report] | None = None
    """The same gold set scored by the other retrievers on the same chunks ("bm25", "hybrid",
    "dense"), computed on exact stages; None when not computed."""

    @property
    def document(self) -> Document:
        return self.request.document


def config_for(strategy: str, params: Mapping[str, Any], k: int, retriever: Retriever, with_prefix: bool,
               mode: Mode, embed_view: EmbedView = "raw") -> EvalConfig | None:
    """The EvalConfig a stage stands for (None for strategies EvalConfig cannot validate)."""
    try:
        return EvalConfig(strategy, dict(params), k, retriever, with_prefix,
                          "pooled" if mode == POOLED else "exact", embed_view=embed_view)
    except ValueError:
        return None


def view_of(chunks: Sequence[Chunk]) -> EmbedView:
    """The embedding view `chunks` are marked with (`with_view`; "raw" when none)."""
    return next((c.meta.get("embed_view", "raw") for c in chunks if c.meta), "raw")


class Staging:
    """Preview first, exact last, over the chunk and index stores it is given; remembers the
    reports of the indexes it scored (`reports` of them), so a new question over the same chunks
    does not score the gold set again."""

    def __init__(self, chunk_store: ChunkStore, index_store: IndexStore, *, reports: int = 24) -> None:
        self.chunk_store = chunk_store
        self.index_store = index_store
        self._reports: SizedLRU[Report] = SizedLRU(reports, reports)

    def forget(self) -> None:
        """Drop remembered reports (the index store's indexes are its own: `IndexStore.forget`)."""
        self._reports.clear()

    def fast_exact_note(self, docs: Sequence[Document], chunks_by_doc: ChunksByDoc, with_prefix: bool) -> str:
        """"exact while dragging (predicted N ms)" when the index store predicts the exact stage of
        these chunks under FAST_EXACT_S (counting every chunk, cached or not: an upper bound that
        hashes nothing, as the GUI thread asks), "" otherwise or before the model has shown its
        speed."""
        secs = self.index_store.predict_exact(docs, chunks_by_doc, with_prefix)
        if secs is None or secs >= FAST_EXACT_S:
            return ""
        return f"exact while dragging (predicted {max(1, round(secs * 1000))} ms)"

    def _cached_exact(self, exact_key: tuple, docs: Sequence[Document], chunks_by_doc: ChunksByDoc,
                      emb: Embedder | None, with_prefix: bool) -> Index | None:
        """The exact index when it is stored, or can be made at once (every embedding cached); else None."""
        store = self.index_store
        index = store.lookup(exact_key)
        if index is None and store.exact_cached(docs, chunks_by_doc, with_prefix):
            from inspector.core.retrieval import index as retrieval

            index = retrieval.build_index(docs, chunks_by_doc, emb, with_prefix=with_prefix, cache=store.cache)
            store.put(exact_key, index)
        return index

    def _pooled_preview_vectors(self, req: RetrievalRequest, others: Sequence[Document],
                                chunks_by_doc: Mapping[str, Sequence[Chunk]],
                                cancelled: Callable[[], bool]) -> np.ndarray | None:
        """Chunk vectors averaged from piece vectors for a preview, when the shown document's piece
        vectors are built (the other documents' are built now, if need be); None otherwise."""
        store = self.index_store
        pooled_doc = store.pooled_vectors(req.document) if req.preview else None
        if pooled_doc is None:
            return None
        from inspector.core.retrieval.pooled import index_vectors

        pvs = {req.document.doc_id: pooled_doc}
        for d in others:
            pvs[d.doc_id] = store.pooled_vectors(d) or store.build_pooled(d, cancel=cancelled)
        return index_vectors(chunks_by_doc, pvs, with_prefix=req.with_prefix, cache=store.cache)

    def stages(self, req: RetrievalRequest, cancelled: Callable[[], bool],
               progress: Callable[[int, int, str], None]) -> Iterator[RetrievalResult]:
        """Hits and report for the window, in stages: the best index that can be made at once (exact
        if its embeddings are cached, else pooled piece vectors, else BM25 while the model loads),
        then, when `req.exact`, the exact one with embedding progress."""
        t0 = time.perf_counter()
        store = self.index_store
        emb = store.embedder  # one embedder for the whole request, whatever happens meanwhile
        docs, chunks_by_doc = self.request_chunks(req)
        others = docs[1:]
        fp = corpus_fingerprint(docs, chunks_by_doc)
        gold = req.gold if not others else tuple(q for q in req.gold if q.source in (None, *chunks_by_doc))

        def finish(index: Index, mode: Mode, retriever: Retriever, *, more: bool, due: bool, note: str = "",
                   key: tuple | None = None) -> RetrievalResult:
            hits: tuple = ()
            if req.question.strip():
                hits = tuple(index.search(req.question, req.k, retriever, docs=req.filter_docs,
                                          heading_prefix=req.heading_prefix))
            report = None
            intervals = None
            alternatives: dict[str, Report] | None = None

            def scored(by: Retriever) -> Report:
                # A stored index scored on the same questions before (only the question changed):
                # the report is the same, so it is not computed again.
                rkey = (key, by, req.k, req.budget, gold) if key is not None else None
                hit = self._reports.lookup(rkey) if rkey is not None else None
                if hit is None:
                    search = IndexSearch(index, retriever=by, multi_doc=len(docs) > 1)
                    hit = evaluate(gold, docs, chunks_by_doc, search, req.k, budget=req.budget)
                    if rkey is not None:
                        self._reports.put(rkey, hit)
                return hit

            if gold:
                report = scored(retriever)
                intervals = report_intervals(report, seed=INTERVAL_SEED)
                if req.alternatives and mode == EXACT and not cancelled():
                    has_vectors = getattr(index, "vectors", None) is not None
                    usable: tuple[Retriever, ...] = ("bm25", "dense", "hybrid") if has_vectors else ("bm25",)
                    alternatives = {r: (report if r == retriever else scored(r)) for r in usable}
            config = config_for(req.strategy, req.params, req.k, retriever, req.with_prefix, mode, view_of(req.chunks))
            return RetrievalResult(req, mode, retriever, hits, report, config, index, more_coming=more,
                                   exact_due=due, note=note, seconds=time.perf_counter() - t0,
                                   intervals=intervals, alternatives=alternatives)

        from inspector.core.retrieval import index as retrieval

        bm25_key = ("bm25", fp, req.with_prefix)

        def bm25_index() -> Any:
            return store.get_or_make(
                bm25_key, lambda: retrieval.build_index(docs, chunks_by_doc, None, with_prefix=req.with_prefix))

        if not req.dense:
            yield finish(bm25_index(), EXACT, "bm25", more=False, due=False, key=bm25_key)
            return
        if emb is None:
            yield finish(bm25_index(), FALLBACK, "bm25", more=False, due=True,
                         note=f"BM25 answers until dense vectors exist: {req.fallback_note}", key=bm25_key)
            return
        from inspector.core.embedding.embedder import cache_namespace
        from inspector.core.stores.source import store_source

        source = store_source(req.strategy)
        if source is not None:  # the user's vector store: its own vectors, exact at once (no chunk is embedded)
            store_key = ("store", id(source), fp, cache_namespace(emb))
            index = store.get_or_make(store_key, lambda: source.index(docs, chunks_by_doc, emb, cache=store.cache))
            yield finish(index, EXACT, req.retriever, more=False, due=False, note=source.note or "", key=store_key)
            return
        exact_key = ("exact", fp, req.with_prefix, cache_namespace(emb))  # precision, not device
        cached = self._cached_exact(exact_key, docs, chunks_by_doc, emb, req.with_prefix)
        if cached is not None:
            yield finish(cached, EXACT, req.retriever, more=False, due=False, note=req.exact_note,
                         key=exact_key)
            return
        # A preview now (unless the preview of these chunks is on screen already): pooled piece
        # vectors when the shown document's are built, else BM25.
        vecs = self._pooled_preview_vectors(req, others, chunks_by_doc, cancelled)
        if vecs is not None:
            if cancelled():
                return
            preview = retrieval.build_index(docs, chunks_by_doc, emb, with_prefix=req.with_prefix,
                                            cache=store.cache, vectors=vecs)
            yield finish(preview, POOLED, req.retriever, more=req.exact, due=True,
                         note="pooled preview: chunk vectors averaged from piece vectors")
        elif req.preview:
            why = ("the chunks are being embedded" if req.exact
                   else "the live-preview vectors are being prepared")
            yield finish(bm25_index(), FALLBACK, "bm25", more=req.exact, due=True,
                         note=f"BM25 answers until dense vectors exist: {why}", key=bm25_key)
        if not req.exact or cancelled():
            return
        n = sum(1 for d in docs for c in chunks_by_doc[d.doc_id] if c.role != "parent")
        from inspector.core.embedding.throughput import Eta, format_eta

        eta = Eta()
        # What the cache lacks, at this embedder's observed pace (None before it has embedded).
        first_guess = store.predict_exact(docs, chunks_by_doc, req.with_prefix, uncached_only=True)

        def embedded(done: int, total: int) -> None:
            left = format_eta(eta.update(done, total, first_guess))
            progress(done, total, f"Embedding {n:,} chunks" + (f": {left}" if left else ""))

        index = retrieval.build_index(docs, chunks_by_doc, emb, with_prefix=req.with_prefix, cache=store.cache,
                                      progress=embedded, cancel=cancelled)
        store.put(exact_key, index)
        progress(0, 0, "")
        yield finish(index, EXACT, req.retriever, more=False, due=False, note=req.exact_note, key=exact_key)

    def request_chunks(self, req: RetrievalRequest) -> tuple[list[Document], dict[str, tuple[Chunk, ...]]]:
        """The documents a request searches (the shown one first) and their chunks: the others of a
        corpus chunked the same way, those that cannot be left out."""
        doc = req.document
        chunks_by_doc: dict[str, tuple[Chunk, ...]] = {doc.doc_id: req.chunks}
        others: list[Document] = []
        if len(req.documents) > 1:  # a corpus: the others chunked the same way, in the same index
            others = [d for d in req.documents if d.doc_id != doc.doc_id]
            # the shown chunks' embedding view (the window's choice), on every document
            same = EvalConfig(req.strategy, req.params, embed_view=view_of(req.chunks))
            chunks_by_doc.update(self.chunk_store.chunks_for(same, others, lenient=True))
            others = [d for d in others if d.doc_id in chunks_by_doc]
        return [doc, *others], chunks_by_doc

    def exact_index(self, req: RetrievalRequest, *, progress: Callable[[int, int], None] | None = None,
                    cancel: Callable[[], bool] | None = None) -> Index:
        """The exact dense index of a request's chunks (every document it searches), whatever its
        retriever: each chunk embedded by the index store's embedder (the cache first). Kept under
        the key a dense request looks for, so choosing dense afterwards finds it built. The
        Embedding Map asks for it under BM25, which has no vectors to map. ValueError without an
        embedder; `cancel` raises `Cancelled` between batches."""
        store = self.index_store
        emb = store.embedder
        if emb is None:
            raise ValueError("the embedding model is not loaded")
        from inspector.core.embedding.embedder import cache_namespace
        from inspector.core.retrieval import index as retrieval

        docs, chunks_by_doc = self.request_chunks(req)
        key = ("exact", corpus_fingerprint(docs, chunks_by_doc), req.with_prefix, cache_namespace(emb))
        index = store.lookup(key)
        if index is None:
            index = retrieval.build_index(docs, chunks_by_doc, emb, with_prefix=req.with_prefix, cache=store.cache,
                                          progress=progress, cancel=cancel)
            store.put(key, index)
        return index


__all__ = ["Staging", "RetrievalRequest", "RetrievalResult", "EXACT", "POOLED", "FALLBACK", "FAST_EXACT_S",
           "config_for"]

