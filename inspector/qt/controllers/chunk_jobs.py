"""Chunking in the background: the job (`compute_chunks`) and its runner (`ChunkRunner`).

The job is the core chunk store's staged chunking (chunks, then the embedder's word pieces; a large
document in the helper process), which checks between stages whether it has been superseded, so a
slider dragged across its range never queues up stale work; this module shapes each stage into
what the view paints (span indexes, line numbers). It runs on the shared latest-wins runner
(`inspector.qt.runner`), which drops stale results, reports exceptions and keeps widgets on the GUI
thread.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal, Slot

# The core's chunking (the chunkers, the chunk store, numpy) is imported by the job, on the
# runner's thread, when the first document is chunked: not before the window shows (issue 31).
from inspector.core import api
from inspector.core.api import SizedLRU
from inspector.core.viewmodel.segments import SpanIndex
from inspector.qt.runner import JobRunner

if TYPE_CHECKING:
    import numpy as np

    from inspector.core.api import Chunk, ChunkStage, ChunkStats, ChunkStore, Document, EmbedView
    from inspector.core.viewmodel.offsets import LineIndex

log = logging.getLogger(__name__)


#: The window's chunking goes through the core's chunk store (`ChunkStore.stages`: where a
#: document is chunked, in this process or the helper, and how its word pieces are measured). Its
#: stages remember nothing: the window holds the chunks it shows, and the helper process keeps
#: the large documents it was sent.
_CHUNK_STORE: list[ChunkStore] = []


def _chunk_store() -> ChunkStore:
    """The window's chunk store, made by the first job (list.append is atomic: two jobs at once
    would at worst each make one, and both are stateless)."""
    if not _CHUNK_STORE:
        _CHUNK_STORE.append(api.ChunkStore())
    return _CHUNK_STORE[0]


@dataclass(frozen=True, slots=True)
class ChunkRequest:
    """What to chunk and how."""

    document: Document
    strategy: str
    params: Mapping[str, Any]
    """Parameters as the user set them (validated by the strategy in the worker)."""
    with_prefix: bool = True
    """Measure word pieces of prefix + span (True) or of the span alone."""
    embed_view: EmbedView = "raw"
    """The embedding view the chunks are marked with (`with_view`): their `embedded_text`, word
    pieces and truncation are those of what the model is sent."""


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
    """The job: the chunk store's two stages (`ChunkStore.stages`: the chunks, then their word
    pieces; a large document in the helper process), each shaped into what the view paints
    (`_first_stage`, `_replace_complete`) inside the store's pause of the garbage collector."""
    t0 = time.perf_counter()

    def shape(stage: ChunkStage, first: ChunkResult | None) -> ChunkResult:
        if first is None:
            headings = tuple(HeadingMark(s, e, level) for s, e, level in stage.headings)
            return _first_stage(request_id, request, stage.chunks, stage.stats, headings, t0)
        return _replace_complete(first, stage.chunks, stage.stats, time.perf_counter() - t0)

    yield from _chunk_store().stages(request.document, request.strategy, request.params,
                                     with_prefix=request.with_prefix, cancelled=cancelled, shape=shape,
                                     view=request.embed_view)
    if not cancelled():
        # The heading filter's completer asks for it at its first keystroke, on the GUI thread
        # (20 MB: 0.3 s); made here once, after the chunks are shown (the runner is idle already).
        from inspector.core.api import heading_catalog_of

        heading_catalog_of(request.document)


def _first_stage(request_id: int, request: ChunkRequest, chunks: tuple[Chunk, ...], stats: ChunkStats,
                 headings: tuple[HeadingMark, ...], t0: float) -> ChunkResult:
    """Stage one's result: the chunks with what the view needs to paint them."""
    doc = request.document
    painted = [c for c in chunks if c.role != "parent"]
    parents = [c for c in chunks if c.role == "parent"]
    index = SpanIndex([(c.start, c.end) for c in painted], [c.id for c in painted])
    parent_index = SpanIndex([(c.start, c.end) for c in parents], [c.id for c in parents])
    by_id = {c.id: c for c in chunks}
    import numpy as np

    ids = np.fromiter((c.id for c in chunks), dtype=np.int64, count=len(chunks))
    lines = _line_index(doc)
    return ChunkResult(request_id, request, chunks, index, parent_index, stats, headings,
                       complete=False, seconds=time.perf_counter() - t0, line_count=lines.line_count,
                       start_lines=tuple(lines.line_of_array(index.starts).tolist()),
                       parent_lines=tuple(lines.line_of_array(parent_index.starts).tolist()), by_id=by_id,
                       ids=ids)


def _replace_complete(first: ChunkResult, chunks: tuple[Chunk, ...], stats: ChunkStats,
                      seconds: float) -> ChunkResult:
    return ChunkResult(first.request_id, first.request, chunks, first.index, first.parents, stats,
                       first.headings, complete=True, seconds=seconds, line_count=first.line_count,
                       start_lines=first.start_lines, parent_lines=first.parent_lines,
                       by_id={c.id: c for c in chunks}, ids=first.ids)


#: Line indexes of at most 8 documents (worker threads build them; the core's locked LRU).
_LINES: SizedLRU[LineIndex] = SizedLRU(8, 64_000_000)


def _line_index(doc: Document) -> LineIndex:
    from inspector.core.viewmodel.offsets import LineIndex  # numpy: on the runner's thread

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
