"""One background runner for chunking; the latest request wins.

Shaped after napari's `_LayerSlicer`: a single worker thread, increasing request ids, results of
any request but the latest dropped on arrival, and a synchronous mode for tests. Work is split into
stages (chunks, then the embedder's word pieces) and checks between stages whether it has been
superseded, so a slider dragged across its range never queues up stale work. Exceptions are
emitted as `errored`, never swallowed; widgets are touched only on the GUI thread, because the
worker only emits signals of a relay object that lives there.
"""

from __future__ import annotations

import contextlib
import logging
import time
import traceback
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal, Slot

from inspector.core.chunk import Chunk
from inspector.core.document import Document
from inspector.core.offsets import LineIndex
from inspector.core.segments import SpanIndex
from inspector.core.stats import ChunkStats

log = logging.getLogger(__name__)

#: Runners alive in this process (the test suite checks that none leaves a thread running).
LIVE_RUNNERS: "weakref.WeakSet[ChunkRunner]" = weakref.WeakSet()

#: Word pieces are measured in batches of this many chunks, checking for cancellation in between.
ANNOTATE_BATCH = 100


class Cancelled(Exception):
    """Raised inside a job when a newer request has superseded it."""


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
class Heading:
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
    headings: tuple[Heading, ...]
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

    @property
    def document(self) -> Document:
        return self.request.document

    def chunk(self, chunk_id: int) -> Chunk | None:
        return self.by_id.get(chunk_id)


def compute_chunks(request_id: int, request: ChunkRequest,
                   cancelled: Callable[[], bool]) -> Iterator[ChunkResult]:
    """The job: yields the chunks stage, then the word-piece stage. Pure core calls only."""
    from inspector.core.chunk import get_strategy
    from inspector.core.stats import chunk_stats
    from inspector.core.structure import structure_of

    t0 = time.perf_counter()
    doc = request.document
    strategy = get_strategy(request.strategy)
    with _cancel_scope(cancelled):
        chunks = strategy(doc, request.params)
    if cancelled():
        raise Cancelled
    painted = [c for c in chunks if c.role != "parent"]
    parents = [c for c in chunks if c.role == "parent"]
    index = SpanIndex([(c.start, c.end) for c in painted], [c.id for c in painted])
    parent_index = SpanIndex([(c.start, c.end) for c in parents], [c.id for c in parents])
    headings = tuple(Heading(h.start, h.end, h.level) for h in structure_of(doc).headings)
    by_id = {c.id: c for c in chunks}
    lines = _line_index(doc)
    first = ChunkResult(request_id, request, chunks, index, parent_index, chunk_stats(doc, chunks), headings,
                        complete=False, seconds=time.perf_counter() - t0, line_count=lines.line_count,
                        start_lines=tuple(lines.line_of_array(index.starts).tolist()),
                        parent_lines=tuple(lines.line_of_array(parent_index.starts).tolist()), by_id=by_id)
    yield first
    try:
        from inspector.core.wordpieces import annotate
    except ImportError:  # word pieces unavailable: the first stage is all there is
        yield _replace_complete(first, chunks, first.stats, time.perf_counter() - t0)
        return
    annotated: list[Chunk] = []
    for k in range(0, len(chunks), ANNOTATE_BATCH):
        if cancelled():
            raise Cancelled
        annotated.extend(annotate(doc, chunks[k:k + ANNOTATE_BATCH], with_prefix=request.with_prefix))
    done = tuple(annotated)
    yield _replace_complete(first, done, chunk_stats(doc, done, document_tokens=first.stats.document_tokens),
                            time.perf_counter() - t0)


def _cancel_scope(cancelled: Callable[[], bool]):
    """Lets long core work inside a strategy (the semantic strategy's embedding) stop early, where
    the core offers a cancellation scope; otherwise the strategy runs to the end of its stage."""
    try:
        from inspector.core.embedding import cancel_scope  # type: ignore[attr-defined]
    except ImportError:
        return contextlib.nullcontext()
    return cancel_scope(cancelled)


def _is_core_cancel(exc: BaseException) -> bool:
    try:
        from inspector.core.embedding import Cancelled as CoreCancelled
    except ImportError:
        return False
    return isinstance(exc, CoreCancelled)


def _replace_complete(first: ChunkResult, chunks: tuple[Chunk, ...], stats: ChunkStats,
                      seconds: float) -> ChunkResult:
    return ChunkResult(first.request_id, first.request, chunks, first.index, first.parents, stats,
                       first.headings, complete=True, seconds=seconds, line_count=first.line_count,
                       start_lines=first.start_lines, parent_lines=first.parent_lines,
                       by_id={c.id: c for c in chunks})


_LINES: dict[str, LineIndex] = {}


def _line_index(doc: Document) -> LineIndex:
    hit = _LINES.get(doc.sha256)
    if hit is None:
        if len(_LINES) > 8:
            _LINES.clear()
        hit = _LINES[doc.sha256] = LineIndex(doc.text)
    return hit


