"""The workbench: one orchestration of a corpus and a gold set, for the command line and the window.

It opens documents and a gold set, chunks every document, builds or reuses indexes (exact, pooled,
BM25, hybrid), asks questions, evaluates, compares and sweeps — always over the whole corpus. The
CLI commands are thin callers of it; the window's controllers hand it requests on worker threads
and render what it answers (`stages`: the preview first, exact last).

Everything it remembers (chunks, indexes, reports, pooled vectors) sits in locked LRUs, so runner
threads may call it at once. What it is given (documents, gold set, embedder) is replaced whole,
never mutated, so a job that started keeps a consistent view.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from inspector.core.chunking.chunk import Chunk
from inspector.core.chunking.registry import get_strategy
from inspector.core.documents.document import Document, LoadResult, load_paths
from inspector.core.evaluation.compare import Comparison, compare_reports
from inspector.core.evaluation.config import Cancel, EvalConfig, IndexFactory, Progress
from inspector.core.evaluation.gold import GoldQuestion, GoldSet, load_gold
from inspector.core.evaluation.metrics import IndexSearch, Report, evaluate
from inspector.core.evaluation.report import INTERVAL_SEED
from inspector.core.evaluation.sweep import (
    Recommendation,
    SweepResult,
    SweepRow,
    grid,
    rank_key,
)
from inspector.core.evaluation.uncertainty import report_intervals
from inspector.core.runtime.cancel import Cancelled, check_cancelled
from inspector.core.runtime.lru import SizedLRU

log = logging.getLogger(__name__)

#: What a retrieval stage's figures are: the model's own vectors (or BM25 chosen by the user),
#: the live preview from piece vectors, or BM25 standing in for dense/hybrid until vectors exist.
EXACT, POOLED, FALLBACK = "exact", "pooled", "fallback"

ChunksByDoc = Mapping[str, tuple[Chunk, ...]]


#: Chunks the workbench remembers over all its chunkings (about 600 bytes each; the most recent
#: chunking is kept whatever its size). Sized by documents' characters (64 M) instead, a soak's
#: sweeps and drags kept 90,000 chunks, 53 MB of small objects whose churn left the window's
#: small-object arenas fragmented (issue 17).
CHUNK_CACHE_CHUNKS = 40_000

#: Fingerprints of the last chunk tuples asked about, by identity: (the tuple, its fingerprint).
#: The window asks again for the same chunks at every question, preview and exact stage, and with
#: a large overlap hashing them is tens of milliseconds of Python beside the GUI thread.
_FINGERPRINTS: SizedLRU[tuple[Sequence[Chunk], str]] = SizedLRU(16, 16)


def chunks_fingerprint(chunks: Sequence[Chunk]) -> str:
    """What decides an index's texts besides the document: spans, roles, parents, prefixes."""
    if isinstance(chunks, tuple):  # immutable: its fingerprint can be kept
        held = _FINGERPRINTS.lookup(id(chunks))
        if held is not None and held[0] is chunks:
            return held[1]
        fp = _fingerprint(chunks)
        _FINGERPRINTS.put(id(chunks), (chunks, fp))  # the tuple is held, so its id is not reused
        return fp
    return _fingerprint(chunks)


