"""Background work for asking and measuring: the retrieval job, the
embedding-model loader and the pooled-vector builder.

The jobs run on `inspector.qt.runner.JobRunner` (latest wins, cancellable through the core's
`cancel_scope`, so long core loops stop as soon as a newer request supersedes them).

`compute_retrieval` is the job behind the question bar and the gold panel. It answers with the
best index it can make at once (exact if its embeddings are cached, else pooled piece vectors,
else BM25 while the model loads) and, when asked for the exact figure, embeds the chunks with
progress and answers again. Everything in it is a core call; the GUI only renders its stages.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping

from inspector.core.chunking.chunk import Chunk
from inspector.core.documents.document import Document
from inspector.core.evaluation.gold import GoldQuestion
from inspector.qt.runner import Job, JobRunner, Progress  # noqa: F401  (JobRunner re-exported)

log = logging.getLogger(__name__)

#: Modes a retrieval stage can be in.
EXACT, POOLED, FALLBACK = "exact", "pooled", "fallback"


class IndexStore:
    """The last few indexes, by what they were built from, so asking another question (or the gold
    set again) after a re-chunk back to known settings costs a search, not an embedding pass.
    Shared by worker jobs, so access is locked."""

    def __init__(self, size: int = 6) -> None:
        self.size = size
        self._items: OrderedDict[tuple, Any] = OrderedDict()
        self._reports: OrderedDict[tuple, Any] = OrderedDict()
        self._lock = threading.Lock()

    def report(self, key: tuple) -> Any:
        """A gold-set report made earlier on a stored index (asking a question needs no new one)."""
        with self._lock:
            return self._reports.get(key)

    def put_report(self, key: tuple, report: Any) -> None:
        with self._lock:
            self._reports[key] = report
            while len(self._reports) > 4 * self.size:
                self._reports.popitem(last=False)

    def get(self, key: tuple) -> Any:
        with self._lock:
            hit = self._items.get(key)
            if hit is not None:
                self._items.move_to_end(key)
            return hit

    def put(self, key: tuple, index: Any) -> None:
        with self._lock:
            self._items[key] = index
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._reports.clear()


def chunks_fingerprint(chunks: tuple[Chunk, ...]) -> str:
    """What decides an index's texts besides the document: spans, roles, parents, prefixes."""
    h = hashlib.blake2b(digest_size=16)
    for c in chunks:
        h.update(f"{c.id}|{c.start}|{c.end}|{c.role}|{c.parent_id}|{c.prefix}\x00".encode("utf-8", "surrogatepass"))
    return h.hexdigest()


@dataclass(frozen=True, slots=True, eq=False)
class RetrievalRequest:
    """Everything one question + gold-set evaluation depends on (plain data, built on the GUI thread)."""

    document: Document
    chunks: tuple[Chunk, ...]
    """The chunks of the shown result (spans; parents included for parent_child)."""
    chunk_request_id: int
    """`ChunkResult.request_id` the chunks came from (stale results are told by it)."""
    strategy: str
    params: Mapping[str, Any]
    with_prefix: bool
    question: str
    """"" when no question is asked (the gold set alone)."""
    k: int
    retriever: str
    """The user's choice: "dense", "bm25" or "hybrid"."""
    gold: tuple[GoldQuestion, ...] = ()
    """Questions of the loaded gold set about this document (empty: none loaded)."""
    exact: bool = False
    """Embed the chunks with the model now if they are not cached (else answer with a preview)."""
    preview: bool = True
    """Answer with a preview first when exact vectors are not at hand (False when the preview for
    these very chunks is already shown and only the exact stage is wanted)."""
    embedder: Any = None
    """The embedder once the model is ready; None while it loads (BM25 answers)."""
    pooled: Any = None
    """`PooledVectors` of the document once built; None before."""
    cache: Any = None
    """The `EmbeddingCache` chunk and question vectors go through."""
    store: IndexStore | None = field(default=None, compare=False)
    fallback_note: str = "the embedding model is loading"
    """Why BM25 answers for a dense or hybrid request, when it does."""
    documents: tuple[Document, ...] = ()
    """Every document of the open corpus (the shown one among them); retrieval and the gold set
    cover them all when there are several (the others chunked with the same strategy and params)."""
    pooled_by_sha: Mapping[str, Any] | None = None
    """`PooledVectors` by document sha256 already built (the others are built in the job)."""
    filter_docs: tuple[str, ...] | None = None
    """Metadata filter for the question: only these document ids (None: all)."""
    heading_prefix: tuple[str, ...] | None = None
    """Metadata filter for the question: only chunks under this heading path (None: anywhere)."""

    @property
    def dense(self) -> bool:
        return self.retriever != "bm25"