def describe_error(exc: BaseException) -> str:
    """One line for the status bar."""
    one_line = getattr(exc, "one_line", None)
    if callable(one_line):
        return str(one_line())
    if isinstance(exc, ValueError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


class _Relay(QObject):
    """Lives on the GUI thread; the worker emits through it, so slots run on the GUI thread."""

    stage = Signal(int, object)
    failed = Signal(int, str, str)
    """(request id, one line, details: the traceback of an unexpected exception, else '')."""
    finished = Signal(int)


def error_details(exc: BaseException) -> str:
    """The traceback behind an error, for the user's Details… (none for a plain bad parameter)."""
    if isinstance(exc, ValueError) and exc.__cause__ is None:
        return ""
    return "".join(traceback.format_exception(exc))


class _Job(QRunnable):
    def __init__(self, request_id: int, request: ChunkRequest, job: Callable, relay: _Relay,
                 is_current: Callable[[int], bool]) -> None:
        super().__init__()
        self.request_id = request_id
        self.request = request
        self.job = job
        self.relay = relay
        self.is_current = is_current

    def run(self) -> None:
        rid = self.request_id
        try:
            if self.is_current(rid):
                for result in self.job(rid, self.request, lambda: not self.is_current(rid)):
                    if not self.is_current(rid):
                        break
                    self.relay.stage.emit(rid, result)
        except Cancelled:
            pass
        except Exception as exc:  # noqa: BLE001  (reported to the user, with a traceback in the log)
            if _is_core_cancel(exc):
                return
            if not isinstance(exc, ValueError):
                log.exception("chunking failed")
            self.relay.failed.emit(rid, describe_error(exc), error_details(exc))
        finally:
            self.relay.finished.emit(rid)


class ChunkRunner(QObject):
    """Runs chunking requests one at a time off the GUI thread; only the latest one reports."""

    resultReady = Signal(object)
    """A `ChunkResult` stage of the latest request."""
    errored = Signal(int, str)
    """(request id, one-line message) when the latest request failed."""
    busyChanged = Signal(bool)

    def __init__(self, parent: QObject | None = None, *, synchronous: bool = False,
                 job: Callable[[int, ChunkRequest, Callable[[], bool]], Iterator[ChunkResult]] = compute_chunks) -> None:
        super().__init__(parent)
        self.synchronous = synchronous
        self._job = job
        self._latest = 0
        self._running = 0  # jobs started and not yet finished (GUI-thread bookkeeping)
        self._busy = False
        self._closed = False
        self.last_error_details = ""
        """Details (a traceback) of the latest request's failure, '' when there are none."""
        self._relay = _Relay(self)
        self._relay.stage.connect(self._on_stage)
        self._relay.failed.connect(self._on_failed)
        self._relay.finished.connect(self._on_finished)
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)
        LIVE_RUNNERS.add(self)

    # -- requests --------------------------------------------------------------------------
    @property
    def latest_id(self) -> int:
        return self._latest

    @property
    def busy(self) -> bool:
        return self._busy

    def is_current(self, request_id: int) -> bool:
        # Read from the worker thread; an int read is atomic under the GIL.
        return request_id == self._latest and not self._closed

    def submit(self, request: ChunkRequest) -> int:
        """Start `request`, superseding any earlier one; returns its id."""
        if self._closed:
            raise RuntimeError("runner is shut down")
        self._latest += 1
        rid = self._latest
        job = _Job(rid, request, self._job, self._relay, self.is_current)
        self._running += 1
        self._set_busy(True)
        if self.synchronous:
            job.run()
        else:
            self._pool.start(job)
        return rid

    def cancel(self) -> None:
        """Drop the current request: it stops at its next stage and reports nothing."""
        self._latest += 1
        self._set_busy(False)

    def shutdown(self, timeout_ms: int = 10_000) -> bool:
        """Cancel and wait for the worker thread to go idle; True if it did in time."""
        self.cancel()
        self._closed = True
        ok = self._pool.waitForDone(timeout_ms)
        return bool(ok)

    def active_threads(self) -> int:
        return self._pool.activeThreadCount()

    # -- results (GUI thread) ------------------------------------------------------------
    @Slot(int, object)
    def _on_stage(self, rid: int, result: ChunkResult) -> None:
        if rid != self._latest or self._closed:
            return  # stale: a newer request is on its way
        if result.complete:
            self._set_busy(False)
        self.resultReady.emit(result)

    @Slot(int, str, str)
    def _on_failed(self, rid: int, message: str, details: str = "") -> None:
        if rid != self._latest or self._closed:
            return
        self.last_error_details = details
        self._set_busy(False)
        self.errored.emit(rid, message)

    @Slot(int)
    def _on_finished(self, rid: int) -> None:
        self._running = max(0, self._running - 1)
        if rid == self._latest and self._busy:
            self._set_busy(False)

    def _set_busy(self, busy: bool) -> None:
        if busy != self._busy:
            self._busy = busy
            self.busyChanged.emit(busy)
