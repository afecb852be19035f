"""The exact hit-rate trace along the size slider, scored in the background at low priority.

The gold panel shows one figure, and while the user drags it is the pooled preview. The trace
scores the notches around the current size with the real retriever (exact embeddings, or BM25),
nearest first, so the user sees the curve, not a point. What to score and the scores themselves
are plain data in the core (`inspector.core.viewmodel.trace`); scoring one position is
`Workbench.evaluate`, on the retrieval controller's own workbench, so it shares its embedder and
the persistent embedding cache: chunk texts the trace embeds are free for the main figures later
(a release on a traced notch finds its exact index cached), and the other way round.

It must never delay the main figures, so it runs on its own latest-wins runner (`JobRunner`) and
holds back while anything the user is waiting for runs: re-chunking (or its debounce), a drag,
the retrieval runner (preview or exact), the exact stage's settle timer, the model loading or the
live-preview vectors being built. A hold is checked before each position and between embedding
batches (the core's `cancel_scope`): a position interrupted that way is scored again once the
main work is done, from the vectors it had already cached. The worker thread also lowers its OS
priority where it can. A change of document, gold set, strategy, its other parameters, k,
retriever or the model supersedes the running job; scores stay in a cache keyed by scope and
configuration, so moving back finds them again.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Hashable, Sequence
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QTimer, Signal

from inspector.core import api
from inspector.core.api import Cancelled, cancel_scope
from inspector.core.viewmodel.scale import slider_scale
from inspector.core.viewmodel.trace import (
    RADIUS,
    Trace,
    TraceCache,
    TracePlan,
    TraceScore,
    plan_trace,
    snapshot,
    trace_scope,
)
from inspector.qt.controllers.retrieval import EXACT, MODEL_FAILED, POOLED, RetrievalController
from inspector.qt.controllers.retrieval import _billed as billed
from inspector.qt.controllers.state import InspectorState
from inspector.qt.runner import Job, JobRunner, Progress

if TYPE_CHECKING:
    from inspector.core.api import Document, EvalConfig

log = logging.getLogger(__name__)

#: Rest after a parameter change before the trace is planned again (a drag re-plans at its pauses).
PLAN_MS = 150
#: How often the hold is re-read on the GUI thread while a trace job is running.
HOLD_POLL_MS = 100
#: How long the worker sleeps between looks at the hold.
HOLD_SLEEP_S = 0.04
#: Why an HTTP model gets no exact trace: every size around the current one would send its chunks
#: to the endpoint, a bill the user never asked for.
BILLED_NOTE = "No exact trace with an HTTP model: each size would be billed (BM25 traces for free)"
#: Niceness added to the trace worker thread (Linux: per thread), so the OS prefers every other.
NICE = 10


def score_config(workbench: Any, config: EvalConfig, docs: Sequence[Document],
                 questions: Sequence[Any]) -> TraceScore:
    """One position's score, computed as the window's main figures are (`Workbench.stages`): in a
    corpus, a document the strategy cannot chunk is left out and so are its questions."""
    docs = list(docs)
    multi = len(docs) > 1
    chunks = workbench.chunks_for(config, docs, lenient=multi)  # marked with its embedding view
    kept = [d for d in docs if d.doc_id in chunks]
    qs = tuple(q for q in questions if q.source in (None, *chunks)) if multi else tuple(questions)
    report = workbench.evaluate(config, chunks_by_doc=chunks, docs=kept, questions=qs)
    return TraceScore(report.hit_rate, report.hits, len(report.questions), report.context_tokens_mean,
                      _truncated(config, chunks, kept))


def _truncated(config: EvalConfig, chunks: Any, docs: Sequence[Document]) -> float | None:
    """Share of the embedded chunks the embedder cuts, for retrievers that read vectors (None for
    BM25, which reads the whole span): measured in the embedder's word pieces (`annotate`)."""
    if config.retriever == "bm25":
        return None
    counted = []
    for doc in docs:
        cs = [c for c in chunks.get(doc.doc_id, ()) if c.role != "parent"]
        if cs and any(c.embed_tokens is None for c in cs):
            cs = list(api.annotate(doc, cs, with_prefix=bool(config.with_prefix)))
        counted.extend(cs)
    if not counted:
        return None
    return sum("truncated_by_embedder" in c.flags for c in counted) / len(counted)


def _lower_priority() -> None:
    """Best effort: on Linux a thread id given to setpriority addresses that thread alone."""
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + NICE))
    except (AttributeError, OSError):
        pass