@dataclass(frozen=True, slots=True, eq=False)
class RetrievalResult:
    """One stage of a retrieval request: the question's hits and the gold set's report."""

    request: RetrievalRequest
    mode: str
    """EXACT (the model's own vectors, or BM25 chosen by the user), POOLED (live preview from piece
    vectors) or FALLBACK (BM25 standing in for dense/hybrid until vectors exist)."""
    retriever: str
    """The retriever that actually answered."""
    hits: tuple[Any, ...]
    """`retrieval.Hit`s of the question, best first (empty without a question)."""
    report: Any
    """`evaluate.Report` of the gold set, or None without one."""
    config: Any
    """The `EvalConfig` these figures stand for (what the CLI would be given)."""
    index: Any
    more_coming: bool
    """True when this job will answer again (the exact stage follows)."""
    exact_due: bool
    """True when the figures are a preview and an exact computation is still owed."""
    note: str = ""
    """Why the figures are not exact, for people ("" when they are)."""
    seconds: float = 0.0

    @property
    def document(self) -> Document:
        return self.request.document


def _texts(req: RetrievalRequest, chunks_by_doc: Mapping[str, Any] | None = None,
           docs: list[Document] | None = None) -> list[str]:
    if chunks_by_doc is None or docs is None:
        doc = req.document
        return [c.embedded_text(doc, with_prefix=req.with_prefix) for c in req.chunks if c.role != "parent"]
    return [c.embedded_text(d, with_prefix=req.with_prefix) for d in docs for c in chunks_by_doc[d.doc_id]
            if c.role != "parent"]


def exact_cached(embedder: Any, texts: list[str], cache: Any) -> bool:
    """True when every text's vector is in the cache (an exact index costs lookups only)."""
    if cache is None or embedder is None:
        return False
    from inspector.core.embedding.cache import text_key
    from inspector.core.embedding.embedder import cache_namespace

    keys = list({text_key(t) for t in texts})
    if not keys:
        return True
    return len(cache.get_many(cache_namespace(embedder), keys, int(embedder.dim))) == len(keys)


def make_config(req: RetrievalRequest, retriever: str, mode: str) -> Any:
    """The EvalConfig a stage stands for (None for strategies EvalConfig cannot validate)."""
    from inspector.core.evaluation.config import EvalConfig

    try:
        return EvalConfig(req.strategy, dict(req.params), req.k, retriever, req.with_prefix,
                          "pooled" if mode == POOLED else "exact")
    except ValueError:
        return None