def _fingerprint(chunks: Sequence[Chunk]) -> str:
    h = hashlib.blake2b(digest_size=16)
    for n, c in enumerate(chunks):
        if not n % 512:
            check_cancelled()
        h.update(f"{c.id}|{c.start}|{c.end}|{c.role}|{c.parent_id}|{c.prefix}\x00".encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def corpus_fingerprint(docs: Sequence[Document], chunks_by_doc: ChunksByDoc) -> str:
    """One key for an index over these documents and chunks."""
    return "|".join(f"{d.doc_id}:{d.sha256}:{chunks_fingerprint(chunks_by_doc[d.doc_id])}"
                    for d in docs if d.doc_id in chunks_by_doc)


def _questions(gold: GoldSet | Sequence[GoldQuestion] | None) -> tuple[GoldQuestion, ...]:
    if gold is None:
        return ()
    return tuple(gold.questions if isinstance(gold, GoldSet) else gold)


# -- the window's request, as plain data ---------------------------------------------------------

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
    retriever: str
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
    were predicted to be fast (`Workbench.predict_exact`): "exact while dragging (predicted 40 ms)"."""

    @property
    def dense(self) -> bool:
        return self.retriever != "bm25"


@dataclass(frozen=True, slots=True, eq=False)
class RetrievalResult:
    """One stage of a retrieval request: the question's hits and the gold set's report."""

    request: RetrievalRequest
    mode: str
    """EXACT, POOLED or FALLBACK."""
    retriever: str
    """The retriever that actually answered."""
    hits: tuple[Any, ...]
    """`retrieval.Hit`s of the question, best first (empty without a question)."""
    report: Report | None
    """The gold set's report, or None without one."""
    config: EvalConfig | None
    """The configuration these figures stand for (what the CLI would be given)."""
    index: Any
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


def config_for(strategy: str, params: Mapping[str, Any], k: int, retriever: str, with_prefix: bool,
               mode: str) -> EvalConfig | None:
    """The EvalConfig a stage stands for (None for strategies EvalConfig cannot validate)."""
    try:
        return EvalConfig(strategy, dict(params), k, retriever, with_prefix,
                          "pooled" if mode == POOLED else "exact")
    except ValueError:
        return None


def _pooled_key(emb: Any) -> str:
    """Which piece vectors an embedder can use: its model and precision (the cache namespace),
    never its device."""
    from inspector.core.embedding.embedder import cache_namespace

    try:
        return cache_namespace(emb)
    except AttributeError:
        return str(getattr(emb, "model_id", id(emb)))


# -- the workbench ----------------------------------------------------------------------------------

class Workbench:
    """A corpus, a gold set and everything computed from them.

    `embedder`: the embedding model (None: the bundled one, made when first needed, unless
    `lazy_model=False`); `cache`: the persistent embedding cache (None: vectors are not persisted);
    `index_factory`: how indexes are built (tests hand in their own)."""

    def __init__(self, documents: Sequence[Document] = (),
                 gold: GoldSet | Sequence[GoldQuestion] | None = None, *, embedder: Any = None,
                 cache: Any = None, index_factory: IndexFactory | None = None,
                 lazy_model: bool = True, indexes: int = 6) -> None:
        self.documents: tuple[Document, ...] = tuple(documents)
        self.gold = gold
        self.embedder = embedder
        self.cache = cache
        self.index_factory = index_factory
        self.lazy_model = lazy_model
        """Whether a dense request without an embedder loads the bundled model (the CLI) or is
        answered by BM25 until `embedder` is set (the window, which loads it in the background)."""
        self._chunks: SizedLRU[tuple[Chunk, ...]] = SizedLRU(64, CHUNK_CACHE_CHUNKS)
        self._indexes: SizedLRU[Any] = SizedLRU(indexes, indexes)
        self._reports: SizedLRU[Report] = SizedLRU(4 * indexes, 4 * indexes)
        self._pooled: SizedLRU[Any] = SizedLRU(8, 8)

    # -- corpus and gold set ----------------------------------------------------------------------
    def open(self, paths: Sequence[str | os.PathLike[str]], *, encoding: str | None = None) -> LoadResult:
        """Load files and folders as the corpus; returns what loaded and the problems. `encoding`
        forces a codec for plain-text files (None: detect; a guess is noted in each document's meta)."""
        loaded = load_paths(list(paths), encoding=encoding)
        self.set_documents(loaded.documents)
        return loaded

    def set_documents(self, documents: Sequence[Document]) -> None:
        self.documents = tuple(documents)

    def load_gold(self, path: str | os.PathLike[str]) -> GoldSet:
        """Read a gold file against the corpus (InputError naming file, line and field)."""
        gold = load_gold(path, self.documents)
        self.gold = gold
        return gold

    def set_gold(self, gold: GoldSet | Sequence[GoldQuestion] | None) -> None:
        self.gold = gold

    def questions(self, docs: Sequence[Document] | None = None) -> tuple[GoldQuestion, ...]:
        """The gold questions about these documents (all of the corpus by default): those naming
        no source, or a source among them."""
        qs = _questions(self.gold)
        if docs is None:
            return qs
        ids = {d.doc_id for d in docs}
        return tuple(q for q in qs if q.source is None or q.source in ids)

    # -- chunks -----------------------------------------------------------------------------------
    def chunk(self, doc: Document, strategy: str, params: Mapping[str, Any] | None = None) -> tuple[Chunk, ...]:
        """One document's chunks, remembered per (document content, strategy, params). The strategy
        object is part of the key, so a strategy registered again under the same name is rerun."""
        strat = get_strategy(strategy)
        if strat.needs_embedder:
            return strat(doc, params)  # depends on the model it is handed: not remembered here
        valid = strat.validate(params)
        key = (doc.doc_id, doc.sha256, strat, tuple(sorted(valid.items(), key=lambda kv: kv[0])))
        return self._chunks.get_or_make(key, lambda: strat.func(doc, valid), len)  # sized in chunks

    def chunk_corpus(self, strategy: str, params: Mapping[str, Any] | None = None,
                     docs: Sequence[Document] | None = None, *, lenient: bool = False
                     ) -> dict[str, tuple[Chunk, ...]]:
        """Every document's chunks by doc_id. `lenient`: a document that is blank or that the
        strategy cannot chunk is left out (logged) instead of raising — the window's corpus mode,
        where one odd file must not take retrieval over the others down."""
        out: dict[str, tuple[Chunk, ...]] = {}
        for d in self.documents if docs is None else docs:
            if not lenient:
                out[d.doc_id] = self.chunk(d, strategy, params)
                continue
            if not d.text.strip():
                continue
            try:
                chunks = self.chunk(d, strategy, params)
            except Cancelled:
                raise
            except Exception:  # noqa: BLE001  (a document this strategy cannot chunk is left out)
                log.warning("%s left out: it could not be chunked", d.doc_id, exc_info=True)
                continue
            if chunks:
                out[d.doc_id] = chunks
        return out

    def chunks_for(self, config: EvalConfig, docs: Sequence[Document] | None = None, *,
                   lenient: bool = False) -> dict[str, tuple[Chunk, ...]]:
        """The corpus chunked as `config` says, with contextual descriptions in the prefixes when
        `config.describe` (spans unchanged: only what is embedded changes)."""
        chunks = self.chunk_corpus(config.strategy, config.params, docs, lenient=lenient)
        if not config.describe:
            return chunks
        from inspector.core.chunking.descriptions import with_descriptions

        by_id = {d.doc_id: d for d in (self.documents if docs is None else docs)}
        return {doc_id: with_descriptions(by_id[doc_id], cs) for doc_id, cs in chunks.items()}

    # -- embedder and indexes ---------------------------------------------------------------------
    def embedder_for(self, retriever: str) -> Any:
        """The embedder a retriever needs: none for BM25; the bundled model when none was given
        and the workbench may load it."""
        if retriever == "bm25":
            return None
        if self.embedder is None and self.lazy_model:
            from inspector.core.embedding.embedder import default_embedder

            self.embedder = default_embedder()
        return self.embedder

    def pooled_vectors(self, doc: Document) -> Any:
        """The document's pooled piece vectors if built for the current embedder, else None."""
        emb = self.embedder
        if emb is None:
            return None
        return self._pooled.lookup((_pooled_key(emb), doc.sha256))

    def build_pooled(self, doc: Document, *, progress: Callable[[int, int], None] | None = None,
                     cancel: Cancel | None = None) -> Any:
        """The document's pooled piece vectors (embedded once per document, persisted)."""
        from inspector.core.retrieval.pooled import pooled_for

        emb = self.embedder_for("dense")
        key = (_pooled_key(emb), doc.sha256)
        hit = self._pooled.lookup(key)
        if hit is None:
            hit = pooled_for(doc, emb, progress=progress, cancel=cancel)
            self._pooled.put(key, hit)
        return hit

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

    def build_index(self, config: EvalConfig, chunks_by_doc: ChunksByDoc,
                    docs: Sequence[Document] | None = None, *, progress: Progress | None = None,
                    cancel: Cancel | None = None) -> Any:
        """An index over these chunks as `config` asks (BM25, exact or pooled vectors)."""
        docs = [d for d in (self.documents if docs is None else docs) if d.doc_id in chunks_by_doc]
        if self.index_factory is not None:
            return self.index_factory(docs, chunks_by_doc, config)
        from inspector.core.retrieval import index as retrieval

        emb = self.embedder_for(config.retriever)
        embed_progress = None
        if progress is not None:
            def embed_progress(done: int, total: int) -> None:
                progress(done, total, f"Embedding {total:,} chunks")
        vectors = None
        if emb is not None and config.embedding == "pooled":
            from inspector.core.retrieval import pooled

            pv = {d.doc_id: self.build_pooled(d, cancel=cancel) for d in docs}
            # Pooled where needed; a chunk whose exact vector is cached gets that one.
            vectors = pooled.index_vectors(chunks_by_doc, pv, with_prefix=bool(config.with_prefix),
                                           cache=self.cache)
        return retrieval.build_index(docs, chunks_by_doc, emb, with_prefix=bool(config.with_prefix),
                                     cache=self.cache, progress=embed_progress, cancel=cancel,
                                     vectors=vectors)

    # -- ask, evaluate, compare, sweep --------------------------------------------------------------
    def ask(self, question: str, config: EvalConfig, *, docs: Sequence[str] | None = None,
            heading_prefix: Sequence[str] | None = None) -> list[Any]:
        """The top-k hits for one question over the corpus, with optional metadata filters."""
        chunks = self.chunks_for(config)
        index = self.build_index(config, chunks)
        return list(index.search(question, k=config.k, retriever=config.retriever, docs=docs,
                                 heading_prefix=heading_prefix))

    def evaluate(self, config: EvalConfig, *, chunks_by_doc: ChunksByDoc | None = None,
                 questions: Sequence[GoldQuestion] | None = None,
                 docs: Sequence[Document] | None = None, budget: int | None = None) -> Report:
        """Chunk, index and score one configuration on the gold set (the whole corpus). `budget`:
        also score what fits into that many cl100k tokens of context (`Report.hit_at_budget`)."""
        docs = list(self.documents if docs is None else docs)
        chunks = chunks_by_doc if chunks_by_doc is not None else self.chunks_for(config, docs)
        index = self.build_index(config, chunks, docs)
        search = IndexSearch(index, retriever=config.retriever, multi_doc=len(docs) > 1)
        qs = self.questions(docs) if questions is None else tuple(questions)
        return evaluate(qs, docs, chunks, search, config.k, budget=budget)

    def compare(self, a: EvalConfig, b: EvalConfig, *, progress: Progress | None = None,
                cancel: Cancel | None = None, budget: int | None = None) -> Comparison:
        """Score A (the baseline) and B on the same gold set and compare them."""
        reports = []
        for i, config in enumerate((a, b)):
            if cancel is not None and cancel():
                raise Cancelled()
            if progress is not None:
                progress(i, 2, config.label())
            reports.append(self.evaluate(config, budget=budget))
        if progress is not None:
            progress(2, 2, "")
        return compare_reports(reports[0], reports[1], before_config=a, after_config=b)

    def sweep(self, configs: Iterable[EvalConfig], *, progress: Progress | None = None,
              cancel: Cancel | None = None, skipped: Sequence[tuple[str, str]] = (),
              confirm: int = 0, docs: Sequence[Document] | None = None,
              against: EvalConfig | None = None, budget: int | None = None, folds: int = 5,
              seed: int = 0) -> SweepResult:
        """Score every configuration; rows come back best first. Configurations that differ only in
        k share one index and one search (as deep as the largest k). With `confirm=N`, the N best
        pooled rows are scored again with exact embeddings (`SweepRow.exact`): pooled vectors make
        the grid fast, the exact figure is what a production pipeline will see.

        `against`: the current configuration (scored too if the grid lacks it); the result then
        carries a `Recommendation` chosen by `folds`-fold cross-validation over the questions, and
        every row says whether it is `tied_with_best`. `budget`: rows are ranked, and the
        recommendation chosen, by the hit rate at that context budget."""
        configs = list(configs)
        if against is not None and against not in configs:
            configs.append(against)
        docs = list(self.documents if docs is None else docs)
        groups: dict[tuple, list[EvalConfig]] = {}
        for c in configs:
            groups.setdefault(c.chunking_key, []).append(c)
        questions = self.questions(docs)
        rows: list[SweepRow] = []
        done = 0
        total = len(configs)
        cancelled = False
        for members in groups.values():
            if cancel is not None and cancel():
                cancelled = True
                break
            first = members[0]
            if progress is not None:
                progress(done, total, first.label())
            chunks = self.chunks_for(first, docs)
            try:
                index = self.build_index(first, chunks, docs, cancel=cancel)
            except Cancelled:
                cancelled = True
                break
            if cancel is not None and cancel():
                cancelled = True
                break
            rows.extend(score_group(members, index, chunks, docs, questions, budget=budget, against=against))
            done += len(members)
        if progress is not None and not cancelled:
            progress(total, total, "")
        rows.sort(key=rank_key)
        if confirm and not cancelled:
            confirmed = []
            for i, row in enumerate(rows):
                if i < confirm and row.config.embedding == "pooled" and row.config.retriever != "bm25":
                    if cancel is not None and cancel():
                        cancelled = True
                        confirmed.extend(rows[i:])
                        break
                    if progress is not None:
                        progress(i, confirm, f"confirming {row.config.label()} with exact embeddings")
                    try:
                        exact = self.evaluate(replace(row.config, embedding="exact"), docs=docs, budget=budget)
                    except Cancelled:
                        cancelled = True
                        confirmed.extend(rows[i:])
                        break
                    row = replace(row, exact=exact)
                confirmed.append(row)
            rows = confirmed
        recommendation = None
        if against is not None and not cancelled and questions and rows:
            rows, recommendation = recommend(rows, against, budget=budget, folds=folds, seed=seed)
        return SweepResult(tuple(rows), tuple(skipped), cancelled, recommendation, budget)

    # -- the window: preview first, exact last ----------------------------------------------------
    def stages(self, req: RetrievalRequest, cancelled: Callable[[], bool],
               progress: Callable[[int, int, str], None]) -> Iterator[RetrievalResult]:
        """Hits and report for the window, in stages: the best index that can be made at once (exact
        if its embeddings are cached, else pooled piece vectors, else BM25 while the model loads),
        then, when `req.exact`, the exact one with embedding progress."""
        t0 = time.perf_counter()
        doc = req.document
        emb = self.embedder  # one embedder for the whole request, whatever happens meanwhile
        chunks_by_doc: dict[str, tuple[Chunk, ...]] = {doc.doc_id: req.chunks}
        others: list[Document] = []
        if len(req.documents) > 1:  # a corpus: the others chunked the same way, in the same index
            others = [d for d in req.documents if d.doc_id != doc.doc_id]
            chunks_by_doc.update(self.chunk_corpus(req.strategy, req.params, others, lenient=True))
            others = [d for d in others if d.doc_id in chunks_by_doc]
        docs = [doc, *others]
        fp = corpus_fingerprint(docs, chunks_by_doc)
        gold = req.gold if not others else tuple(q for q in req.gold if q.source in (None, *chunks_by_doc))

        def finish(index: Any, mode: str, retriever: str, *, more: bool, due: bool, note: str = "",
                   key: tuple | None = None) -> RetrievalResult:
            hits: tuple = ()
            if req.question.strip():
                hits = tuple(index.search(req.question, req.k, retriever, docs=req.filter_docs,
                                          heading_prefix=req.heading_prefix))
            report = None
            intervals = None
            alternatives: dict[str, Report] | None = None

            def scored(by: str) -> Report:
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
                    usable = ("bm25", "dense", "hybrid") if getattr(index, "vectors", None) is not None else ("bm25",)
                    alternatives = {r: (report if r == retriever else scored(r)) for r in usable}
            config = config_for(req.strategy, req.params, req.k, retriever, req.with_prefix, mode)
            return RetrievalResult(req, mode, retriever, hits, report, config, index, more_coming=more,
                                   exact_due=due, note=note, seconds=time.perf_counter() - t0,
                                   intervals=intervals, alternatives=alternatives)

        from inspector.core.retrieval import index as retrieval

        bm25_key = ("bm25", fp, req.with_prefix)

        def bm25_index() -> Any:
            return self._indexes.get_or_make(
                bm25_key, lambda: retrieval.build_index(docs, chunks_by_doc, None, with_prefix=req.with_prefix), 1)

        if not req.dense:
            yield finish(bm25_index(), EXACT, "bm25", more=False, due=False, key=bm25_key)
            return
        if emb is None:
            yield finish(bm25_index(), FALLBACK, "bm25", more=False, due=True,
                         note=f"BM25 answers until dense vectors exist: {req.fallback_note}", key=bm25_key)
            return
        from inspector.core.embedding.embedder import cache_namespace

        exact_key = ("exact", fp, req.with_prefix, cache_namespace(emb))  # precision, not device
        index = self._indexes.lookup(exact_key)
        if index is None and self.exact_cached(docs, chunks_by_doc, req.with_prefix):
            index = retrieval.build_index(docs, chunks_by_doc, emb, with_prefix=req.with_prefix, cache=self.cache)
            self._indexes.put(exact_key, index)
        if index is not None:
            yield finish(index, EXACT, req.retriever, more=False, due=False, note=req.exact_note,
                         key=exact_key)
            return
        # A preview now (unless the preview of these chunks is on screen already): pooled piece
        # vectors when the shown document's are built, else BM25.
        pooled_doc = self.pooled_vectors(doc) if req.preview else None
        if pooled_doc is not None:
            from inspector.core.retrieval.pooled import index_vectors

            pvs = {doc.doc_id: pooled_doc}
            for d in others:
                pvs[d.doc_id] = self.pooled_vectors(d) or self.build_pooled(d, cancel=cancelled)
            vecs = index_vectors(chunks_by_doc, pvs, with_prefix=req.with_prefix, cache=self.cache)
            if cancelled():
                return
            preview = retrieval.build_index(docs, chunks_by_doc, emb, with_prefix=req.with_prefix,
                                            cache=self.cache, vectors=vecs)
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
        first_guess = self.predict_exact(docs, chunks_by_doc, req.with_prefix, uncached_only=True)

        def embedded(done: int, total: int) -> None:
            left = format_eta(eta.update(done, total, first_guess))
            progress(done, total, f"Embedding {n:,} chunks" + (f": {left}" if left else ""))

        index = retrieval.build_index(docs, chunks_by_doc, emb, with_prefix=req.with_prefix, cache=self.cache,
                                      progress=embedded, cancel=cancelled)
        self._indexes.put(exact_key, index)
        progress(0, 0, "")
        yield finish(index, EXACT, req.retriever, more=False, due=False, note=req.exact_note, key=exact_key)

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
            lengths = [len(t) for t, k in zip(texts, keys) if k not in found]
        else:  # lengths from the spans: no text is built
            lengths = [c.end - c.start + (len(c.prefix) + 2 if with_prefix and c.prefix else 0)
                       for _d, c in matchable]
        return tp.predict(cost_units_of_lengths(lengths, int(getattr(emb, "max_seq_length", 256))))

    def forget_indexes(self) -> None:
        """Drop remembered indexes and reports (e.g. after the embedder changed)."""
        self._indexes.clear()
        self._reports.clear()


def score_group(members: Sequence[EvalConfig], index: Any, chunks: ChunksByDoc, docs: Sequence[Document],
                questions: Sequence[GoldQuestion], *, budget: int | None = None,
                against: EvalConfig | None = None) -> list[SweepRow]:
    """Sweep rows of configurations that share chunks and index (they differ in k only): one
    search as deep as the largest k, each k scored from it. The local sweep calls it, and so does
    each evaluation task of the Ray engine (`inspector.core.distributed`): one scoring, two engines."""
    first = members[0]
    search = IndexSearch(index, retriever=first.retriever, multi_doc=len(docs) > 1)
    results = search.many(questions, max(c.k for c in members))
    return [SweepRow(c, evaluate(questions, docs, chunks, search, c.k, results=results, budget=budget),
                     current=c == against)
            for c in sorted(members, key=lambda c: c.k)]


def recommend(rows: Sequence[SweepRow], current: EvalConfig, *, budget: int | None = None,
              folds: int = 5, seed: int = 0) -> tuple[list[SweepRow], Recommendation]:
    """Cross-validated advice over sweep rows (one gold set) against the `current` row, and the
    rows marked `tied_with_best`. Scores are exact where every row has an exact figure (BM25
    rows, exact sweeps, or pooled rows all confirmed); otherwise the rows' own (pooled) ones, and
    the recommendation says so (`basis`)."""
    from inspector.core.evaluation.selection import cross_validated_choice, score_matrix

    rows = list(rows)
    metric = "hit_at_budget" if budget is not None else "hit_rate"
    exact_all = all(r.exact is not None or r.config.embedding == "exact" or r.config.retriever == "bm25"
                    for r in rows)
    reports = [(r.exact if r.exact is not None else r.report) if exact_all else r.report for r in rows]
    cur = next(i for i, r in enumerate(rows) if r.config == current)
    matrix, kept = score_matrix(reports, metric)
    cost = [float(r.cost.embedded_tokens) for r in reports]
    sel = cross_validated_choice(matrix, cur, cost, folds=folds, seed=seed)
    marked = [replace(r, tied_with_best=bool(sel.tied_with_best[i]), current=i == cur) for i, r in enumerate(rows)]
    rec = Recommendation(
        config=rows[sel.config_index].config, current=current, keep_current=sel.keep_current,
        gain=sel.gain, gain_ci=sel.gain_ci, p_value=sel.p_value, metric=metric,
        basis="exact" if exact_all else "pooled", in_sample=sel.in_sample_score,
        cross_validated=sel.cv_score, optimism=sel.optimism, questions=len(kept), folds=len(sel.folds))
    return marked, rec


# -- one-call shortcuts (tests, benchmarks and scripts) -----------------------------------------------

def run_config(gold: GoldSet | Sequence[GoldQuestion], docs: Sequence[Document], config: EvalConfig,
               *, embedder: Any = None, cache: Any = None, index_factory: IndexFactory | None = None,
               chunks_by_doc: ChunksByDoc | None = None) -> Report:
    """Chunk, index and evaluate one configuration (a Workbench made for the call)."""
    wb = Workbench(docs, gold, embedder=embedder, cache=cache, index_factory=index_factory)
    return wb.evaluate(config, chunks_by_doc=chunks_by_doc)


def chunk_corpus(docs: Sequence[Document], config: EvalConfig) -> dict[str, tuple[Chunk, ...]]:
    """Every document's chunks for a configuration."""
    return Workbench(docs).chunks_for(config)


def compare(gold: GoldSet | Sequence[GoldQuestion], docs: Sequence[Document], a: EvalConfig,
            b: EvalConfig, *, embedder: Any = None, cache: Any = None,
            index_factory: IndexFactory | None = None, progress: Progress | None = None,
            cancel: Cancel | None = None) -> Comparison:
    """Score A and B on the same gold set and compare them."""
    wb = Workbench(docs, gold, embedder=embedder, cache=cache, index_factory=index_factory)
    return wb.compare(a, b, progress=progress, cancel=cancel)


def sweep(gold: GoldSet | Sequence[GoldQuestion], docs: Sequence[Document],
          configs: Iterable[EvalConfig], *, embedder: Any = None, cache: Any = None,
          index_factory: IndexFactory | None = None, progress: Progress | None = None,
          cancel: Cancel | None = None, skipped: Sequence[tuple[str, str]] = (),
          confirm: int = 0, **kwargs: Any) -> SweepResult:
    """`Workbench.sweep` for one call (`against`, `budget`, `folds` pass through)."""
    wb = Workbench(docs, gold, embedder=embedder, cache=cache, index_factory=index_factory)
    return wb.sweep(configs, progress=progress, cancel=cancel, skipped=skipped, confirm=confirm, **kwargs)


def sweep_grid(gold: GoldSet | Sequence[GoldQuestion], docs: Sequence[Document], *,
               strategies: Sequence[str], sizes: Sequence[int | None] = (None,),
               overlaps: Sequence[int | None] = (None,), ks: Sequence[int] = (5,),
               retriever: str = "dense", with_prefix: bool | None = None, embedding: str = "exact",
               **kwargs: Any) -> SweepResult:
    """`grid` then `sweep`."""
    configs, skipped = grid(strategies, sizes, overlaps, ks, retriever=retriever,
                            with_prefix=with_prefix, embedding=embedding)
    return sweep(gold, docs, configs, skipped=skipped, **kwargs)


def default_index_factory(embedder: Any = None, cache: Any = None, progress: Any = None,
                          cancel: Cancel | None = None) -> IndexFactory:
    """An index factory building what a Workbench builds (for callers that hold chunks already)."""

    def build(docs: Sequence[Document], chunks_by_doc: ChunksByDoc, config: EvalConfig) -> Any:
        wb = Workbench(docs, embedder=embedder, cache=cache)
        return wb.build_index(config, chunks_by_doc, docs, cancel=cancel)

    return build


__all__ = ["Workbench", "RetrievalRequest", "RetrievalResult", "EXACT", "POOLED", "FALLBACK",
           "chunks_fingerprint", "corpus_fingerprint", "config_for", "run_config", "chunk_corpus",
           "score_group", "recommend",
           "compare", "sweep", "sweep_grid", "default_index_factory"]
