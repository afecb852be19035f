"""The document with its chunks painted on it.

A read-only `QPlainTextEdit` whose `paintEvent` paints the chunk runs of the *visible* blocks only:
the visible code-point range is found from the first and last visible block, the runs inside it
by bisection (`SpanIndex.segments_in`), and each run becomes one rectangle per text line. Nothing
is painted per chunk of the document, so 20,000 chunks scroll as fast as 20 (Qt Creator's search
overlay walks only the visible blocks for the same reason; `setExtraSelections` with thousands of
ranges is the known slow path).

Below the text: chunk tints (neighbours alternate hues), hatched blends where chunks overlap, a
grey hatched shade over the tail the embedder never reads. Above the text: boundary ticks, red
zig-zags where a chunk cuts a sentence, dashed tears where a table is split, a red bar where the
embedder stops reading, and the selected chunk's outline. A gutter on the left shows each chunk
as a bar (one lane per overlapping chunk) with its number at its first line; a column on the
right names each chunk's flags beside its first lines, so labels never cover text.

When a question has been asked, its top-k chunks are outlined with rank badges (#1 ... #k and the
score) and everything else is dimmed; a gold answer's span is marked on top, so a boundary that
cuts it shows. Like the chunk overlays, only hits on screen are painted.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, replace
from typing import Sequence

from PySide6.QtCore import (
    QEvent,
    QPoint,
    QPointF,
    QRect,
    QRectF,
    QSize,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import (
    QAction,
    QColor,
    QFont,
    QFontDatabase,
    QFontMetrics,
    QPainter,
    QPainterPath,
    QPaintEvent,
    QPen,
    QPolygonF,
    QTextCharFormat,
    QTextCursor,
    QTextLayout,
    QTextOption,
    QTransform,
)
from PySide6.QtWidgets import QPlainTextEdit, QToolTip, QWidget

from inspector.core.chunking.chunk import Chunk
from inspector.core.display.offsets import Utf16Map
from inspector.core.display.segments import Segment
from inspector.core.documents.document import Document
from inspector.qt.controllers.chunk_jobs import ChunkResult
from inspector.qt.controllers.state import InspectorState
from inspector.qt.document.page_marks import PageMarks
from inspector.qt.theme import FLAG_ORDER, Theme

HEADING_SCALE = {1: 1.45, 2: 1.25, 3: 1.1}
#: Headings formatted per event-loop turn (about 10 ms each).
EMPHASIS_SLICE = 300


@dataclass(frozen=True, slots=True)
class _VisibleBlock:
    pos: int
    """UTF-16 position of the block's first character."""
    length: int
    """UTF-16 units of the block's text (without the separator)."""
    top: float
    """Viewport y of the block."""
    left: float
    layout: QTextLayout
    first_line: int = 0
    """First of the block's lines on screen (a 1 MB line is one block of thousands of lines)."""
    last_line: int = 0
    """Last of the block's lines on screen."""


def _line_window(layout: QTextLayout, top: float, height: float) -> tuple[int, int]:
    """Indexes of the first and last lines of a block's layout that intersect [0, height), one
    line of margin either side, by bisection on y: a block's lines are in y order, and walking all
    of them at every paint is what made a 1 MB single-line document take a minute per frame."""
    n = layout.lineCount()
    if n <= 8:
        return 0, max(0, n - 1)
    lo, hi = 0, n
    while lo < hi:  # first line whose bottom is below the viewport's top
        mid = (lo + hi) // 2
        line = layout.lineAt(mid)
        if top + line.y() + line.height() < 0:
            lo = mid + 1
        else:
            hi = mid
    first = min(lo, n - 1)
    lo, hi = first, n
    while lo < hi:  # first line whose top is past the viewport's bottom
        mid = (lo + hi) // 2
        if top + layout.lineAt(mid).y() > height:
            hi = mid
        else:
            lo = mid + 1
    return max(0, first - 1), min(n - 1, max(first, lo - 1) + 1)


#: A run of this many characters without whitespace switches the view to wrapping anywhere.
LONG_WORD = 10_000
_LONG_WORD_RE = re.compile(r"\S{%d}" % LONG_WORD)


def wrap_mode_for(text: str) -> QTextOption.WrapMode:
    """Wrap at word boundaries, unless the text holds a very long run without a break: Qt lays
    such a "word" out in time quadratic in its length when it may break at word boundaries (a
    1 MB run: over a minute, on the GUI thread), and linearly when it may break anywhere."""
    if _LONG_WORD_RE.search(text):
        return QTextOption.WrapMode.WrapAnywhere
    return QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere


class _Visible(list):
    """Visible blocks in order, with their UTF-16 start positions for bisection."""

    starts: list[int] = []


@dataclass(frozen=True, slots=True)
class PaintRecord:
    """What the last paint drew (tests and benchmarks compare it with the core's output)."""

    lo: int
    """Code-point range [lo, hi) of the visible text."""
    hi: int
    segments: tuple[Segment, ...]
    chunk_ids: tuple[int, ...]
    """Chunks with any visible part, in start order."""
    hits: tuple[int, ...] = ()
    """Ranks of the question's hits outlined in this paint."""