def compute_retrieval(req: RetrievalRequest) -> Job:
    """The job: stages of (hits, report), preview first, exact last."""

    def job(cancelled: Callable[[], bool], progress: Progress) -> Iterator[RetrievalResult]:
        from inspector.core.retrieval import index as retrieval

        t0 = time.perf_counter()
        doc = req.document
        chunks_by_doc = {doc.doc_id: req.chunks}
        fp = chunks_fingerprint(req.chunks)
        store = req.store or IndexStore(1)
        others = [d for d in req.documents if d.doc_id != doc.doc_id] if len(req.documents) > 1 else []
        docs = [doc, *others]
        if others:  # a corpus: the other documents chunked the same way, in the same index
            from inspector.core.chunking.registry import chunk_document

            for d in list(others):
                try:
                    chunks_by_doc[d.doc_id] = chunk_document(d, req.strategy, req.params) if d.text.strip() else ()
                except Exception:  # noqa: BLE001  (a document this strategy cannot chunk is left out)
                    log.warning("retrieval: %s left out: it could not be chunked", d.doc_id, exc_info=True)
                    chunks_by_doc[d.doc_id] = ()
                if not chunks_by_doc[d.doc_id]:
                    del chunks_by_doc[d.doc_id]
                    others.remove(d)
            docs = [doc, *others]
            fp += "|" + "|".join(f"{d.doc_id}:{d.sha256}:{chunks_fingerprint(chunks_by_doc[d.doc_id])}"
                                 for d in others)

        def finish(index: Any, mode: str, retriever: str, *, more: bool, due: bool, note: str = "",
                   key: tuple | None = None) -> RetrievalResult:
            from inspector.core.evaluation.metrics import IndexSearch, evaluate

            hits: tuple = ()
            if req.question.strip():
                hits = tuple(index.search(req.question, req.k, retriever, docs=req.filter_docs,
                                          heading_prefix=req.heading_prefix))
            report = None
            gold = req.gold if not others else tuple(q for q in req.gold if q.source in (None, *chunks_by_doc))
            if gold:
                # A stored index scored on the same questions before (only the question changed):
                # the report is the same, so it is not computed again.
                rkey = (key, retriever, req.k, len(gold), hash(gold)) if key is not None else None
                report = store.report(rkey) if rkey is not None else None
                if report is None:
                    search = IndexSearch(index, retriever=retriever, multi_doc=len(docs) > 1)
                    report = evaluate(gold, docs, chunks_by_doc, search, req.k)
                    if rkey is not None:
                        store.put_report(rkey, report)
            return RetrievalResult(req, mode, retriever, hits, report, make_config(req, retriever, mode), index,
                                   more_coming=more, exact_due=due, note=note, seconds=time.perf_counter() - t0)

        def bm25_index() -> Any:
            key = bm25_key
            index = store.get(key)
            if index is None:
                index = retrieval.build_index(docs, chunks_by_doc, None, with_prefix=req.with_prefix)
                store.put(key, index)
            return index

        bm25_key = ("bm25", doc.sha256, fp, req.with_prefix)
        if not req.dense:
            yield finish(bm25_index(), EXACT, "bm25", more=False, due=False, key=bm25_key)
            return
        emb = req.embedder
        if emb is None:
            yield finish(bm25_index(), FALLBACK, "bm25", more=False, due=True,
                         note=f"BM25 answers until dense vectors exist: {req.fallback_note}", key=bm25_key)
            return
        exact_key = ("exact", doc.sha256, fp, req.with_prefix, emb.model_id)
        index = store.get(exact_key)
        if index is None and exact_cached(emb, _texts(req, chunks_by_doc, docs), req.cache):
            index = retrieval.build_index(docs, chunks_by_doc, emb, with_prefix=req.with_prefix, cache=req.cache)
            store.put(exact_key, index)
        if index is not None:
            yield finish(index, EXACT, req.retriever, more=False, due=False, key=exact_key)
            return
        # A preview now (unless the preview of these chunks is on screen already): pooled piece
        # vectors when built, else BM25.
        if req.preview and req.pooled is not None:
            from inspector.core.retrieval.pooled import index_vectors

            pvs = {doc.doc_id: req.pooled}
            if others:
                from inspector.core.retrieval.pooled import pooled_for

                known = req.pooled_by_sha or {}
                for d in others:
                    pv = known.get(d.sha256)
                    pvs[d.doc_id] = pv if pv is not None else pooled_for(d, emb, cancel=cancelled)
            vecs = index_vectors(chunks_by_doc, pvs, with_prefix=req.with_prefix)
            if cancelled():
                return
            preview = retrieval.build_index(docs, chunks_by_doc, emb, with_prefix=req.with_prefix,
                                            cache=req.cache, vectors=vecs)
            yield finish(preview, POOLED, req.retriever, more=req.exact, due=True,
                         note="pooled preview: chunk vectors averaged from piece vectors")
        elif req.preview:
            yield finish(bm25_index(), FALLBACK, "bm25", more=req.exact, due=True,
                         note="BM25 answers until dense vectors exist: the live-preview vectors are "
                              "being prepared", key=bm25_key)
        if not req.exact or cancelled():
            return
        texts = _texts(req, chunks_by_doc, docs)
        n = len(texts)

        def embedded(done: int, total: int) -> None:
            progress(done, total, f"Embedding {n:,} chunks")

        index = retrieval.build_index(docs, chunks_by_doc, emb, with_prefix=req.with_prefix, cache=req.cache,
                                      progress=embedded, cancel=cancelled)
        store.put(exact_key, index)
        progress(0, 0, "")
        yield finish(index, EXACT, req.retriever, more=False, due=False, key=exact_key)

    return job


# -- the model and the pooled piece vectors ---------------------------------------------------------

def load_model_job(embedder: Any) -> Job:
    def job(cancelled: Callable[[], bool], progress: Progress) -> Iterator[Any]:
        load = getattr(embedder, "load", None)
        if callable(load):
            load()  # imports torch and reads the weights: seconds, on this worker thread only
        yield embedder

    return job


def pooled_job(doc: Document, embedder: Any) -> Job:
    def job(cancelled: Callable[[], bool], progress: Progress) -> Iterator[Any]:
        from inspector.core.retrieval.pooled import pooled_for

        def pieces(done: int, total: int) -> None:
            progress(done, total, "Preparing live preview")

        yield doc, pooled_for(doc, embedder, progress=pieces, cancel=cancelled)

    return job


def sweep_job(gold: tuple[GoldQuestion, ...], doc: Document, configs: list, *, embedder: Any, cache: Any,
              skipped: list, confirm: int) -> Job:
    """The sweep dialog's job: `inspector.core.evaluation.sweep.sweep` with progress and cancellation."""

    def job(cancelled: Callable[[], bool], progress: Progress) -> Iterator[Any]:
        from inspector.core.workbench import sweep

        def step(done: int, total: int, label: str) -> None:
            progress(done, total, label)

        yield sweep(gold, [doc], configs, embedder=embedder, cache=cache, progress=step, cancel=cancelled,
                    skipped=skipped, confirm=confirm)

    return job


__all__ = ["JobRunner", "RetrievalRequest", "RetrievalResult", "IndexStore", "compute_retrieval",
           "load_model_job", "pooled_job", "sweep_job", "exact_cached", "chunks_fingerprint", "EXACT",
           "POOLED", "FALLBACK"]
