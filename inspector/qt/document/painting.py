"""What the document view paints under and over its text, for the visible part only.

Under the text: chunk tints (neighbours alternate hues), hatched blends where chunks overlap, a
grey hatched shade over the tail the embedder never reads. Over the text: boundary ticks, red
zig-zags where a chunk cuts a sentence, dashed tears where a table is split, a red bar where the
embedder stops reading; then, when a question was asked, a veil over everything but its hits,
the selected chunk's outline, the hits' outlines, and a gold answer's span on top of all.

Each painter takes the painter, the `VisibleText` of this paint and plain data (the chunk result,
the theme, the hits), never the view, so what is drawn depends on nothing but its arguments. The
runs come from the core (`SpanIndex.segments_in`): the paint code never computes overlaps.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPainterPath, QPen, QPolygonF, QTransform

from inspector.core.viewmodel.segments import Segment
from inspector.qt.controllers.chunk_jobs import ChunkResult
from inspector.qt.document.hits import HitMark, answer_color, hit_color
from inspector.qt.document.visible import VisibleText
from inspector.qt.theme import Theme

if TYPE_CHECKING:
    from inspector.core.api import Chunk

#: A visible hit: the mark, its outline, and the rectangle of its first line.
HitShape = tuple[HitMark, QPainterPath, QRectF]


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


def zigzag(path: QPainterPath, x: float, top: float, h: float, steps: int = 6) -> None:
    """A torn-edge mark at x over one line: where a chunk cuts a sentence."""
    path.moveTo(x - 2.5, top)
    for i in range(1, steps + 1):
        path.lineTo(x + (2.5 if i % 2 else -2.5), top + h * i / steps)


def paint_chunk_fills(p: QPainter, vis: VisibleText, result: ChunkResult, segs: tuple[Segment, ...],
                      ids: tuple[int, ...], theme: Theme) -> None:
    """Under the text: each run's tint (hatched blends where chunks overlap) and the shaded tails
    the embedder never reads."""
    index = result.index
    u = vis.umap
    for s in segs:
        rects = vis.rects(u.to_utf16(s.start), u.to_utf16(s.end))
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
        c = result.chunk(cid)
        if c is not None and c.truncated_at is not None and c.truncated_at < c.end:
            for r in vis.rects(u.to_utf16(c.truncated_at), u.to_utf16(c.end)):
                p.fillRect(r, tail)
                p.fillRect(r, tail_hatch)


def paint_chunk_marks(p: QPainter, vis: VisibleText, result: ChunkResult, ids: tuple[int, ...], text: str,
                      theme: Theme) -> None:
    """Over the text: a tick at each chunk's start, zig-zags where a chunk cuts a sentence, dashed
    tears where it splits a table, a bar where the embedder stops reading."""
    u = vis.umap
    width = vis.width
    cuts = QPainterPath()  # every zig-zag of the page, stroked once
    for cid in ids:
        c = result.chunk(cid)
        if c is None:
            continue
        rank = result.index.rank(cid)
        start = vis.point_of(u.to_utf16(c.start))
        if start is not None:
            x, top, h = start
            p.fillRect(QRectF(x - 1.0, top, 2.0, h), theme.bar(rank))
        if "cut_mid_sentence" in c.flags:
            for pos, cut in ((c.start, c.start > 0 and text[c.start - 1] not in "\n"),
                             (c.end, c.end < len(text) and text[c.end] not in "\n")):
                pt = vis.point_of(u.to_utf16(pos)) if cut else None
                if pt is not None:
                    zigzag(cuts, pt[0], pt[1], pt[2])
        if "split_table" in c.flags:
            pen = QPen(theme.flag("split_table"), 1.6, Qt.PenStyle.DashLine)
            p.setPen(pen)
            for pos, at_top in ((c.start, True), (max(c.start, c.end - 1), False)):
                ls = text.rfind("\n", 0, pos) + 1
                if text.startswith("|", ls):
                    pt = vis.point_of(u.to_utf16(pos))
                    if pt is not None:
                        y = pt[1] if at_top else pt[1] + pt[2]
                        p.drawLine(QPointF(0, y), QPointF(width, y))
        if c.truncated_at is not None and c.truncated_at < c.end:
            pt = vis.point_of(u.to_utf16(c.truncated_at))
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


def outline_selection(p: QPainter, vis: VisibleText, chunk: Chunk, theme: Theme) -> None:
    """The selected chunk's outline, one path around all its visible lines."""
    u = vis.umap
    rects = vis.rects(u.to_utf16(chunk.start), u.to_utf16(chunk.end))
    if rects:
        path = QPainterPath()
        for r in rects:
            path.addRect(r.adjusted(-1, 0, 1, 0))
        p.setPen(QPen(theme.selection, 2.0))
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawPath(path.simplified())


def dim_around_hits(p: QPainter, vis: VisibleText, hits: Sequence[HitMark], theme: Theme) -> list[HitShape]:
    """Dim everything but the hits; returns the visible hits' outlines (drawn later, on top)."""
    lo, hi = vis.text_range()
    u = vis.umap
    union = QPainterPath()
    shapes: list[HitShape] = []
    for h in hits:
        if h.end <= lo or h.start >= hi:
            continue
        rects = vis.rects(u.to_utf16(h.start), u.to_utf16(h.end))
        if not rects:
            continue
        path = QPainterPath()
        for r in rects:
            path.addRect(r.adjusted(-2, 0, 2, 0))
        path = path.simplified()
        union = union.united(path)
        shapes.append((h, path, rects[0]))
    dim = QPainterPath()
    dim.addRect(QRectF(0.0, 0.0, vis.width, vis.height))
    dim = dim.subtracted(union)
    veil = QColor(theme.base)
    veil.setAlphaF(0.6 if not theme.dark else 0.55)
    p.fillPath(dim, veil)
    return shapes


def outline_hits(p: QPainter, shapes: list[HitShape], current_rank: int, theme: Theme) -> None:
    """Each visible hit outlined (its rank badge is in the flag column beside it, so no label
    covers the text); the hit of rank `current_rank` (navigated to last) is drawn thicker."""
    color = hit_color(theme)
    # Best rank last, so its outline sits on top where hits overlap.
    for h, path, _first in sorted(shapes, key=lambda s: -s[0].rank):
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.setPen(QPen(color, 3.0 if h.rank == current_rank else 2.0))
        p.drawPath(path)


def paint_answers(p: QPainter, vis: VisibleText, spans: Sequence[tuple[int, int]], theme: Theme) -> None:
    """Where a gold answer lies: a filled, dashed outline over everything else."""
    lo, hi = vis.text_range()
    u = vis.umap
    color = answer_color(theme)
    fill = QColor(color)
    fill.setAlphaF(0.38)
    pen = QPen(color.darker(135) if not theme.dark else color, 1.6, Qt.PenStyle.DashLine)
    for a, b in spans:
        if b <= lo or a >= hi:
            continue
        rects = vis.rects(u.to_utf16(a), u.to_utf16(b))
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