@dataclass(frozen=True, slots=True)
class HitMark:
    """A retrieved chunk to outline: what the model receives for one rank of a question."""

    rank: int
    """1-based rank."""
    start: int
    end: int
    """Code-point span of the returned chunk (the parent, for parent_child)."""
    score: float
    chunk_id: int
    role: str = "chunk"


def hit_color(theme: Theme) -> QColor:
    """Outline and badge colour of retrieved chunks: an orange apart from the chunk tints and the
    selection blue."""
    return QColor.fromHslF(24 / 360, 0.92, 0.62 if theme.dark else 0.46)


def answer_color(theme: Theme) -> QColor:
    return QColor.fromHslF(50 / 360, 1.0, 0.55 if theme.dark else 0.50)


def format_score(score: float) -> str:
    """Three significant digits: 0.612 (cosine), 0.0325 (fused rank), 12.4 (BM25)."""
    return f"{score:.3g}"


class DocumentView(QPlainTextEdit):
    """Read-only text with chunk overlays; selection shared through the state."""

    painted = Signal()
    """Emitted after each paint of the viewport (with whatever overlays were current)."""

    def __init__(self, state: InspectorState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.document_: Document | None = None
        self.umap = Utf16Map("")
        self.result: ChunkResult | None = None
        self.last_paint: PaintRecord | None = None
        self.theme = Theme.for_palette(self.palette())
        self._press: QPoint | None = None
        self._emphasized: Document | None = None
        self.hits: tuple[HitMark, ...] = ()
        """The question's top-k chunks, best first (outlined, the rest dimmed)."""
        self.current_hit = -1
        """Index into `hits` of the hit navigated to last (-1: none)."""
        self.answer_spans: tuple[tuple[int, int], ...] = ()
        """Where a gold answer lies (code-point spans), marked over everything."""
        self.context_actions: list[QAction] = []
        """Extra actions for the text's context menu (e.g. "Add to gold set…")."""
        self.setReadOnly(True)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse
                                     | Qt.TextInteractionFlag.TextSelectableByKeyboard)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.document().setUndoRedoEnabled(False)
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        font.setPointSizeF(max(font.pointSizeF(), 10.0))
        self.setFont(font)
        self.setMouseTracking(True)
        self.gutter = Gutter(self)
        self.flag_column = FlagColumn(self)
        self.page_marks = PageMarks(self)
        self.updateRequest.connect(self._on_update_request)
        self._update_margins()
        state.documentChanged.connect(self.set_document)
        state.chunksChanged.connect(self.set_result)
        state.selectionChanged.connect(self._on_selection)

    # -- data ------------------------------------------------------------------------------
    def set_document(self, doc: Document | None) -> None:
        self.document_ = doc
        self.result = None
        self._emphasized = None
        self.hits, self.current_hit, self.answer_spans = (), -1, ()
        self.umap = Utf16Map(doc.text if doc is not None else "")
        self.setWordWrapMode(wrap_mode_for(doc.text if doc is not None else ""))
        self.setPlainText(doc.text if doc is not None else "")
        self._update_margins()
        if self.state.result is not None and self.state.result.document is doc:
            self.set_result(self.state.result)
        self.viewport().update()

    def set_result(self, result: ChunkResult | None) -> None:
        if result is not None and result.document is not self.document_:
            return
        self.result = result
        if result is not None and self._emphasized is not self.document_:
            self._emphasize_headings(result)
        self._update_margins()
        self.viewport().update()
        self.gutter.update()
        self.flag_column.update()

    def _emphasize_headings(self, result: ChunkResult, start: int = 0) -> None:
        """Headings in bold, larger by level: once per document, from the first result (the worker
        parsed the structure). Formatting a block costs a relayout, so a long document is done in
        slices across event-loop turns to keep each one short."""
        doc = self.document_
        self._emphasized = doc
        headings = result.headings
        if start >= len(headings) or doc is None:
            return
        base = self.font().pointSizeF()
        cursor = QTextCursor(self.document())
        cursor.beginEditBlock()
        end = min(len(headings), start + EMPHASIS_SLICE)
        for h in headings[start:end]:
            fmt = QTextCharFormat()
            fmt.setFontWeight(QFont.Weight.Bold)
            fmt.setFontPointSize(base * HEADING_SCALE.get(h.level, 1.0))
            cursor.setPosition(self.umap.to_utf16(h.start))
            cursor.setPosition(self.umap.to_utf16(h.end), QTextCursor.MoveMode.KeepAnchor)
            cursor.mergeCharFormat(fmt)
        cursor.endEditBlock()
        if end < len(headings):
            QTimer.singleShot(0, lambda: self.document_ is doc and self._emphasize_headings(result, end))

    def chunk(self, chunk_id: int) -> Chunk | None:
        return self.result.chunk(chunk_id) if self.result is not None else None

    # -- geometry --------------------------------------------------------------------------
    def _visible_blocks(self) -> _Visible:
        out = _Visible()
        block = self.firstVisibleBlock()
        offset = self.contentOffset()
        height = self.viewport().height()
        while block.isValid():
            geo = self.blockBoundingGeometry(block).translated(offset)
            if geo.top() > height:
                break
            if block.isVisible() and geo.bottom() >= 0:
                layout = block.layout()
                first, last = _line_window(layout, geo.top(), height)
                out.append(_VisibleBlock(block.position(), block.length() - 1, geo.top(), geo.left(),
                                         layout, first, last))
            block = block.next()
        out.starts = [v.pos for v in out]
        return out

    def _visible_range(self, vis: _Visible) -> tuple[int, int]:
        """Code-point range [lo, hi) of the visible lines (separators included)."""
        first, last = vis[0], vis[-1]
        lo16 = first.pos + (first.layout.lineAt(first.first_line).textStart() if first.first_line else 0)
        hi16 = last.pos + last.length + 1
        if last.last_line < last.layout.lineCount() - 1:
            line = last.layout.lineAt(last.last_line)
            hi16 = last.pos + line.textStart() + line.textLength()
        return self.umap.to_codepoint(lo16), min(self.umap.to_codepoint(min(hi16, self.umap.length16)) + 1,
                                                 self.umap.length)

    def _rects(self, vis: _Visible, a16: int, b16: int) -> list[QRectF]:
        """One rectangle per visible text line of the UTF-16 range [a16, b16). A range that reaches
        a line's end extends to the right edge, one that began on an earlier line (or at the line's
        start) starts at the left edge, so a chunk of whole lines reads as one block and only a
        boundary inside a line shows as a step."""
        out: list[QRectF] = []
        if b16 <= a16 or not vis:
            return out
        width = float(self.viewport().width())
        k = max(bisect.bisect_right(vis.starts, a16) - 1, 0)
        for v in vis[k:]:
            if v.pos >= b16:
                break
            layout = v.layout
            n = layout.lineCount()
            start = v.first_line
            if a16 > v.pos + v.length or a16 <= v.pos:
                pass
            elif v.last_line > v.first_line + 8:  # a long block: jump to the range's first line
                start = max(start, layout.lineForTextPosition(a16 - v.pos).lineNumber() - 1)
            for li in range(start, min(n, v.last_line + 1)):
                line = layout.lineAt(li)
                ls = v.pos + line.textStart()
                le = ls + line.textLength()
                last = li == n - 1
                if b16 <= ls:
                    break  # lines are in text order: none further on is in the range
                if a16 > le if last else a16 >= le:
                    continue
                x0 = 0.0 if a16 <= ls else v.left + line.cursorToX(a16 - v.pos)[0]
                x1 = width if b16 >= le else v.left + line.cursorToX(b16 - v.pos)[0]
                if x1 > x0:
                    out.append(QRectF(x0, v.top + line.y(), x1 - x0, line.height()))
        return out

    def _point_of(self, vis: _Visible, p16: int) -> tuple[float, float, float] | None:
        """(x, top, height) of the line holding UTF-16 position p16, if visible."""
        k = bisect.bisect_right(vis.starts, p16) - 1
        if k < 0 or p16 > vis[k].pos + vis[k].length:
            return None
        v = vis[k]
        line = v.layout.lineForTextPosition(p16 - v.pos)
        if not line.isValid():
            return None
        return v.left + line.cursorToX(p16 - v.pos)[0], v.top + line.y(), line.height()

    def y_span(self, vis: _Visible, a: int, b: int) -> tuple[float, float]:
        """Like `y_range`, from an already computed list of visible blocks (no document lookups:
        the gutter and flag column ask this for every chunk on screen at every paint)."""
        h = float(self.viewport().height())
        a16, b16 = self.umap.to_utf16(a), self.umap.to_utf16(max(a, b - 1))
        first, last = vis[0], vis[-1]
        if a16 < first.pos:
            top = -2.0
        elif a16 > last.pos + last.length:
            top = h + 2.0
        else:
            pt = self._point_of(vis, a16)
            top = pt[1] if pt is not None else -2.0
        if b16 > last.pos + last.length:
            bottom = h + 2.0
        elif b16 < first.pos:
            bottom = -2.0
        else:
            pt = self._point_of(vis, b16)
            bottom = pt[1] + pt[2] if pt is not None else h + 2.0
        return top, bottom

    def y_range(self, a: int, b: int) -> tuple[float, float]:
        """Viewport y span of the code-point range [a, b), clamped just outside the viewport."""
        h = self.viewport().height()
        a16, b16 = self.umap.to_utf16(a), self.umap.to_utf16(max(a, b - 1))
        return self._y_of(a16, top=True, fallback=-2.0), self._y_of(b16, top=False, fallback=h + 2.0)

    def _y_of(self, p16: int, *, top: bool, fallback: float) -> float:
        block = self.document().findBlock(p16)
        if not block.isValid():
            return fallback
        geo = self.blockBoundingGeometry(block).translated(self.contentOffset())
        h = self.viewport().height()
        if geo.bottom() < 0:
            return -2.0
        if geo.top() > h:
            return h + 2.0
        line = block.layout().lineForTextPosition(p16 - block.position())
        if not line.isValid():
            return geo.top() if top else geo.bottom()
        return geo.top() + line.y() + (0 if top else line.height())

    # -- painting --------------------------------------------------------------------------
    def paintEvent(self, e: QPaintEvent) -> None:
        vis = self._visible_blocks() if self.result is not None else []
        if vis and self.result is not None:
            lo, hi = self._visible_range(vis)
            segs = self.result.index.segments_in(lo, hi)
            ids = tuple(self.result.index.chunks_in(lo, hi))
            self.last_paint = PaintRecord(lo, hi, segs, ids)
            p = QPainter(self.viewport())
            try:
                self._paint_under(p, vis, segs, ids)
            finally:
                p.end()
        else:
            self.last_paint = None
        super().paintEvent(e)
        if vis and self.result is not None and self.last_paint is not None:
            p = QPainter(self.viewport())
            try:
                p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
                self._paint_over(p, vis, self.last_paint.chunk_ids)
            finally:
                p.end()
        if self.document_ is not None and self.document_.meta.get("page_starts"):
            self.page_marks.paint(vis or self._visible_blocks())  # PDF page breaks, on screen only
        self.painted.emit()

    def _paint_under(self, p: QPainter, vis: _Visible, segs: tuple[Segment, ...],
                     ids: tuple[int, ...]) -> None:
        theme = self.theme
        index = self.result.index
        u = self.umap
        for s in segs:
            rects = self._rects(vis, u.to_utf16(s.start), u.to_utf16(s.end))
            if len(s.chunk_ids) == 1:
                color = theme.fill(index.rank(s.chunk_ids[0]))
                for r in rects:
                    p.fillRect(r, color)
            else:
                ranks = [index.rank(c) for c in s.chunk_ids]
                color = theme.overlap_fill(tuple(ranks))
                for r in rects:
                    p.fillRect(r, color)
                for rank in ranks:
                    hatch = theme.overlap_brush(rank)
                    hatch.setTransform(QTransform().translate(3 * (rank % 2), 0))
                    for r in rects:
                        p.fillRect(r, hatch)
        # The tail the embedder never reads.
        tail, tail_hatch = theme.tail_brush(), theme.tail_hatch()
        for cid in ids:
            c = self.result.chunk(cid)
            if c is not None and c.truncated_at is not None and c.truncated_at < c.end:
                for r in self._rects(vis, u.to_utf16(c.truncated_at), u.to_utf16(c.end)):
                    p.fillRect(r, tail)
                    p.fillRect(r, tail_hatch)

    def _paint_over(self, p: QPainter, vis: _Visible, ids: tuple[int, ...]) -> None:
        theme = self.theme
        result = self.result
        u = self.umap
        text = self.document_.text if self.document_ is not None else ""
        width = self.viewport().width()
        cuts = QPainterPath()  # every zig-zag of the page, stroked once
        for cid in ids:
            c = result.chunk(cid)
            if c is None:
                continue
            rank = result.index.rank(cid)
            start = self._point_of(vis, u.to_utf16(c.start))
            if start is not None:
                x, top, h = start
                p.fillRect(QRectF(x - 1.0, top, 2.0, h), theme.bar(rank))
            if "cut_mid_sentence" in c.flags:
                for pos, cut in ((c.start, c.start > 0 and text[c.start - 1] not in "\n"),
                                 (c.end, c.end < len(text) and text[c.end] not in "\n")):
                    pt = self._point_of(vis, u.to_utf16(pos)) if cut else None
                    if pt is not None:
                        _zigzag(cuts, pt[0], pt[1], pt[2])
            if "split_table" in c.flags:
                pen = QPen(theme.flag("split_table"), 1.6, Qt.PenStyle.DashLine)
                p.setPen(pen)
                for pos, at_top in ((c.start, True), (max(c.start, c.end - 1), False)):
                    ls = text.rfind("\n", 0, pos) + 1
                    if text.startswith("|", ls):
                        pt = self._point_of(vis, u.to_utf16(pos))
                        if pt is not None:
                            y = pt[1] if at_top else pt[1] + pt[2]
                            p.drawLine(QPointF(0, y), QPointF(width, y))
            if c.truncated_at is not None and c.truncated_at < c.end:
                pt = self._point_of(vis, u.to_utf16(c.truncated_at))
                if pt is not None:
                    color = theme.flag("truncated_by_embedder")
                    p.fillRect(QRectF(pt[0] - 1.0, pt[1], 2.5, pt[2]), color)
                    p.setPen(Qt.PenStyle.NoPen)
                    p.setBrush(color)
                    p.drawPolygon(QPolygonF([QPointF(pt[0] - 4, pt[1]), QPointF(pt[0] + 5, pt[1]),
                                             QPointF(pt[0] + 0.5, pt[1] + 5)]))
        if not cuts.isEmpty():
            p.setPen(QPen(theme.flag("cut_mid_sentence"), 1.6))
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.drawPath(cuts)
        shapes = self._dim_around_hits(p, vis) if self.hits else []
        sel = self.state.selection
        if sel != -1 and result.chunk(sel) is not None:
            c = result.chunk(sel)
            rects = self._rects(vis, u.to_utf16(c.start), u.to_utf16(c.end))
            if rects:
                path = QPainterPath()
                for r in rects:
                    path.addRect(r.adjusted(-1, 0, 1, 0))
                p.setPen(QPen(theme.selection, 2.0))
                p.setBrush(Qt.BrushStyle.NoBrush)
                p.drawPath(path.simplified())
        if shapes:
            self._outline_hits(p, shapes)
        if self.answer_spans:
            self._paint_answers(p, vis)

    # -- retrieval overlays ------------------------------------------------------------------
    def _dim_around_hits(self, p: QPainter, vis: _Visible) -> list[tuple[HitMark, QPainterPath, QRectF]]:
        """Dim everything but the hits; returns the visible hits' outlines (drawn later, on top)."""
        lo, hi = self._visible_range(vis)
        u = self.umap
        union = QPainterPath()
        shapes: list[tuple[HitMark, QPainterPath, QRectF]] = []
        for h in self.hits:
            if h.end <= lo or h.start >= hi:
                continue
            rects = self._rects(vis, u.to_utf16(h.start), u.to_utf16(h.end))
            if not rects:
                continue
            path = QPainterPath()
            for r in rects:
                path.addRect(r.adjusted(-2, 0, 2, 0))
            path = path.simplified()
            union = union.united(path)
            shapes.append((h, path, rects[0]))
        dim = QPainterPath()
        dim.addRect(QRectF(self.viewport().rect()))
        dim = dim.subtracted(union)
        veil = QColor(self.theme.base)
        veil.setAlphaF(0.6 if not self.theme.dark else 0.55)
        p.fillPath(dim, veil)
        if self.last_paint is not None:
            self.last_paint = replace(self.last_paint, hits=tuple(h.rank for h, _p, _r in shapes))
        return shapes

    def _outline_hits(self, p: QPainter, shapes: list[tuple[HitMark, QPainterPath, QRectF]]) -> None:
        """Each visible hit outlined (its rank badge is in the flag column beside it, so no label
        covers the text); the hit navigated to last is drawn thicker."""
        color = hit_color(self.theme)
        current = self.hits[self.current_hit].rank if 0 <= self.current_hit < len(self.hits) else -1
        # Best rank last, so its outline sits on top where hits overlap.
        for h, path, _first in sorted(shapes, key=lambda s: -s[0].rank):
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.setPen(QPen(color, 3.0 if h.rank == current else 2.0))
            p.drawPath(path)

    def _paint_answers(self, p: QPainter, vis: _Visible) -> None:
        lo, hi = self._visible_range(vis)
        u = self.umap
        color = answer_color(self.theme)
        fill = QColor(color)
        fill.setAlphaF(0.38)
        pen = QPen(color.darker(135) if not self.theme.dark else color, 1.6, Qt.PenStyle.DashLine)
        for a, b in self.answer_spans:
            if b <= lo or a >= hi:
                continue
            rects = self._rects(vis, u.to_utf16(a), u.to_utf16(b))
            if not rects:
                continue
            path = QPainterPath()
            for r in rects:
                path.addRect(r.adjusted(-1, -1, 1, 1))
            path = path.simplified()
            p.fillPath(path, fill)
            p.setPen(pen)
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.drawPath(path)

    def set_hits(self, hits: Sequence[HitMark]) -> None:
        """Outline these retrieved chunks (best first); an empty sequence clears them."""
        hits = tuple(hits)
        if hits != self.hits:
            self.hits = hits
            self.current_hit = -1
            self.viewport().update()
            self.flag_column.update()

    def set_answer_spans(self, spans: Sequence[tuple[int, int]], reveal: bool = True) -> None:
        """Mark where a gold answer lies (and scroll to the first occurrence)."""
        self.answer_spans = tuple((int(a), int(b)) for a, b in spans)
        if reveal and self.answer_spans:
            self.scroll_to_offset(self.answer_spans[0][0], context_lines=4)
        self.viewport().update()

    def goto_hit(self, i: int) -> HitMark | None:
        """Scroll to hit `i` (0-based, wrapping) and emphasise its outline."""
        if not self.hits:
            return None
        self.current_hit = i % len(self.hits)
        h = self.hits[self.current_hit]
        self.scroll_to_offset(h.start, context_lines=2)
        self.viewport().update()
        self.flag_column.update()
        return h

    def next_hit(self) -> HitMark | None:
        return self.goto_hit(self.current_hit + 1)

    def previous_hit(self) -> HitMark | None:
        return self.goto_hit(self.current_hit - 1 if self.current_hit >= 0 else -1)

    def contextMenuEvent(self, e) -> None:
        menu = self.createStandardContextMenu(e.pos())
        if self.context_actions:
            menu.addSeparator()
            for a in self.context_actions:
                menu.addAction(a)
        menu.exec(e.globalPos())
        menu.deleteLater()


    # -- selection and navigation ------------------------------------------------------------
    def chunk_ids_at(self, cp: int) -> tuple[int, ...]:
        """Chunks covering code-point offset `cp`: painted chunks first, then parents."""
        if self.result is None:
            return ()
        return self.result.index.ids_at(cp) + self.result.parents.ids_at(cp)

    def offset_at(self, pt: QPoint) -> int:
        """Code-point offset of the character under a viewport point."""
        cursor = self.cursorForPosition(pt)
        p16 = cursor.position()
        rect = self.cursorRect(cursor)
        if pt.x() < rect.x() and p16 > cursor.block().position():
            p16 -= 1  # the click hit the right half of the previous character
        return self.umap.to_codepoint(p16)

    def click_at(self, pt: QPoint) -> int:
        """Select the chunk under `pt`; repeated clicks cycle through chunks overlapping there."""
        ids = self.chunk_ids_at(self.offset_at(pt))
        if not ids:
            self.state.select(-1)
            return -1
        sel = self.state.selection
        nxt = ids[(ids.index(sel) + 1) % len(ids)] if sel in ids else ids[0]
        self.state.select(nxt)
        return nxt

    def mousePressEvent(self, e) -> None:
        self._press = e.position().toPoint()
        super().mousePressEvent(e)

    def mouseReleaseEvent(self, e) -> None:
        super().mouseReleaseEvent(e)
        if (e.button() == Qt.MouseButton.LeftButton and self._press is not None
                and (e.position().toPoint() - self._press).manhattanLength() < 4
                and not self.textCursor().hasSelection()):
            self.click_at(e.position().toPoint())
        self._press = None

    def _on_selection(self, chunk_id: int) -> None:
        if chunk_id != -1:
            self.reveal(chunk_id)
        self.viewport().update()
        self.gutter.update()
        self.flag_column.update()

    def reveal(self, chunk_id: int) -> None:
        """Scroll so that the chunk's start is visible, with a few lines of context above it,
        unless the chunk is already on screen."""
        c = self.chunk(chunk_id)
        if c is None:
            return
        top, bottom = self.y_range(c.start, c.end)
        h = self.viewport().height()
        if 0 <= top <= h - 20 or (top < 0 and bottom > 20):
            return
        self.scroll_to_offset(c.start, context_lines=3)

    def scroll_to_offset(self, cp: int, context_lines: int = 3) -> None:
        block = self.document().findBlock(self.umap.to_utf16(cp))
        if not block.isValid():
            return
        line_in_block = 0
        layout = block.layout()
        if layout is not None and layout.lineCount():
            line = layout.lineForTextPosition(self.umap.to_utf16(cp) - block.position())
            if line.isValid():
                line_in_block = line.lineNumber()
        sb = self.verticalScrollBar()
        sb.setValue(max(0, block.firstLineNumber() + line_in_block - context_lines))
        # Line numbers of blocks the layout has not reached yet are estimates (one line each until
        # laid out), so the first jump can land short; scrolling there lays the blocks out, and
        # one or two corrections by the measured offset put the target where it belongs.
        for _ in range(3):
            top = self._y_of(self.umap.to_utf16(cp), top=True, fallback=-1.0)
            line_h = max(1, self.fontMetrics().height())
            if 0 <= top < self.viewport().height() - line_h:
                break
            step = int(top // line_h) - context_lines if top >= 0 else -context_lines - 1
            before = sb.value()
            sb.setValue(max(0, before + (step if top >= 0 else -max(1, self._lines_above(cp)))))
            if sb.value() == before:
                break

    def _lines_above(self, cp: int) -> int:
        """How far (in lines) the first visible line is below `cp`, when `cp` is above the view."""
        first = self.firstVisibleBlock()
        target = self.document().findBlock(self.umap.to_utf16(cp))
        if not first.isValid() or not target.isValid():
            return 1
        return max(1, first.firstLineNumber() - target.firstLineNumber() + 3)

    def scroll_to_line_fraction(self, fraction: float) -> None:
        """Scroll so that the source line at `fraction` (0..1) of the document is in the middle."""
        block = self.document().findBlockByNumber(int(fraction * self.document().blockCount()))
        if block.isValid():
            sb = self.verticalScrollBar()
            rows = max(1, self.viewport().height() // max(1, self.fontMetrics().height()))
            sb.setValue(max(0, block.firstLineNumber() - rows // 2))

    def visible_line_fractions(self) -> tuple[float, float]:
        """Source lines in view, as fractions of the document's lines (for the overview strip)."""
        n = max(1, self.document().blockCount())
        first = self.firstVisibleBlock()
        if not first.isValid():
            return 0.0, 1.0
        last = self.cursorForPosition(QPoint(0, self.viewport().height() - 1)).block()
        return first.blockNumber() / n, (last.blockNumber() + 1) / n

    def select_relative(self, step: int) -> None:
        """Select the next (step=1) or previous (-1) chunk in text order."""
        if self.result is None or not len(self.result.index):
            return
        ids = self.result.index.ids
        sel = self.state.selection
        if sel == -1 or self.result.index.rank(sel) < 0:
            vis = self._visible_blocks()
            lo = self._visible_range(vis)[0] if vis else 0
            k = bisect.bisect_left(self.result.index.starts, lo)
            self.state.select(ids[min(k, len(ids) - 1)])
            return
        k = self.result.index.rank(sel) + step
        self.state.select(ids[max(0, min(k, len(ids) - 1))])

    # -- tooltips, palette, gutter plumbing --------------------------------------------------
    def viewportEvent(self, e: QEvent) -> bool:
        if e.type() == QEvent.Type.ToolTip and self.result is not None:
            pos = e.pos()
            ids = self.chunk_ids_at(self.offset_at(pos))
            if ids:
                QToolTip.showText(e.globalPos(), "\n".join(self.describe(c) for c in ids), self.viewport())
            else:
                QToolTip.hideText()
            return True
        return super().viewportEvent(e)

    def describe(self, chunk_id: int) -> str:
        c = self.chunk(chunk_id)
        if c is None:
            return ""
        parts = [f"Chunk {c.id}" + (f" ({c.role})" if c.role != "chunk" else ""),
                 f"{c.token_count} tokens", f"{c.end - c.start} characters"]
        if c.embed_tokens is not None:
            parts.append(f"{c.embed_tokens} word pieces" + (f", {c.embed_dropped} dropped" if c.embed_dropped else ""))
        if c.flags:
            parts.append(", ".join(self.theme.flag_label(f) for f in FLAG_ORDER if f in c.flags))
        return " · ".join(parts)

    def changeEvent(self, e: QEvent) -> None:
        if e.type() == QEvent.Type.PaletteChange:
            self.theme = Theme.for_palette(self.palette())
            self.gutter.update()
            self.flag_column.update()
            self.viewport().update()
        super().changeEvent(e)

    def resizeEvent(self, e) -> None:
        super().resizeEvent(e)
        self._place_margins()

    def _update_margins(self) -> None:
        margins = (self.gutter.width_hint(), self.flag_column.width_hint())
        if margins != getattr(self, "_margins", None):
            self._margins = margins
            self.setViewportMargins(margins[0], 0, margins[1], 0)
        self._place_margins()

    def _place_margins(self) -> None:
        cr = self.contentsRect()
        vp = self.viewport().geometry()
        self.gutter.setGeometry(QRect(cr.left(), vp.top(), self.gutter.width_hint(), vp.height()))
        self.flag_column.setGeometry(QRect(vp.right() + 1, vp.top(), self.flag_column.width_hint(), vp.height()))

    def _on_update_request(self, rect: QRect, dy: int) -> None:
        for w in (self.gutter, self.flag_column):
            if dy:
                w.scroll(0, dy)
            w.update(0, rect.y(), w.width(), rect.height())


def _zigzag(path: QPainterPath, x: float, top: float, h: float, steps: int = 6) -> None:
    """A torn-edge mark at x over one line: where a chunk cuts a sentence."""
    path.moveTo(x - 2.5, top)
    for i in range(1, steps + 1):
        path.lineTo(x + (2.5 if i % 2 else -2.5), top + h * i / steps)


class Gutter(QWidget):
    """Chunk bars and numbers beside the text (one lane per overlapping chunk)."""

    BAR = 4
    GAP = 2

    def __init__(self, view: DocumentView) -> None:
        super().__init__(view)
        self.view = view

    def lanes(self) -> int:
        r = self.view.result
        if r is None:
            return 1
        n = max(r.index.lanes.values(), default=0) + 1
        return n + (1 if len(r.parents) else 0)

    def width_hint(self) -> int:
        r = self.view.result
        digits = len(str(max(len(r.chunks) - 1, 0))) if r is not None else 2
        fm = self.view.fontMetrics()
        return 10 + fm.horizontalAdvance("9" * max(digits, 2)) + 8 + self.lanes() * (self.BAR + self.GAP)

    def sizeHint(self) -> QSize:
        return QSize(self.width_hint(), 0)

    def paintEvent(self, e: QPaintEvent) -> None:
        view = self.view
        p = QPainter(self)
        pal = view.palette()
        bg = pal.color(pal.ColorRole.Window)
        p.fillRect(e.rect(), bg)
        r = view.result
        if r is None or view.document_ is None:
            p.end()
            return
        vis = view._visible_blocks()
        if not vis:
            p.end()
            return
        theme = view.theme
        lo, hi = view._visible_range(vis)
        w = self.width()
        base_x = w - 4 - self.BAR
        fm = view.fontMetrics()
        sel = view.state.selection
        # Parents first (leftmost lane), then painted chunks in their lanes.
        for cid in r.parents.chunks_in(lo, hi):
            c = r.chunk(cid)
            y0, y1 = view.y_span(vis, c.start, c.end)
            x = base_x - (self.lanes() - 1) * (self.BAR + self.GAP)
            p.fillRect(QRectF(x, y0 + 1, self.BAR, max(2.0, y1 - y0 - 2)), theme.muted)
        numbers: list[tuple[float, int]] = []
        for cid in r.index.chunks_in(lo, hi):
            c = r.chunk(cid)
            if c is None:
                continue
            rank = r.index.rank(cid)
            lane = r.index.lanes.get(cid, 0)
            x = base_x - lane * (self.BAR + self.GAP)
            y0, y1 = view.y_span(vis, c.start, c.end)
            color = theme.bar(rank)
            p.fillRect(QRectF(x, y0 + 1, self.BAR, max(2.0, y1 - y0 - 2)), color)
            if y0 >= -1:
                p.fillRect(QRectF(x - 3, y0 + 1, self.BAR + 3, 2), color)  # boundary tick
                numbers.append((y0, cid))
        text_right = base_x - (self.lanes() - 1) * (self.BAR + self.GAP) - 4
        last_y = -1e9
        for y0, cid in numbers:
            if y0 - last_y < fm.height() - 2 and cid != sel:
                continue  # two starts on one line: the first number stands for both
            last_y = y0
            c = r.chunk(cid)
            font = QFont(view.font())
            if cid == sel:
                font.setBold(True)
                p.setPen(theme.selection)
            else:
                p.setPen(theme.muted)
            p.setFont(font)
            p.drawText(QRectF(0, y0, text_right, fm.height()), Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                       str(cid))
            flagged = [f for f in FLAG_ORDER if f in c.flags and f != "no_heading"]
            if flagged:
                p.setPen(Qt.PenStyle.NoPen)
                p.setBrush(theme.flag(flagged[0]))
                p.drawEllipse(QPointF(4.5, y0 + fm.height() / 2), 2.5, 2.5)
        p.end()

    def mousePressEvent(self, e) -> None:
        # Clicking a bar or number selects the chunk whose start is nearest above the click.
        view = self.view
        pt = QPoint(2, int(e.position().y()))
        view.click_at(pt)


class FlagColumn(QWidget):
    """Right of the text: each flagged chunk's flags as labels, stacked from its first line, on
    the chunk's own tint so they read as part of it. A retrieved chunk's rank badge (#1 and its
    score) comes first, so badges never cover the text."""

    def __init__(self, view: DocumentView) -> None:
        super().__init__(view)
        self.view = view
        self._font = QFont(view.font())
        self._font.setPointSizeF(max(7.0, view.font().pointSizeF() * 0.8))
        self._font.setBold(True)

    def width_hint(self) -> int:
        fm = QFontMetrics(self._font)
        widest = max(fm.horizontalAdvance(self.view.theme.flag_label(f, short=True)) for f in FLAG_ORDER)
        return widest + 22

    def paintEvent(self, e: QPaintEvent) -> None:
        view = self.view
        p = QPainter(self)
        p.fillRect(e.rect(), view.theme.base)
        r = view.result
        vis = view._visible_blocks() if r is not None else []
        if not vis:
            p.end()
            return
        p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        theme = view.theme
        fm = QFontMetrics(self._font)
        p.setFont(self._font)
        lo, hi = view._visible_range(vis)
        h = fm.height() + 2
        w = self.width()
        badges = [(hit, *view.y_span(vis, hit.start, hit.end)) for hit in view.hits
                  if hit.end > lo and hit.start < hi]
        # Flags of a hit chunk start below its badge.
        first_at = {(hit.start, hit.end): y0 + h + 4 for hit, y0, _y1 in badges}
        for cid in r.index.chunks_in(lo, hi):
            c = r.chunk(cid)
            if c is None:
                continue
            y0, y1 = view.y_span(vis, c.start, c.end)
            # The chunk's tint continues into the column (overlaps: the later chunk's tint wins).
            p.fillRect(QRectF(0, max(y0, -1.0), w, min(y1, self.height() + 1.0) - max(y0, -1.0)),
                       theme.fill(r.index.rank(cid)))
            flags = [f for f in FLAG_ORDER if f in c.flags]
            y = first_at.get((c.start, c.end), y0 + 2)
            for f in flags:
                if y + h > y1 + 1 and y > y0 + 2:
                    break  # no room left beside this chunk: the tooltip and table list the rest
                rect = QRectF(5, y, w - 10, h)
                color = theme.flag(f)
                bg = QColor(theme.base)
                bg.setAlphaF(0.9)
                p.setPen(QPen(color, 1.0))
                p.setBrush(bg)
                p.drawRoundedRect(rect, h / 2, h / 2)
                p.drawText(rect, Qt.AlignmentFlag.AlignCenter, theme.flag_label(f, short=True))
                y += h + 2
        if badges:
            self._paint_badges(p, badges, h)
        p.end()

    def _paint_badges(self, p: QPainter, badges: list, h: float) -> None:
        view = self.view
        theme = view.theme
        w = self.width()
        # Dim the column beside everything but the hits, as the text is dimmed.
        keep = QPainterPath()
        for _hit, y0, y1 in badges:
            keep.addRect(QRectF(0, y0, w, y1 - y0))
        veil_path = QPainterPath()
        veil_path.addRect(QRectF(self.rect()))
        veil = QColor(theme.base)
        veil.setAlphaF(0.6 if not theme.dark else 0.55)
        p.fillPath(veil_path.subtracted(keep), veil)
        color = hit_color(theme)
        ink = QColor("#ffffff") if not theme.dark else QColor("#1b1b1b")
        current = view.hits[view.current_hit].rank if 0 <= view.current_hit < len(view.hits) else -1
        placed: list[float] = []
        for hit, y0, _y1 in sorted(badges, key=lambda b: b[0].rank):
            y = max(2.0, y0 + 2)
            while any(abs(y - other) < h + 2 for other in placed):
                y += h + 2  # two hits starting on one line: stack their badges
            placed.append(y)
            rect = QRectF(4, y, w - 8, h)
            p.setPen(QPen(color.darker(130), 2.0) if hit.rank == current else Qt.PenStyle.NoPen)
            p.setBrush(color)
            p.drawRoundedRect(rect, h / 2, h / 2)
            p.setPen(ink)
            p.drawText(rect, Qt.AlignmentFlag.AlignCenter, f"#{hit.rank}  {format_score(hit.score)}")
