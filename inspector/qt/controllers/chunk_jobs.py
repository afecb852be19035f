"""Chunking in the background: the job (`compute_chunks`) and its runner (`ChunkRunner`).

The job is split into stages (chunks, then the embedder's word pieces) and checks between stages
whether it has been superseded, so a slider dragged across its range never queues up stale work.
It runs on the shared latest-wins runner (`inspector.qt.runner`), which drops stale results,
reports exceptions and keeps widgets on the GUI thread.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping

import numpy as np
from PySide6.QtCore import QObject, Signal, Slot

from inspector.core.chunking.chunk import Chunk
from inspector.core.chunking.stats import ChunkStats
from inspector.core.documents.document import Document
from inspector.core.runtime.cancel import (
    Cancelled,  # a superseded job stops with the core's own exception
)
from inspector.core.runtime.gcpause import paused_gc
from inspector.core.runtime.lru import SizedLRU
from inspector.core.viewmodel.offsets import LineIndex
from inspector.core.viewmodel.segments import SpanIndex
from inspector.qt.runner import JobRunner

log = logging.getLogger(__name__)


#: Word pieces are measured in batches of this many chunks, checking for cancellation in between.
ANNOTATE_BATCH = 100
#: Documents at least this long are chunked in the helper process when the window has one
#: (`inspector.core.runtime.offload`). Not only big ones: a 40 KB page with an overlap near the size makes
#: thousands of chunks, and measuring their word pieces on a thread kept the GUI thread waiting
#: for the GIL (the soak's watchdog found it there). A round trip costs a few milliseconds.
HELPER_FROM_CHARS = 16_000


@dataclass(frozen=True, slots=True)
class ChunkRequest:
    """What to chunk and how."""

    document: Document
    strategy: str
    params: Mapping[str, Any]
    """Parameters as the user set them (validated by the strategy in the worker)."""
    with_prefix: bool = True
    """Measure word pieces of prefix + span (True) or of the span alone."""


@dataclass(frozen=True, slots=True)
class HeadingMark:
    """A heading line to emphasize in the view."""

    start: int
    end: int
    level: int


@dataclass(frozen=True, slots=True)
class ChunkResult:
    """One stage of a finished request. Everything is computed on the worker thread."""

    request_id: int
    request: ChunkRequest
    chunks: tuple[Chunk, ...]
    """The strategy's output (annotated with word pieces once `complete`)."""
    index: SpanIndex
    """Spans of the chunks painted on the text (all but parents), for bisection and hit tests."""
    parents: SpanIndex
    """Spans of parent chunks (`parent_child`), shown in the gutter only."""
    stats: ChunkStats
    headings: tuple[HeadingMark, ...]
    complete: bool
    """False for the first stage (no word pieces yet), True once the embedder counts are in."""
    seconds: float = 0.0
    """Worker time spent on this request so far."""
    line_count: int = 1
    """Lines ("\\n"-separated) in the document."""
    start_lines: tuple[int, ...] = ()
    """Line of each painted chunk's start, in `index` (start) order: the overview strip's marks."""
    parent_lines: tuple[int, ...] = ()
    by_id: Mapping[int, Chunk] = field(default_factory=dict, compare=False)
    ids: np.ndarray | None = field(default=None, compare=False)
    """Id of each chunk of `chunks`, in order (int64), made on the worker: the chunk table needs it
    and a Python pass over 30,000 chunks on the GUI thread was a pause of its own."""

    @property
    def document(self) -> Document:
        return self.request.document

    def chunk(self, chunk_id: int) -> Chunk | None:
        return self.by_id.get(chunk_id)


def compute_chunks(request_id: int, request: ChunkRequest,
                   cancelled: Callable[[], bool]) -> Iterator[ChunkResult]:
    """The job: yields the chunks stage, then the word-piece stage. Pure core calls only; a large
    document is chunked in the helper process (`_in_helper`)."""
    from inspector.core.chunking.helper_jobs import can_run
    from inspector.core.runtime import offload

    if offload.default().wanted(len(request.document.text), HELPER_FROM_CHARS) and can_run(request.strategy):
        yield from _in_helper(request_id, request, cancelled)
        return
    from inspector.core.chunking.registry import get_strategy
    from inspector.core.chunking.stats import chunk_stats
    from inspector.core.text.structure import structure_of

    t0 = time.perf_counter()
    doc = request.document
    strategy = get_strategy(request.strategy)
    # Tens of thousands of chunks, segments and marks, all acyclic: no full garbage collection
    # (which holds the GIL for as long as it walks every object) while they are made.
    with paused_gc():
        chunks = strategy(doc, request.params)  # inside the runner's cancel_scope
        if cancelled():
            raise Cancelled
        headings = tuple(HeadingMark(h.start, h.end, h.level) for h in structure_of(doc).headings)
        first = _first_stage(request_id, request, chunks, chunk_stats(doc, chunks), headings, t0)
    yield first
    try:
        from inspector.core.chunking.annotate import annotate
    except ImportError:  # word pieces unavailable: the first stage is all there is
        yield _replace_complete(first, chunks, first.stats, time.perf_counter() - t0)
        return
    annotated: list[Chunk] = []
    with paused_gc():
        for k in range(0, len(chunks), ANNOTATE_BATCH):
            if cancelled():
                raise Cancelled
            annotated.extend(annotate(doc, chunks[k:k + ANNOTATE_BATCH], with_prefix=request.with_prefix))
        done = tuple(annotated)
        complete = _replace_complete(first, done, chunk_stats(doc, done, document_tokens=first.stats.document_tokens),
                                     time.perf_counter() - t0)
    yield complete


