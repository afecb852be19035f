"""The document with its chunks painted on it: the widget that holds the text and its overlays.

A read-only `QPlainTextEdit` whose `paintEvent` paints the chunk runs of the *visible* blocks only:
the visible code-point range is found from the first and last visible block, the runs inside it
by bisection (`SpanIndex.segments_in`), and each run becomes one rectangle per text line. Nothing
is painted per chunk of the document, so 20,000 chunks scroll as fast as 20 (Qt Creator's search
overlay walks only the visible blocks for the same reason; `setExtraSelections` with thousands of
ranges is the known slow path).

The view owns the text, the chunk result, the selection's reactions, the question's hits and the
gold answer's spans, and it composes the pieces that draw them, each in its own module:

* `visible`: which blocks are on screen and where a range of text is drawn;
* `painting`: chunk tints, boundary marks, the veil around hits, outlines, answers;
* `gutter`: the chunk bars and numbers on the left, the flags and rank badges on the right;
* `page_marks`: a converted PDF's page breaks;
* `hits`: what a retrieved chunk is (`HitMark`) and its colours, shared with the panels.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, cast

from PySide6.QtCore import QEvent, QPoint, QRect, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import (
    QAction,
    QFont,
    QFontDatabase,
    QHelpEvent,
    QPainter,
    QPaintEvent,
    QTextCharFormat,
    QTextCursor,
    QTextOption,
)
from PySide6.QtWidgets import QPlainTextEdit, QToolTip, QWidget

from inspector.core.viewmodel.display_text import display_text
from inspector.core.viewmodel.offsets import Utf16Map
from inspector.qt.controllers.chunk_jobs import ChunkResult
from inspector.qt.controllers.state import InspectorState
from inspector.qt.document.compare_lane import BaselineLane
from inspector.qt.document.gutter import FlagColumn, Gutter
from inspector.qt.document.hits import HitMark
from inspector.qt.document.page_marks import PageMarks
from inspector.qt.document.painting import (
    PaintRecord,
    dim_around_hits,
    outline_hits,
    outline_selection,
    paint_answers,
    paint_chunk_fills,
    paint_chunk_marks,
)
from inspector.qt.document.visible import VisibleText, visible_text
from inspector.qt.theme import FLAG_ORDER, Theme

if TYPE_CHECKING:
    from inspector.core.api import Chunk, Document

HEADING_SCALE = {1: 1.45, 2: 1.25, 3: 1.1}
#: Headings formatted per event-loop turn (about 10 ms each).
EMPHASIS_SLICE = 300
#: Characters handed to Qt per turn of the event loop at most: a 20 MB document goes in as ~100
#: slices of ~20 ms each instead of one second-long `setPlainText` on the GUI thread...
LOAD_SLICE = 200_000
#: ...and fewer where a slice takes longer than this (short lines: a 2.8 MB file of 69-character
#: lines took 32-59 ms a slice, 100-150 ms beside a busy worker): each slice is sized from the
#: last one's time, between LOAD_SLICE_MIN and LOAD_SLICE characters.
LOAD_SLICE_MS = 15.0
LOAD_SLICE_MIN = 10_000


def next_slice(chars: int, ms: float) -> int:
    """The size of the next slice after one of `chars` characters took `ms` milliseconds: what
    would take LOAD_SLICE_MS at that rate, at most doubling, within LOAD_SLICE_MIN..LOAD_SLICE."""
    if chars <= 0:
        return LOAD_SLICE_MIN
    rate = chars / max(ms, 0.5)
    return int(max(LOAD_SLICE_MIN, min(LOAD_SLICE, 2 * chars, rate * LOAD_SLICE_MS)))


class DocumentView(QPlainTextEdit):
    """Read-only text with chunk overlays; selection shared through the state."""

    painted = Signal()
    """Emitted after each paint of the viewport (with whatever overlays were current)."""
    loaded = Signal(object)
    """The Document whose whole text is now in the view (a big one goes in over several turns)."""

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
        self.baseline_lane: BaselineLane | None = None
        """The pinned baseline's chunks and boundary changes, drawn as one more gutter lane."""
        self._pending: tuple[str, int] | None = None
        """(display text, characters of it already in the view) while a big text goes in."""
        self._slice = LOAD_SLICE
        """Characters of the next slice of a text going into the view (`next_slice`)."""
        self._load_generation = 0
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
        self.gutter = Gutter(self, parent=self)
        self.flag_column = FlagColumn(self, parent=self)
        self.page_marks = PageMarks(self.font())
        self.updateRequest.connect(self._on_update_request)
        self._update_margins()
        state.documentChanged.connect(self.set_document)
        state.chunksChanged.connect(self.set_result)
        state.selectionChanged.connect(self._on_selection)

    # -- data ------------------------------------------------------------------------------
    def set_document(self, doc: Document | None) -> None:
        """Show `doc`. What scales with its size is prepared off the GUI thread where possible
        (`display_text`: huge lines cut into blocks, the offset map, the wrap decision; the
        background loader makes it before the document arrives), and the text goes into Qt in
        slices, one per turn of the event loop, each sized to take about LOAD_SLICE_MS
        (`next_slice`; `loading` until done)."""
        self.document_ = doc
        self.result = None
        self._emphasized = None
        self.hits, self.current_hit, self.answer_spans = (), -1, ()
        disp = display_text(doc.text) if doc is not None else None
        self.umap = disp.umap if disp is not None else Utf16Map("")
        self._load_generation += 1
        self._pending = None
        # The old text goes first: a new wrap mode relays out whatever is shown (a 1 MB line that
        # may only break between words: a minute on the GUI thread).
        self.setPlainText("")
        self.gutter.reserve_for(len(doc.text) if doc is not None else 0)
        self.setWordWrapMode(QTextOption.WrapMode.WrapAnywhere if disp is not None and disp.long_word
                             else QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        text = disp.text if disp is not None else ""
        if len(text) <= LOAD_SLICE:
            self.setPlainText(text)
        else:
            # A small first slice shows at once; the rest adapts (`_load_more`).
            cut = text.rfind("\n", 0, LOAD_SLICE_MIN) + 1 or LOAD_SLICE_MIN
            self._slice = LOAD_SLICE_MIN
            self.setPlainText(text[:cut])
            self._pending = (text, cut)
            gen = self._load_generation
            QTimer.singleShot(0, self, lambda: self._load_more(gen))
        self._update_margins()
        if self.state.result is not None and self.state.result.document is doc:
            self.set_result(self.state.result)
        self.viewport().update()
        if self._pending is None and doc is not None:
            self.loaded.emit(doc)

    @property
    def loading(self) -> bool:
        """True while part of the document's text has yet to go into the view."""
        return self._pending is not None

    def _load_more(self, generation: int) -> None:
        """One more slice of a big text (at a line start when there is one near the limit)."""
        if generation != self._load_generation or self._pending is None:
            return
        text, done = self._pending
        end = min(len(text), done + self._slice)
        if end < len(text):
            end = text.rfind("\n", done, end) + 1 or end
        cursor = QTextCursor(self.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        t0 = time.perf_counter()
        cursor.insertText(text[done:end])
        ms = (time.perf_counter() - t0) * 1000.0
        self._slice = next_slice(end - done, ms)
        if end < len(text):
            self._pending = (text, end)
            QTimer.singleShot(0, self, lambda: self._load_more(generation))
            return
        self._pending = None
        if self.result is not None and self._emphasized is not self.document_:
            self._emphasize_headings(self.result)
        self.viewport().update()
        self.gutter.update()
        self.flag_column.update()
        self.loaded.emit(self.document_)

    def selected_source_text(self) -> str:
        """The document's text under the selection (never the breaks the view inserts in a huge
        line; the document's own newlines as "\n")."""
        cursor = self.textCursor()
        if self.document_ is None or not cursor.hasSelection():
            return ""
        a, b = self.umap.to_codepoint(cursor.selectionStart()), self.umap.to_codepoint(cursor.selectionEnd())
        return self.document_.text[a:b]

    def set_result(self, result: ChunkResult | None) -> None:
        if result is not None and result.document is not self.document_:
            return
        self.result = result
        if result is not None and self._emphasized is not self.document_ and self._pending is None:
            self._emphasize_headings(result)  # once the whole text is in (`_load_more` does it then)
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
            QTimer.singleShot(0, lambda: self._emphasize_more(doc, result, end))

    def _emphasize_more(self, doc: Document, result: ChunkResult, start: int) -> None:
        """The next slice of `_emphasize_headings`, unless another document came meanwhile."""
        if self.document_ is doc:
            self._emphasize_headings(result, start)

    def chunk(self, chunk_id: int) -> Chunk | None:
        return self.result.chunk(chunk_id) if self.result is not None else None

    # -- geometry --------------------------------------------------------------------------
    def visible_blocks(self) -> VisibleText:
        """The text on screen now (a snapshot for one paint; see `visible.VisibleText`)."""
        return visible_text(self, self.umap)

    _visible_blocks = visible_blocks  # the name tests/qt use

    def _rects(self, vis: VisibleText, a16: int, b16: int) -> list[QRectF]:
        """One rectangle per visible line of the UTF-16 range [a16, b16) (`VisibleText.rects`)."""
        return vis.rects(a16, b16)

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
        vis = self.visible_blocks() if self.result is not None else VisibleText()
        if vis and self.result is not None:
            lo, hi = vis.text_range()
            segs = self.result.index.segments_in(lo, hi)
            ids = tuple(self.result.index.chunks_in(lo, hi))
            self.last_paint = PaintRecord(lo, hi, segs, ids)
            p = QPainter(self.viewport())
            try:
                paint_chunk_fills(p, vis, self.result, segs, ids, self.theme)
            finally:
                p.end()
        else:
            self.last_paint = None
        super().paintEvent(e)
        if vis and self.result is not None and self.last_paint is not None:
            p = QPainter(self.viewport())
            try:
                p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
                self._paint_over(p, vis, self.result, self.last_paint.chunk_ids)
            finally:
                p.end()
        if self.document_ is not None and self.document_.meta.get("page_starts"):
            # PDF page breaks, on screen only.
            self.page_marks.paint(self.viewport(), vis or self.visible_blocks(), self.document_, self.theme)
        self.painted.emit()

    def _paint_over(self, p: QPainter, vis: VisibleText, result: ChunkResult, ids: tuple[int, ...]) -> None:
        """Over the text, in this order: chunk marks, the veil around the question's hits, the
        selection's outline, the hits' outlines, the gold answer on top of all."""
        theme = self.theme
        text = self.document_.text if self.document_ is not None else ""
        paint_chunk_marks(p, vis, result, ids, text, theme)
        shapes = dim_around_hits(p, vis, self.hits, theme) if self.hits else []
        if self.hits and self.last_paint is not None:
            self.last_paint = replace(self.last_paint, hits=tuple(h.rank for h, _p, _r in shapes))
        sel = self.state.selection
        selected = result.chunk(sel) if sel != -1 else None
        if selected is not None:
            outline_selection(p, vis, selected, theme)
        if shapes:
            current = self.hits[self.current_hit].rank if 0 <= self.current_hit < len(self.hits) else -1
            outline_hits(p, shapes, current, theme)
        if self.answer_spans:
            paint_answers(p, vis, self.answer_spans, theme)

    # -- retrieval overlays ------------------------------------------------------------------
    def set_hits(self, hits: Sequence[HitMark]) -> None:
        """Outline these retrieved chunks (best first); an empty sequence clears them."""
        hits = tuple(hits)
        if hits != self.hits:
            self.hits = hits
            self.current_hit = -1
            self.viewport().update()
            self.flag_column.update()

    def set_baseline(self, lane: BaselineLane | None) -> None:
        """Show the pinned baseline's chunks in a gutter lane (None: no baseline, no lane)."""
        self.baseline_lane = lane
        self._update_margins()
        self.gutter.update()

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
            vis = self.visible_blocks()
            lo = vis.text_range()[0] if vis else 0
            k = bisect.bisect_left(self.result.index.starts, lo)
            self.state.select(ids[min(k, len(ids) - 1)])
            return
        k = self.result.index.rank(sel) + step
        self.state.select(ids[max(0, min(k, len(ids) - 1))])

    # -- tooltips, palette, gutter plumbing --------------------------------------------------
    def viewportEvent(self, e: QEvent) -> bool:
        if e.type() == QEvent.Type.ToolTip and self.result is not None:
            e = cast(QHelpEvent, e)  # Qt delivers ToolTip events as QHelpEvent
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
                 " › ".join(c.heading_path) or "no heading", f"{c.token_count} tokens",
                 f"{c.end - c.start} characters"]
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

