"""Page breaks of a converted PDF, drawn over the document view.

A PDF becomes one text with `doc.meta["page_starts"]`: the code-point offset where each page's
text begins. The view draws a thin dashed rule above the line holding each page's start, labelled
"page N" at the right edge, for the pages whose start is on screen only (found by bisecting the
sorted starts, as the chunk overlays are), so a 500-page PDF paints as fast as a 2-page one.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPen
from PySide6.QtWidgets import QWidget

from inspector.qt.document.visible import VisibleText
from inspector.qt.theme import Theme

if TYPE_CHECKING:
    from inspector.core.api import Document


@dataclass(frozen=True, slots=True)
class PageMark:
    """One page break painted in the last paint."""

    page: int
    """1-based page number."""
    offset: int
    """Code-point offset where the page's text begins."""
    y: float
    """Viewport y of the rule (the top of the line holding `offset`)."""


def page_starts(doc) -> tuple[int, ...]:
    """The document's page starts (empty for anything but a converted PDF)."""
    meta = getattr(doc, "meta", None) or {}
    starts = meta.get("page_starts") or ()
    return tuple(int(s) for s in starts)


def pages_in(starts: Sequence[int], lo: int, hi: int) -> range:
    """Indexes of the pages whose start lies in [lo, hi)."""
    return range(bisect.bisect_left(starts, lo), bisect.bisect_left(starts, hi))


def page_of(starts: Sequence[int], offset: int) -> int:
    """1-based page holding `offset` (0 when the document has no pages)."""
    return bisect.bisect_right(starts, offset) if starts else 0


class PageMarks:
    """Paints page rules over a text view's viewport; `last` records what the last paint drew.

    It is handed everything it paints from (the viewport, the visible text, the document, the
    theme) at each paint, so it needs nothing else of the view."""

    def __init__(self, font: QFont) -> None:
        """`font`: the view's font (the labels are a smaller cut of it)."""
        self.last: tuple[PageMark, ...] = ()
        self._font = QFont(font)
        self._font.setPointSizeF(max(7.0, font.pointSizeF() * 0.8))

    def paint(self, viewport: QWidget, vis: VisibleText, doc: Document | None, theme: Theme) -> None:
        starts = page_starts(doc)
        if not starts or not vis:
            self.last = ()
            return
        lo, hi = vis.text_range()
        marks: list[PageMark] = []
        for k in pages_in(starts, lo, hi):
            pt = vis.point_of(vis.umap.to_utf16(starts[k]))
            if pt is not None:
                marks.append(PageMark(k + 1, starts[k], pt[1]))
        self.last = tuple(marks)
        if not marks:
            return
        color = QColor(theme.muted)
        width = float(viewport.width())
        fm = QFontMetrics(self._font)
        p = QPainter(viewport)
        try:
            p.setFont(self._font)
            for m in marks:
                label = f"page {m.page}"
                w = fm.horizontalAdvance(label) + 10
                p.setPen(QPen(color, 1.0, Qt.PenStyle.DashLine))
                p.drawLine(QPointF(0, m.y), QPointF(width - w - 4, m.y))
                box = QRectF(width - w - 2, m.y - fm.height() / 2, w, fm.height())
                p.setPen(Qt.PenStyle.NoPen)
                bg = QColor(theme.base)
                bg.setAlphaF(0.85)
                p.setBrush(bg)
                p.drawRoundedRect(box, 3, 3)
                p.setPen(color)
                p.drawText(box, Qt.AlignmentFlag.AlignCenter, label)
        finally:
            p.end()