def _first_stage(request_id: int, request: ChunkRequest, chunks: tuple[Chunk, ...], stats: ChunkStats,
                 headings: tuple[HeadingMark, ...], t0: float) -> ChunkResult:
    """Stage one's result: the chunks with what the view needs to paint them."""
    doc = request.document
    painted = [c for c in chunks if c.role != "parent"]
    parents = [c for c in chunks if c.role == "parent"]
    index = SpanIndex([(c.start, c.end) for c in painted], [c.id for c in painted])
    parent_index = SpanIndex([(c.start, c.end) for c in parents], [c.id for c in parents])
    by_id = {c.id: c for c in chunks}
    ids = np.fromiter((c.id for c in chunks), dtype=np.int64, count=len(chunks))
    lines = _line_index(doc)
    return ChunkResult(request_id, request, chunks, index, parent_index, stats, headings,
                       complete=False, seconds=time.perf_counter() - t0, line_count=lines.line_count,
                       start_lines=tuple(lines.line_of_array(index.starts).tolist()),
                       parent_lines=tuple(lines.line_of_array(parent_index.starts).tolist()), by_id=by_id,
                       ids=ids)


def _in_helper(request_id: int, request: ChunkRequest, cancelled: Callable[[], bool]) -> Iterator[ChunkResult]:
    """`compute_chunks` for a large document: both stages computed in the helper process, which
    answers chunks as columns; this thread only unpacks them and indexes their spans (a plain
    Python loop, which the GUI thread can interrupt). The GIL-heavy part (the strategy, tokens,
    word pieces) never runs in the window's process."""
    from inspector.core.chunking import helper_jobs
    from inspector.core.runtime import offload
    from inspector.core.text.wordpieces import model_override

    t0 = time.perf_counter()
    helper = offload.default()
    doc = request.document
    key = helper_jobs.doc_key(doc)
    model = model_override()
    model_arg = str(model) if model is not None else None

    def call(fn: Callable[..., helper_jobs.Stage], *args: Any) -> helper_jobs.Stage:
        try:
            return helper.call(fn, key, None, *args)
        except helper_jobs.NeedDocument:
            with helper_jobs.shipped(doc) as sent:
                return helper.call(fn, key, sent, *args)

    params = dict(request.params)
    stage = call(helper_jobs.chunk_stage, request.strategy, params, model_arg)
    if cancelled():
        raise Cancelled
    with paused_gc():
        chunks = stage.chunks.unpack()
        headings = tuple(HeadingMark(s, e, level) for s, e, level in stage.headings)
        first = _first_stage(request_id, request, chunks, stage.stats, headings, t0)
    yield first
    stage = call(helper_jobs.annotate_stage, request.strategy, params, model_arg, request.with_prefix,
                 first.stats.document_tokens)
    if cancelled():
        raise Cancelled
    with paused_gc():
        complete = _replace_complete(first, stage.chunks.unpack(), stage.stats, time.perf_counter() - t0)
    yield complete


def _replace_complete(first: ChunkResult, chunks: tuple[Chunk, ...], stats: ChunkStats,
                      seconds: float) -> ChunkResult:
    return ChunkResult(first.request_id, first.request, chunks, first.index, first.parents, stats,
                       first.headings, complete=True, seconds=seconds, line_count=first.line_count,
                       start_lines=first.start_lines, parent_lines=first.parent_lines,
                       by_id={c.id: c for c in chunks}, ids=first.ids)


#: Line indexes of at most 8 documents (worker threads build them; the core's locked LRU).
_LINES: SizedLRU[LineIndex] = SizedLRU(8, 64_000_000)


def _line_index(doc: Document) -> LineIndex:
    return _LINES.get_or_make(doc.sha256, lambda: LineIndex(doc.text), len(doc.text))


class ChunkRunner(JobRunner):
    """Runs chunking requests (`compute_chunks`) on the shared latest-wins runner; stages of the
    latest request arrive as `resultReady`, and the runner is idle once the complete stage is in."""

    resultReady = Signal(object)
    """A `ChunkResult` stage of the latest request."""

    def __init__(self, parent: QObject | None = None, *, synchronous: bool = False,
                 job: Callable[[int, ChunkRequest, Callable[[], bool]], Iterator[ChunkResult]] = compute_chunks
                 ) -> None:
        super().__init__(parent, synchronous=synchronous, name="chunks")
        self._chunk_job = job
        self.stageReady.connect(self._on_chunk_stage)

    def submit(self, request: ChunkRequest) -> int:  # type: ignore[override]
        """Start `request`, superseding any earlier one; returns its id."""
        rid = self.latest_id + 1  # the id JobRunner.submit is about to give it
        return super().submit(lambda cancelled, _progress: self._chunk_job(rid, request, cancelled))

    def shutdown(self, timeout_ms: int = 10_000) -> bool:
        return super().shutdown(timeout_ms)

    @Slot(int, object)
    def _on_chunk_stage(self, _rid: int, result: ChunkResult) -> None:
        if result.complete:
            self._set_busy(False)
        self.resultReady.emit(result)