def trace_job(workbench: Any, todo: Sequence[tuple[Any, EvalConfig]], docs: Sequence[Document],
              questions: Sequence[Any], scope: Hashable, cache: TraceCache,
              hold: Callable[[], bool], *, nice: bool = True) -> Job:
    """Score `todo` in order, yielding (scope, value, config, score) per position; waits while
    `hold()` and starts a position again when `hold()` interrupted it. A position the cache
    gained meanwhile (the main figures computed it) is skipped."""

    def job(cancelled: Callable[[], bool], progress: Progress):
        if nice:
            _lower_priority()
        for value, config in todo:
            while cache.get(scope, config) is None:
                while hold() and not cancelled():
                    time.sleep(HOLD_SLEEP_S)
                if cancelled():
                    return
                try:
                    with cancel_scope(lambda: cancelled() or hold()):
                        score = score_config(workbench, config, docs, questions)
                except Cancelled:
                    if cancelled():
                        return
                    continue  # held: wait, then again (embeddings made so far are cached)
                yield scope, value, config, score
                break

    return job


class TraceController(QObject):
    """Keeps `trace` (a core `Trace`) for the size slider of the current strategy."""

    traceChanged = Signal(object)
    """Trace | None (None: nothing to trace: no document, no gold set, no size parameter)."""

    def __init__(self, state: InspectorState, retrieval: RetrievalController, *, synchronous: bool = False,
                 plan_ms: int = PLAN_MS, radius: int = RADIUS, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.retrieval = retrieval
        self.radius = radius
        self.synchronous = synchronous
        self.cache = TraceCache()
        self.trace: Trace | None = None
        self.plan: TracePlan | None = None
        self._scope: Hashable | None = None
        self._submitted: tuple | None = None
        self._hold = False
        self._preview = False
        self.runner = JobRunner(self, synchronous=synchronous, name="trace")
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(plan_ms)
        self._timer.timeout.connect(self.replan)
        self._poll = QTimer(self)
        self._poll.setInterval(HOLD_POLL_MS)
        self._poll.timeout.connect(self._refresh_hold)
        self.runner.stageReady.connect(self._on_point)
        self.runner.errored.connect(self._on_error)
        self.runner.busyChanged.connect(self._on_busy)
        state.paramsChanged.connect(lambda _p: self._timer.start())
        for sig in (state.strategyChanged, state.documentChanged, state.documentsChanged, state.withPrefixChanged,
                    state.embedViewChanged,
                    retrieval.goldChanged, retrieval.settingsChanged, retrieval.modelStateChanged):
            sig.connect(self.invalidate)
        retrieval.resultReady.connect(self._on_result)
        for sig in (state.busyChanged, state.draggingChanged, retrieval.busyChanged):
            sig.connect(self._refresh_hold)

    # -- what the widget reads -------------------------------------------------------------------
    @property
    def preview_shown(self) -> bool:
        """True while the main figures are the pooled preview (the trace is exact regardless)."""
        r = self.retrieval.result
        return r is not None and r.mode == POOLED

    @property
    def held(self) -> bool:
        """True while the trace waits for the main work."""
        return self._hold

    # -- planning --------------------------------------------------------------------------------
    def invalidate(self, *_args: Any) -> None:
        """The context changed (document, gold set, strategy, prefix, k, retriever, model): stop the
        running job now and plan for the new context."""
        self.runner.cancel()
        self._submitted = None
        self.replan()

    def _docs(self) -> tuple[Document, ...]:
        """The documents retrieval covers, the shown one first (as `Workbench.stages` orders them)."""
        doc = self.state.document
        if doc is None:
            return ()
        return (doc, *(d for d in self.retrieval.corpus() if d.doc_id != doc.doc_id))

    def _model_id(self, retriever: str) -> str | None:
        """"" for BM25, the embedder's id for dense and hybrid, None while there is no model."""
        if retriever == "bm25":
            return ""
        emb = self.retrieval.embedder
        return None if emb is None else str(getattr(emb, "model_id", type(emb).__name__))

    def replan(self) -> None:
        """Plan the positions around the current size, submit those not scored yet, emit the trace."""
        from inspector.core.api import get_strategy

        self._timer.stop()
        r = self.retrieval
        docs, questions = self._docs(), r.gold_questions
        try:
            strategy = get_strategy(self.state.strategy)
        except ValueError:
            strategy = None
        size = strategy.param_for_role("size") if strategy is not None else None
        if not docs or not questions or strategy is None or size is None:
            self._stop(None)
            return
        kind = "bm25" if r.retriever == "bm25" else "exact"
        model_id = self._model_id(r.retriever)
        if model_id is None:
            self._stop(Trace(size.name, (), kind, r.k, status=self._waiting_note()))
            return
        if kind == "exact" and billed(r.embedder):  # Settings ▸ Embedding Model…, openai:
            self._stop(Trace(size.name, (), kind, r.k, status=BILLED_NOTE))
            return
        plan = plan_trace(strategy, self.state.params, slider_scale(size), k=r.k, retriever=r.retriever,
                          with_prefix=self.state.with_prefix, radius=self.radius, embed_view=self.state.embed_view)
        if plan is None:
            self._stop(None)
            return
        scope = trace_scope(docs, questions, model_id)
        self.plan, self._scope = plan, scope
        todo = tuple((v, c) for v, c in plan.todo if self.cache.get(scope, c) is None)
        key = (scope, tuple(c for _v, c in todo))
        if not todo:
            self.runner.cancel()
            self._submitted = None
        elif key != self._submitted or not self.runner.busy:
            self._submitted = key
            self._refresh_hold()
            hold = (lambda: False) if self.synchronous else self.held_now
            self.runner.submit(trace_job(r.workbench, todo, docs, questions, scope, self.cache, hold,
                                         nice=not self.synchronous))
        self._emit()

    def held_now(self) -> bool:
        """The hold as the worker reads it (a plain attribute the GUI thread keeps current)."""
        return self._hold

    def _waiting_note(self) -> str:
        if self.retrieval.model_state == MODEL_FAILED:
            return "No exact trace: the embedding model could not be loaded (choose BM25 to trace it)"
        return "The exact trace starts once the embedding model has loaded"

    def _stop(self, trace: Trace | None) -> None:
        self.runner.cancel()
        self._submitted = None
        self.plan, self._scope = None, None
        self._set_trace(trace)

    def _emit(self) -> None:
        if self.plan is None or self._scope is None:
            self._set_trace(None)
            return
        kind = "bm25" if self.retrieval.retriever == "bm25" else "exact"
        self._set_trace(snapshot(self.plan, self.cache, self._scope, kind=kind, k=self.retrieval.k))

    def _set_trace(self, trace: Trace | None) -> None:
        self.trace = trace
        self.traceChanged.emit(trace)

    # -- results ---------------------------------------------------------------------------------
    def _on_point(self, _rid: int, stage: tuple) -> None:
        scope, _value, config, score = stage
        self.cache.put(scope, config, score)
        if scope == self._scope:
            self._emit()

    def _on_result(self, res: Any) -> None:
        """An exact main figure is a trace point too: kept, so the trace never scores it again."""
        fed = False
        if res.mode == EXACT and res.report is not None and res.config is not None and res.request.gold:
            req = res.request
            docs = (req.document, *(d for d in req.documents if d.doc_id != req.document.doc_id))
            model_id = self._model_id(res.retriever)
            if model_id is not None:
                scope = trace_scope(docs, req.gold, model_id)
                self.cache.put(scope, res.config, TraceScore(res.report.hit_rate, res.report.hits,
                                                             len(res.report.questions),
                                                             res.report.context_tokens_mean))
                fed = scope == self._scope
        preview = self.preview_shown
        if fed or preview != self._preview:  # the caption says whether the main figure is a preview
            self._preview = preview
            if self.plan is not None:
                self._emit()
            else:
                self.traceChanged.emit(self.trace)

    def _on_error(self, _rid: int, message: str) -> None:
        log.warning("hit-rate trace: %s", message)
        if self.trace is not None:
            t = self.trace
            self._set_trace(Trace(t.param, t.points, t.kind, t.k, status=f"Trace stopped: {message}"))

    # -- holding back ----------------------------------------------------------------------------
    def _refresh_hold(self, *_args: Any) -> None:
        r = self.retrieval
        self._hold = bool(self.state.busy or self.state.dragging or r.runner.busy or r.exact_pending
                          or r.pooled_building is not None or r.loader.busy)

    def _on_busy(self, busy: bool) -> None:
        if busy and not self.synchronous:
            self._poll.start()
        else:
            self._poll.stop()

    def shutdown(self, timeout_ms: int = 30_000) -> None:
        self._timer.stop()
        self._poll.stop()
        self.runner.shutdown(timeout_ms)


__all__ = ["TraceController", "trace_job", "score_config", "PLAN_MS"]
