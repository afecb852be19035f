"""The retrieval side of the window's state: question, k, retriever, gold set, baseline, and the
figures the core workbench last produced, as plain data with typed signals.

It listens to the chunk state and keeps the answers current: every new chunking is scored at once
with the cheapest honest index (pooled piece vectors while the user drags, BM25 while the model
loads), and once the settings rest for `settle_ms` the exact embeddings replace the preview. The
model loads on a worker thread after the window is up (`start_model`), then the document's piece
vectors are built in the background. All work is the core's, run on worker threads by the jobs
in `retrieval_jobs`: the `Workbench`'s stores, and the preview → exact `Staging` over them, which
this controller owns; this class only decides what to ask for and when. The pinned baseline and the
comparison with it are kept by its `BaselineComparison` (`controllers.baseline`).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QTimer, Signal

from inspector.core import api
from inspector.core.api import DEFAULT_RETRIEVER, EXACT, FALLBACK, POOLED, RETRIEVERS, Retriever, is_retriever, pct
from inspector.core.viewmodel.settings_schema import Setting
from inspector.qt.controllers.baseline import Baseline, BaselineComparison
from inspector.qt.controllers.chunk_jobs import ChunkResult
from inspector.qt.controllers.retrieval_jobs import JobRunner, load_model_job, pooled_job, retrieval_job
from inspector.qt.controllers.state import InspectorState

if TYPE_CHECKING:
    from inspector.core.api import Document, RetrievalRequest, RetrievalResult, Staging, Workbench

#: Rest after the last chunk change before exact embeddings replace the pooled preview.
SETTLE_MS = 1500
#: Pooled and exact hit rates further apart than this (a share, i.e. one point) are pointed out.
DISAGREEMENT = 0.01
MODEL_IDLE, MODEL_LOADING, MODEL_READY, MODEL_FAILED = "idle", "loading", "ready", "failed"

ASK_K = Setting("retrieval/k", int, 5, "How many chunks a question retrieves (k), and the k of the gold metrics.")
ASK_BUDGET = Setting("retrieval/budget", int, 0,
                     "Context budget in cl100k tokens the gold panel also scores (hit@budget); 0: off.")
ASK_RETRIEVER = Setting("retrieval/retriever", str, DEFAULT_RETRIEVER, "Retriever chosen last: dense, bm25 or hybrid.")


class RetrievalController(QObject):
    """Question, gold set and their figures for the current chunks."""

    resultReady = Signal(object)
    """RetrievalResult: the latest stage (hits and report) for the current chunks."""
    cleared = Signal()
    """No document: hits and report are gone."""
    staleChanged = Signal(bool)
    """True from a re-chunk until the report for the new chunks arrives."""
    progressChanged = Signal(int, int, str)
    """(done, total, label) while chunks are embedded; total 0 when nothing is."""
    modelStateChanged = Signal(str)
    """MODEL_IDLE, MODEL_LOADING, MODEL_READY or MODEL_FAILED."""
    pooledProgress = Signal(int, int)
    """(done, total) pieces while the live-preview vectors are built; (0, 0) when done."""
    pooledReady = Signal(object)
    """The Document whose pooled vectors are now available."""
    goldChanged = Signal(object)
    """GoldSet | None."""
    questionChanged = Signal(str)
    settingsChanged = Signal()
    """k or retriever changed."""
    baselineChanged = Signal(object)
    """Baseline | None."""
    comparisonChanged = Signal(object)
    """sweep.Comparison of the current report against the baseline, or None."""
    disagreementChanged = Signal(str)
    """A sentence when pooled and exact hit rates differ by more than a point ('' otherwise)."""
    errored = Signal(str)
    busyChanged = Signal(bool)

    def __init__(self, state: InspectorState, *, embedder: Any = None, cache: Any = None,
                 synchronous: bool = False, settle_ms: int = SETTLE_MS, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self._embedder = embedder
        """The embedder to use (None: the bundled model, created on `start_model`)."""
        self._cache = cache
        self.embedder: Any = None
        """The embedder once ready; None before (BM25 answers)."""
        self.model_state = MODEL_IDLE
        self.model_error = ""
        self.question = ""
        self.k = 5
        self.budget: int | None = None
        """Context budget (cl100k tokens) the gold set is also scored at; None: off."""
        self.retriever: Retriever = DEFAULT_RETRIEVER
        self.filter_docs: tuple[str, ...] | None = None
        """Metadata filter of the question bar: document ids to search (None: every document)."""
        self.heading_prefix: tuple[str, ...] | None = None
        """Metadata filter of the question bar: a heading path the hits must lie under."""
        self.gold = None
        self.gold_questions: tuple = ()
        """Questions of the gold set about the current document."""
        self.result: RetrievalResult | None = None
        self.stale = False
        self._shut_down = False
        """Set by `shutdown`: the window is closing, and a filter or setting changed by it (the
        heading filter's focus leaving as the window goes) is no request to run."""
        self.baselines = BaselineComparison(self)
        """The pinned baseline and the current figures against it (`baseline`, `comparison`, `paired`)."""
        self.baselines.baselineChanged.connect(self.baselineChanged)
        self.baselines.comparisonChanged.connect(self.comparisonChanged)
        self.disagreement = ""
        self.reranker: Any = None
        """Settings ▸ Reranker: reorders the question's top `rerank_depth` hits (None: off)."""
        self.rerank_depth = 50
        self._workbench: Workbench | None = None
        self._staging: Staging | None = None
        self.pooled_building: Document | None = None
        self._chunks: ChunkResult | None = None
        self._submitted: RetrievalRequest | None = None
        self._pooled_rate: tuple[tuple, float] | None = None
        """(key, hit rate) of the last pooled preview: the exact figure for the same chunking
        request is compared with it."""
        self._pooled_deferred = False
        """The live-preview pieces wait for the exact embedding running now (`_build_pooled`)."""
        self._build_runners(synchronous, settle_ms)
        state.chunksChanged.connect(self._on_chunks)
        state.documentChanged.connect(self._on_document)
        state.documentsChanged.connect(lambda _docs: self._sync_documents())
        state.documentsChanged.connect(lambda _docs: self._filter_gold())

    def _build_runners(self, synchronous: bool, settle_ms: int) -> None:
        """The three workers (questions and gold figures, the model's loading, the live-preview
        pieces) and the timer that waits for the settings to rest before exact figures."""
        self.runner = JobRunner(self, synchronous=synchronous, name="retrieval")
        self.loader = JobRunner(self, synchronous=synchronous, name="model")
        self.pooled_runner = JobRunner(self, synchronous=synchronous, name="pooled")
        self._settle = QTimer(self)
        self._settle.setSingleShot(True)
        self._settle.setInterval(settle_ms)
        self._settle.timeout.connect(lambda: self.refresh(exact=True, preview=False))
        self.runner.stageReady.connect(self._on_stage)
        self.runner.progressed.connect(lambda _rid, d, t, label: self.progressChanged.emit(d, t, label))
        self.runner.errored.connect(self._on_error)
        self.runner.busyChanged.connect(self._on_busy)
        self.loader.stageReady.connect(self._on_model)
        self.loader.errored.connect(self._on_model_error)
        self.pooled_runner.stageReady.connect(self._on_pooled)
        self.pooled_runner.progressed.connect(lambda _rid, d, t, _l: self.pooledProgress.emit(d, t))
        self.pooled_runner.errored.connect(self._on_pooled_error)

    # -- settings ------------------------------------------------------------------------------
    @property
    def settle_ms(self) -> int:
        return self._settle.interval()

    def set_settle_ms(self, ms: int) -> None:
        self._settle.setInterval(ms)

    @property
    def exact_pending(self) -> bool:
        """True while exact figures wait for the settings to rest (background work holds off)."""
        return self._settle.isActive()

    @property
    def workbench(self) -> Workbench:
        """The core orchestration every job of this controller runs (its embedder is set once the
        model has loaded; until then dense requests are answered by BM25). Made when first used:
        its evaluating and retrieving parts are imported after the window shows (issue 31)."""
        if self._workbench is None:
            self._workbench = api.Workbench(cache=self._cache, lazy_model=False)
        return self._workbench

    @property
    def staging(self) -> Staging:
        """The preview → exact policy over the workbench's stores: which index answers each stage,
        and what the figures say about it."""
        if self._staging is None:
            self._staging = api.Staging(self.workbench.chunk_store, self.workbench.index_store)
        return self._staging

    @property
    def cache(self) -> Any:
        if self._cache is None and self.embedder is not None and hasattr(self.embedder, "load"):
            from inspector.core.api import default_cache

            self._cache = default_cache()
            self.workbench.cache = self._cache
        return self._cache

    @property
    def effective_retriever(self) -> str:
        """The retriever that answers now (BM25 stands in for dense and hybrid without vectors)."""
        r = self.result
        return r.retriever if r is not None else ("bm25" if self.embedder is None else self.retriever)

    def set_k(self, k: int) -> None:
        k = max(1, int(k))
        if k != self.k:
            self.k = k
            self.settingsChanged.emit()
            self.refresh(exact=True)

    def set_budget(self, budget: int | None) -> None:
        """Score the gold set at a context budget too (None or 0: off)."""
        budget = int(budget) if budget else None
        if budget != self.budget:
            self.budget = budget
            self.settingsChanged.emit()
            self.refresh(exact=self._settled_exact())

    def set_retriever(self, name: str) -> None:
        if not is_retriever(name):
            raise ValueError(f"unknown retriever {name!r}")
        if name != self.retriever:
            self.retriever = name
            self.settingsChanged.emit()
            self.refresh(exact=True)

    def set_reranker(self, reranker: Any, depth: int = 50) -> None:
        """Rerank the question's hits with `reranker` (None: off), reading the retriever's top `depth`."""
        if reranker is not self.reranker or depth != self.rerank_depth:
            self.reranker, self.rerank_depth = reranker, max(1, int(depth))
            self.settingsChanged.emit()
            if self.question:
                self.refresh(exact=self._settled_exact(), mark_stale=False)

    def set_filters(self, docs: tuple[str, ...] | None, heading_prefix: tuple[str, ...] | None) -> None:
        """Restrict the question's hits to some documents and/or a heading-path prefix (the gold
        set is always scored unfiltered, so its figures stay comparable)."""
        if self._shut_down:
            return
        docs = tuple(docs) if docs else None
        heading_prefix = tuple(h for h in heading_prefix if h) if heading_prefix else None
        if (docs, heading_prefix or None) != (self.filter_docs, self.heading_prefix):
            self.filter_docs, self.heading_prefix = docs, heading_prefix or None
            self.settingsChanged.emit()
            self.refresh(exact=True)

    def ask(self, question: str) -> int:
        """Run a question (exact embeddings are computed if needed, after a quick preview)."""
        question = question.strip()
        if question != self.question:
            self.question = question
            self.questionChanged.emit(question)
        # A new question leaves the gold figures as they are: they are not marked stale.
        return self.refresh(exact=True, mark_stale=False)

    # -- the model -----------------------------------------------------------------------------
    def start_model(self) -> None:
        """Load the embedding model on a worker thread (call once the window is up)."""
        if self.model_state in (MODEL_LOADING, MODEL_READY):
            return
        emb = self._embedder
        if emb is None:
            try:
                from inspector.core.api import default_embedder

                emb = default_embedder()
            except Exception as exc:  # noqa: BLE001  (no model installed: BM25 keeps working)
                self._on_model_error(0, f"the embedding model is not available ({exc})")
                return
        self._embedder = emb
        self._set_model_state(MODEL_LOADING)
        self.loader.submit(load_model_job(emb))

    @property
    def model(self) -> Any:
        """The embedder the controller loads (None: the bundled one, made by `start_model`)."""
        return self._embedder

    def set_model(self, embedder: Any) -> None:
        """Use another embedder (the same model on another device, say): it loads on a worker
        thread while BM25 answers, and every figure is computed again with it."""
        self.loader.cancel()
        self.runner.cancel()
        self._embedder = embedder
        self.embedder = None
        self.workbench.embedder = None
        self.workbench.forget_indexes()
        self.staging.forget()
        self.result = None
        self._set_model_state(MODEL_IDLE)
        self.start_model()
        self.refresh(exact=False)

    def _on_model(self, _rid: int, embedder: Any) -> None:
        if embedder is not self._embedder:
            return  # a model replaced by `set_model` while it loaded
        self.embedder = embedder
        self.workbench.embedder = embedder
        _ = self.cache  # the real model's vectors are persisted
        # torch and the model leave ~400,000 long-lived objects behind; walked once in each younger
        # generation on their way to the oldest (~150 ms each, more with the window's own objects)
        # they would stall the window now and then. Move them to the oldest generation at once (two
        # list splices, no collection, which would itself be the stall); full collections still
        # see them, so nothing is frozen for good (core.runtime.gcpause explains why that leaked).
        from inspector.core.api import promote_survivors

        promote_survivors()
        self._set_model_state(MODEL_READY)
        # First exact figures sooner: nothing is being dragged yet, so embed the chunks exactly
        # now (BM25 answers meanwhile) and build the live-preview pieces after; both at once
        # would share the cores and delay both. A slider move starts the pieces at once.
        if self.result is None or self.result.mode != EXACT:
            self.refresh(exact=True)
        self._build_pooled()

    def _on_model_error(self, _rid: int, message: str) -> None:
        self.model_error = message
        self._set_model_state(MODEL_FAILED)
        self.errored.emit(f"embedding model: {message}")
        self.refresh(exact=False)

    def _set_model_state(self, s: str) -> None:
        if s != self.model_state:
            self.model_state = s
            self.modelStateChanged.emit(s)

    def _fallback_note(self) -> str:
        if self.model_state == MODEL_FAILED:
            return "the embedding model could not be loaded"
        if self.model_state == MODEL_IDLE:
            return "the embedding model is not loaded"
        return "the embedding model is loading"

    # -- pooled vectors ------------------------------------------------------------------------
    def _build_pooled(self, wait_for_exact: bool = True) -> None:
        doc = self.state.document
        if doc is None or self.embedder is None or self.workbench.pooled_vectors(doc) is not None:
            return
        if _billed(self.embedder):  # an endpoint bills every token: the preview would embed the text again
            return
        if self.pooled_building is doc:
            return
        if wait_for_exact and self.runner.busy and self._submitted is not None and self._submitted.exact:
            self._pooled_deferred = True  # after the exact figures (`_on_stage`, `_on_error`)
            return
        self._pooled_deferred = False
        self.pooled_building = doc
        self.pooled_runner.submit(pooled_job(self.workbench, doc))

    def _on_pooled(self, _rid: int, stage: tuple) -> None:
        doc, _pv = stage  # the workbench keeps it
        if self.pooled_building is doc:
            self.pooled_building = None
        self.pooledProgress.emit(0, 0)
        self.pooledReady.emit(doc)
        if doc is not self.state.document:
            return
        # Show the preview now unless exact figures are already shown or being computed.
        if self.result is not None and self.result.mode == EXACT:
            return
        if self.runner.busy and self._submitted is not None and self._submitted.exact:
            return
        self.refresh(exact=False)

    def _on_pooled_error(self, _rid: int, message: str) -> None:
        self.pooled_building = None
        self.pooledProgress.emit(0, 0)
        self.errored.emit(f"live preview: {message}")

    @property
    def pooled_ready(self) -> bool:
        doc = self.state.document
        return doc is not None and self.workbench.pooled_vectors(doc) is not None

    # -- gold set ------------------------------------------------------------------------------
    def load_gold(self, path: str | os.PathLike[str]) -> Any:
        """Read a gold file against the open documents; InputError (file, line, field) on failure,
        and the previous gold set stays."""
        from inspector.core.api import load_gold

        gold = load_gold(path, self.state.documents)  # InputError here keeps the previous gold set
        self.set_gold(gold)
        return gold

    def set_gold(self, gold: Any) -> None:
        """A new gold set (None: none). A pinned baseline stays when the set grew or shrank (a
        question saved from the Reader, one deleted from the file): it is compared on the
        questions both share (`compare.compare_shared`), and `comparison.note()` says how many."""
        self.gold = gold
        self.workbench.set_gold(gold)
        self._filter_gold()
        # A question added to (or edited in) the gold set keeps the baseline: the comparison runs
        # on the questions both reports share (`compare_shared`) and says how many it left out.
        if self.baseline is not None and gold is None:
            self.clear_baseline()
        self.goldChanged.emit(gold)
        self.refresh(exact=self._settled_exact())

    def _filter_gold(self) -> None:
        doc = self.state.document
        if self.gold is None or doc is None:
            self.gold_questions = ()
        else:
            ids = {d.doc_id for d in self.corpus()} or {doc.doc_id}
            self.gold_questions = tuple(q for q in self.gold.questions if q.source is None or q.source in ids)

    def _sync_documents(self) -> None:
        """The workbench covers what retrieval covers: the corpus, or the shown document alone."""
        doc = self.state.document
        self.workbench.set_documents(self.corpus() or ((doc,) if doc is not None else ()))

    def corpus(self) -> tuple[Document, ...]:
        """The documents retrieval covers: every open one when the shown document is among several
        (empty for a single document)."""
        docs, doc = self.state.documents, self.state.document
        return docs if len(docs) > 1 and doc is not None and any(d is doc for d in docs) else ()

    # -- baseline (kept by `baselines`) ------------------------------------------------------------
    @property
    def baseline(self) -> Baseline | None:
        return self.baselines.baseline

    @property
    def comparison(self) -> Any:
        """compare.Comparison of the current report against the baseline, or None."""
        return self.baselines.comparison

    @property
    def paired(self) -> dict[str, Any]:
        """Against the baseline: each metric's paired difference with interval and verdict
        (`uncertainty.PairedDelta` by metric name); empty without a baseline."""
        return self.baselines.paired

    def pin_baseline(self) -> Baseline | None:
        return self.baselines.pin(self.result)

    def clear_baseline(self) -> None:
        self.baselines.clear(self.result)

    def restore_baseline(self, baseline: Baseline | None) -> None:
        """Put a baseline back as it was pinned (Edit ▸ Undo)."""
        self.baselines.restore(baseline, self.result)

    def baseline_results(self) -> tuple | None:
        """The baseline's outcome for each question of the current report, in its order (None for
        a question the baseline never scored); None without a baseline or a report."""
        return self.baselines.results(self.result)

    # -- requests ------------------------------------------------------------------------------
    def _has_work(self) -> bool:
        return bool(self.question) or bool(self.gold_questions)

    def _settled_exact(self) -> bool:
        """Whether a refresh that is not a re-chunk may embed: yes unless the user is dragging."""
        return not self._settle.isActive()

    def request(self, exact: bool, preview: bool = True, exact_note: str = "") -> RetrievalRequest | None:
        r = self._chunks
        doc = self.state.document
        if r is None or doc is None or r.document is not doc:
            return None
        return api.RetrievalRequest(
            document=doc, chunks=r.chunks, chunk_request_id=r.request_id, strategy=r.request.strategy,
            params=dict(r.request.params), with_prefix=r.request.with_prefix, question=self.question,
            k=self.k, retriever=self.retriever, gold=self.gold_questions, exact=exact, preview=preview,
            fallback_note=self._fallback_note(), documents=self.corpus(), filter_docs=self.filter_docs,
            heading_prefix=self.heading_prefix, budget=self.budget, exact_note=exact_note)

    def refresh(self, exact: bool = False, preview: bool = True, mark_stale: bool = True,
                exact_note: str = "") -> int:
        """Recompute hits and report for the current chunks; returns the request id (0: nothing to do).
        `exact`: embed the chunks now if their vectors are not cached; `preview`: answer with the
        cheapest index first (False when only the exact stage is wanted: the preview of these very
        settings is on screen already)."""
        self._settle.stop()
        if self._shut_down:
            return 0
        req = self.request(exact, preview, exact_note)
        if req is None or not self._has_work():
            self._submitted = None
            self.runner.cancel()
            self.progressChanged.emit(0, 0, "")
            if req is not None and not self._has_work() and self.result is not None:
                self.result = None
                self.cleared.emit()
            self._set_stale(False)
            return 0
        self._submitted = req
        if req.gold and (preview or exact_note) and mark_stale:  # exact_note: a re-chunk too
            self._set_stale(True)
        return self.runner.submit(retrieval_job(self.staging, req, self.reranker, self.rerank_depth))

    def chunks_requested(self, _rid: int = 0) -> None:
        """New chunks are on their way (another strategy, document or size): the runner's work for
        the current ones is superseded now, not when the new ones arrive. Embedding the old chunks
        for exact figures would otherwise go on competing with the new chunking (a slow strategy
        such as `semantic` embeds too, for seconds), only to be dropped."""
        self._settle.stop()
        if self.runner.busy:
            self._submitted = None
            self.runner.cancel()
            self.progressChanged.emit(0, 0, "")

    def _on_chunks(self, result: ChunkResult | None) -> None:
        if result is None:
            self._chunks = None
            self._settle.stop()
            self.runner.cancel()
            self.progressChanged.emit(0, 0, "")
            if self.result is not None:
                self.result = None
                self.cleared.emit()
            self._set_stale(bool(self.gold_questions))
            return
        if self._chunks is not None and self._chunks.request_id == result.request_id:
            self._chunks = result  # a later stage of the same chunks (word pieces): same spans
            return
        self._chunks = result
        # Exact at once, without a preview, when the loaded model is predicted to embed these
        # chunks in under the staging's FAST_EXACT_S (small documents on a GPU); the figures say so.
        note = self._fast_exact_note(result)
        if note:
            self.refresh(exact=True, preview=False, exact_note=note)
            return
        # A re-chunk: preview at once; exact once the settings rest (or at once, when cached).
        self.refresh(exact=False)
        if self._pooled_deferred:
            self._build_pooled(wait_for_exact=False)  # the preview needs the pieces now

    def _fast_exact_note(self, result: ChunkResult) -> str:
        """The staging's "exact while dragging (predicted N ms)" for these chunks of the shown
        document alone with a question or gold set to answer, "" otherwise (`Staging.fast_exact_note`)."""
        if self.embedder is None or self.retriever == "bm25" or not self._has_work() or self.corpus():
            return ""
        doc = result.document
        return self.staging.fast_exact_note([doc], {doc.doc_id: result.chunks}, result.request.with_prefix)

    def _on_document(self, doc: Document | None) -> None:
        self._sync_documents()
        self._filter_gold()
        if self.baseline is not None and not self.baselines.covers(doc, self.corpus()):
            self.clear_baseline()
        self.goldChanged.emit(self.gold)
        self._build_pooled()

    def _on_stage(self, _rid: int, res: RetrievalResult) -> None:
        if self._chunks is None or res.request.chunk_request_id != self._chunks.request_id:
            return
        self.result = res
        self._update_disagreement(res)
        self._set_stale(False)
        self.resultReady.emit(res)
        self.baselines.compare(res)
        if not res.more_coming:
            self.progressChanged.emit(0, 0, "")
            if res.exact_due and self.embedder is not None:
                self._settle.start()
            if self._pooled_deferred:
                self._build_pooled(wait_for_exact=False)

    def _update_disagreement(self, res: RetrievalResult) -> None:
        if res.report is None:
            return
        # The chunks are told by the chunking request they came from (both of its stages: spans
        # first, then word pieces), not by a fingerprint of every chunk: hashing 37,000 chunks
        # on the GUI thread at every result was a pause of its own.
        req = res.request
        key = (req.document.sha256, req.chunk_request_id, req.with_prefix, res.retriever, req.k, len(req.gold))
        text = ""
        last = self._pooled_rate
        if res.mode == POOLED:
            self._pooled_rate = (key, res.report.hit_rate)
        elif res.mode == EXACT and last is not None and last[0] == key:
            pooled = last[1]
            exact = res.report.hit_rate
            if abs(exact - pooled) > DISAGREEMENT:
                text = (f"The pooled preview said {pct(pooled, unit='%')}; exact embeddings give "
                        f"{pct(exact, unit='%')}. "
                        "The exact figure is what your pipeline will see.")
        if text != self.disagreement:
            self.disagreement = text
            self.disagreementChanged.emit(text)

    def _on_error(self, _rid: int, message: str) -> None:
        self._set_stale(False)
        self.progressChanged.emit(0, 0, "")
        self.errored.emit(message)
        if self._pooled_deferred:
            self._build_pooled(wait_for_exact=False)

    def _on_busy(self, busy: bool) -> None:
        self.busyChanged.emit(busy)

    def _set_stale(self, stale: bool) -> None:
        if stale != self.stale:
            self.stale = stale
            self.staleChanged.emit(stale)

    # -- lifetime ------------------------------------------------------------------------------
    def shutdown(self, timeout_ms: int = 30_000) -> None:
        self._shut_down = True
        self._settle.stop()
        for r in (self.runner, self.pooled_runner, self.loader):
            r.cancel()
        for r in (self.runner, self.pooled_runner, self.loader):
            r.shutdown(timeout_ms)


def _billed(embedder: Any) -> bool:
    """An HTTP model (Settings ▸ Embedding Model…, openai:): its live-preview pieces would send the
    whole document to the endpoint once more, so previews are BM25's and the exact figures its own."""
    info = getattr(embedder, "info", None)
    return callable(info) and info().get("backend") == "http"


__all__ = ["RetrievalController", "Baseline", "ASK_K", "ASK_BUDGET", "ASK_RETRIEVER", "SETTLE_MS", "RETRIEVERS",
           "MODEL_IDLE", "MODEL_LOADING", "MODEL_READY", "MODEL_FAILED", "EXACT", "POOLED", "FALLBACK"]
