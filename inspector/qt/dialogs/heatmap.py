"""A size × overlap heatmap of hit rate, one grid per strategy, painted with QPainter.

Each cell is one configuration of the sweep: its colour is its hit rate on a sequential scale
between the sweep's worst and best figure, its text the hit rate in percent (and the exact
figure below it when the cell was confirmed with exact embeddings). Every cell tied with the best
(its difference to it is within noise on these questions) is framed, rather than crowning one
noisy winner; the window's current configuration is dashed. Clicking a cell emits it.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetrics, QLinearGradient, QPainter, QPen
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from inspector.core.api import num, pct, unit_note
from inspector.qt.theme import CURRENT_CELL, HEAT_RAMP, INK_ON_BRIGHT, INK_ON_DEEP

#: The theme's sequential ramp (dark blue -> teal -> yellow), as colours.
RAMP = tuple((t, QColor(c)) for t, c in HEAT_RAMP)


def ramp(t: float) -> QColor:
    t = min(1.0, max(0.0, t))
    for (t0, c0), (t1, c1) in itertools.pairwise(RAMP):
        if t <= t1:
            f = (t - t0) / (t1 - t0) if t1 > t0 else 0.0
            return QColor.fromRgbF(c0.redF() + (c1.redF() - c0.redF()) * f,
                                   c0.greenF() + (c1.greenF() - c0.greenF()) * f,
                                   c0.blueF() + (c1.blueF() - c0.blueF()) * f)
    return QColor(RAMP[-1][1])


def _ink(bg: QColor) -> QColor:
    lum = 0.2126 * bg.redF() + 0.7152 * bg.greenF() + 0.0722 * bg.blueF()
    return QColor(INK_ON_BRIGHT if lum > 0.5 else INK_ON_DEEP)


@dataclass(frozen=True, slots=True)
class Cell:
    """One point of the grid."""

    strategy: str
    size: int | None
    overlap: int | None
    config: Any = None
    """EvalConfig, or None when the strategy cannot take this point."""
    row: Any = None
    """sweep.SweepRow once scored."""
    reason: str = ""
    """Why the point was skipped."""

    @property
    def hit_rate(self) -> float | None:
        return self.row.report.hit_rate if self.row is not None else None

    @property
    def exact_rate(self) -> float | None:
        return self.row.exact.hit_rate if self.row is not None and self.row.exact is not None else None


#: What the cells can show: hit rate, or a layer of the bill (`inspector.core.evaluation.bill`).
LAYERS = {"hit_rate": "hit rate", "embed_usd": "indexing cost", "context_usd": "context $ per question",
          "embed_seconds": "embedding time"}


def layer_value(cell: Cell, layer: str, rates: Any = None) -> float | None:
    """A scored cell's figure on `layer` (None where the bill lacks a price or a measurement)."""
    if cell.row is None:
        return None
    if layer == "hit_rate":
        return cell.hit_rate
    from inspector.core.api import bill_for

    b = bill_for(cell.row.report, rates)
    return {"embed_usd": b.embed_usd, "context_usd": b.context_usd_per_question,
            "embed_seconds": b.embed_seconds_estimate}[layer]


def layer_text(value: float, layer: str) -> str:
    from inspector.core.api import format_seconds, format_usd

    if layer == "hit_rate":
        return pct(value, unit="")
    return format_seconds(value) if layer == "embed_seconds" else format_usd(value)


class Heatmap(QWidget):
    """Grids of cells by strategy (rows: sizes, columns: overlaps)."""

    cellClicked = Signal(object)
    """The Cell clicked (scored cells only)."""

    MIN_CELL = QSize(58, 34)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.strategies: tuple[str, ...] = ()
        self.sizes: tuple[int | None, ...] = ()
        self.overlaps: tuple[int | None, ...] = ()
        self.cells: dict[tuple[str, int | None, int | None], Cell] = {}
        self._units: dict[str, str] = {}
        """Each strategy's `unit_note`, its column's header beside the name (made with the grid)."""
        self.current: Any = None
        self.best: Any = None
        self.layer = "hit_rate"
        """What the colour and the number show: a key of LAYERS."""
        self.rates: Any = None
        """The bill's rates for the cost layers (`bill.Rates`)."""
        self._rects: list[tuple[QRectF, Cell]] = []
        self.setMouseTracking(True)
        self.setMinimumSize(240, 140)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)

    # -- data ----------------------------------------------------------------------------------------
    def set_grid(self, strategies: Sequence[str], sizes: Sequence[int | None], overlaps: Sequence[int | None],
                 cells: dict[tuple[str, int | None, int | None], Cell]) -> None:
        self.strategies, self.sizes, self.overlaps = tuple(strategies), tuple(sizes), tuple(overlaps)
        self._units = {s: unit_note(s) for s in self.strategies}
        self.cells = dict(cells)
        scored = [c for c in self.cells.values() if c.row is not None]
        self.best = None
        if scored:
            from inspector.core.api import rank_key

            self.best = min(scored, key=lambda c: rank_key(c.row)).config
        self.updateGeometry()
        self.update()

    def set_current(self, config: Any) -> None:
        self.current = config
        self.update()

    def set_layer(self, layer: str, rates: Any = None) -> None:
        """Colour the cells by hit rate or by a bill layer; costs: cheap is bright, like a high rate."""
        if layer not in LAYERS:
            raise ValueError(f"unknown layer {layer!r}")
        self.layer, self.rates = layer, rates
        self.update()

    def value(self, cell: Cell) -> float | None:
        return layer_value(cell, self.layer, self.rates)

    def cell_rects(self) -> list[tuple[QRectF, Cell]]:
        """Where each cell was last painted (tests click them)."""
        return list(self._rects)

    def rate_range(self) -> tuple[float, float]:
        rates = [v for v in (self.value(c) for c in self.cells.values()) if v is not None]
        return (min(rates), max(rates)) if rates else (0.0, 1.0)

    def sizeHint(self) -> QSize:
        fm = self.fontMetrics()
        cols = max(1, len(self.overlaps))
        rows = max(1, len(self.sizes))
        label_w = fm.horizontalAdvance("size 20000") + 12
        w = len(self.strategies or ("",)) * (label_w + cols * self.MIN_CELL.width() + 24)
        h = rows * self.MIN_CELL.height() + 3 * fm.height() + 40
        return QSize(max(360, w), max(180, h))

    # -- painting ------------------------------------------------------------------------------------
    def paintEvent(self, _e) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        pal = self.palette()
        text = pal.color(pal.ColorRole.WindowText)
        muted = QColor(text)
        muted.setAlphaF(0.6)
        fm = QFontMetrics(self.font())
        self._rects = []
        if not self.strategies:
            p.setPen(muted)
            p.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, "Run a sweep to see hit rate by size and overlap")
            p.end()
            return
        lo, hi = self.rate_range()
        n = len(self.strategies)
        legend_h = fm.height() + 14
        block_w = (self.width() - 8) / n
        label_w = fm.horizontalAdvance("size 20000") + 10
        cols = max(1, len(self.overlaps))
        rows = max(1, len(self.sizes))
        top = fm.height() * 2 + 8
        cell_w = max(20.0, (block_w - label_w - 14) / cols)
        cell_h = max(18.0, min(56.0, (self.height() - top - legend_h - 8) / rows))
        bold = QFont(self.font())
        bold.setBold(True)
        small = QFont(self.font())
        small.setPointSizeF(max(7.0, self.font().pointSizeF() * 0.82))
        for si, strategy in enumerate(self.strategies):
            x0 = 4 + si * block_w
            p.setFont(bold)
            p.setPen(text)
            head = QRectF(x0, 2, block_w - 6, fm.height() + 2)
            p.drawText(head, Qt.AlignmentFlag.AlignLeft, strategy)
            note = self._units.get(strategy, "")
            if note:  # the unit of the sizes beside the name: "fixed_chars · characters"
                after = QFontMetrics(bold).horizontalAdvance(strategy + " ")
                p.setFont(self.font())
                p.setPen(muted)
                p.drawText(head.adjusted(after, 0, 0, 0), Qt.AlignmentFlag.AlignLeft,
                           fm.elidedText(f"· {note}", Qt.TextElideMode.ElideRight, int(max(0.0, head.width() - after))))
            p.setFont(small)
            p.setPen(muted)
            for ci, ov in enumerate(self.overlaps):
                r = QRectF(x0 + label_w + ci * cell_w, fm.height() + 4, cell_w, fm.height())
                p.drawText(r, Qt.AlignmentFlag.AlignCenter, "overlap" if ov is None else f"overlap {ov}")
            for ri, size in enumerate(self.sizes):
                y = top + ri * cell_h
                p.setFont(small)
                p.setPen(muted)
                p.drawText(QRectF(x0, y, label_w - 6, cell_h),
                           Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                           "default" if size is None else f"size {size}")
                for ci, ov in enumerate(self.overlaps):
                    cell = self.cells.get((strategy, size, ov))
                    rect = QRectF(x0 + label_w + ci * cell_w, y, cell_w, cell_h).adjusted(1, 1, -1, -1)
                    self._paint_cell(p, rect, cell, lo, hi, muted, bold, small)
                    if cell is not None and cell.row is not None:
                        self._rects.append((rect, cell))
        self._paint_legend(p, QRectF(8, self.height() - legend_h, min(320.0, self.width() - 16), legend_h),
                           lo, hi, muted, small)
        p.end()

    def _paint_cell(self, p: QPainter, rect: QRectF, cell: Cell | None, lo: float, hi: float, muted: QColor,
                    bold: QFont, small: QFont) -> None:
        if cell is None or cell.row is None:
            p.setPen(QPen(muted, 1.0, Qt.PenStyle.DotLine))
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.drawRoundedRect(rect, 3, 3)
            p.setFont(small)
            p.setPen(muted)
            label = "–" if cell is None or cell.config is None else "…"
            p.drawText(rect, Qt.AlignmentFlag.AlignCenter, label)
            return
        value = self.value(cell)
        if value is None:  # a bill layer without its price or measurement
            p.setPen(QPen(muted, 1.0, Qt.PenStyle.DotLine))
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.drawRoundedRect(rect, 3, 3)
            p.setFont(small)
            p.setPen(muted)
            p.drawText(rect, Qt.AlignmentFlag.AlignCenter, "no price" if self.layer != "embed_seconds" else "–")
            return
        rate = value
        t = (rate - lo) / (hi - lo) if hi > lo else 1.0
        if self.layer != "hit_rate":
            t = 1.0 - t  # cheaper or faster is better: bright
        bg = ramp(t)
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(bg)
        p.drawRoundedRect(rect, 3, 3)
        ink = _ink(bg)
        p.setPen(ink)
        exact = cell.exact_rate if self.layer == "hit_rate" else None
        if self.layer != "hit_rate":
            p.setFont(bold)
            p.drawText(rect, Qt.AlignmentFlag.AlignCenter, layer_text(rate, self.layer))
        elif exact is not None and rect.height() >= 30:
            p.setFont(bold)
            p.drawText(rect.adjusted(0, 1, 0, -rect.height() / 2), Qt.AlignmentFlag.AlignCenter, pct(rate, unit=""))
            p.setFont(small)
            p.drawText(rect.adjusted(0, rect.height() / 2 - 2, 0, 0), Qt.AlignmentFlag.AlignCenter,
                       f"exact {pct(exact, unit='')}")
        else:
            p.setFont(bold)
            p.drawText(rect, Qt.AlignmentFlag.AlignCenter, pct(rate, unit=""))
        tied = getattr(cell.row, "tied_with_best", False)
        if (self.best is not None and cell.config == self.best) or tied:
            p.setPen(QPen(self.palette().color(self.palette().ColorRole.WindowText), 2.5))
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.drawRoundedRect(rect.adjusted(1, 1, -1, -1), 3, 3)
        if self.current is not None and cell.config is not None and _same_chunking(cell.config, self.current):
            p.setPen(QPen(QColor(CURRENT_CELL), 2.0, Qt.PenStyle.DashLine))
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.drawRoundedRect(rect.adjusted(3, 3, -3, -3), 2, 2)

    def _paint_legend(self, p: QPainter, r: QRectF, lo: float, hi: float, muted: QColor, small: QFont) -> None:
        fm = QFontMetrics(small)
        p.setFont(small)
        if self.layer == "hit_rate":
            lo_text, hi_text = pct(lo), pct(hi)
        else:  # the bright end is the cheap one
            lo_text, hi_text = layer_text(hi, self.layer), layer_text(lo, self.layer)
        label = hi_text + "  " + LAYERS[self.layer] + " · framed: tied with the best"
        left = r.left() + fm.horizontalAdvance(lo_text) + 6
        room = self.width() - 8 - left  # the bar and the label after it, to the widget's edge
        # The bar gives way to the label (it was cut off at the dialog's edge: "tied with the be"),
        # down to 40 px; a label still too long is elided.
        bar = QRectF(left, r.top() + 4, max(40.0, min(r.width() - fm.horizontalAdvance(lo_text) - 6,
                                                      room - fm.horizontalAdvance(label) - 8)), 8)
        grad = QLinearGradient(QPointF(bar.left(), 0), QPointF(bar.right(), 0))
        for t, c in RAMP:
            grad.setColorAt(t, c)
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(grad)
        p.drawRoundedRect(bar, 3, 3)
        p.setPen(muted)
        p.drawText(QRectF(r.left(), r.top(), bar.left() - r.left() - 4, 16),
                   Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, lo_text)
        rest = max(0.0, self.width() - 4 - (bar.right() + 4))
        p.drawText(QRectF(bar.right() + 4, r.top(), rest, 16),
                   Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                   fm.elidedText(label, Qt.TextElideMode.ElideRight, int(rest)))

    # -- interaction ---------------------------------------------------------------------------------
    def cell_at(self, pos: QPointF) -> Cell | None:
        for rect, cell in self._rects:
            if rect.contains(pos):
                return cell
        return None

    def mousePressEvent(self, e) -> None:
        cell = self.cell_at(e.position())
        if cell is not None:
            self.cellClicked.emit(cell)

    def mouseMoveEvent(self, e) -> None:
        cell = self.cell_at(e.position())
        self.setCursor(Qt.CursorShape.PointingHandCursor if cell is not None else Qt.CursorShape.ArrowCursor)
        if cell is not None:
            QToolTip.showText(e.globalPosition().toPoint(), describe(cell, self.rates), self)
        else:
            QToolTip.hideText()


def _same_chunking(a: Any, b: Any) -> bool:
    return a.strategy == b.strategy and dict(a.params) == dict(b.params) and a.with_prefix == b.with_prefix


def describe(cell: Cell, rates: Any = None) -> str:
    """A cell's figures for its tooltip (with the bill when `rates` are given)."""
    if cell.row is None:
        return cell.reason or "not scored"
    r = cell.row.report
    lines = [cell.config.label(),
             f"hit rate {pct(r.hit_rate, unit='%')} ({r.hits}/{len(r.questions)}) · MRR {num(r.mrr)}"]
    if r.recall is not None:
        scope = r.span_scope()
        scope = f" (over {scope})" if scope else ""
        lines.append(f"recall {num(r.recall)} · precision {num(r.precision)} · IoU {num(r.iou)}{scope}")
    lines.append(f"{r.cost.chunks:,} chunks · {r.cost.embedded_tokens:,} embedded tokens")
    if cell.row.exact is not None:
        e = cell.row.exact
        lines.append(f"exact: hit rate {pct(e.hit_rate, unit='%')} · MRR {num(e.mrr)}")
    if getattr(cell.row, "tied_with_best", False):
        lines.append("tied with the best: the difference is within noise on these questions")
    if rates is not None:
        from inspector.core.api import bill_for, bill_parts

        lines += [part for part in bill_parts(bill_for(r, rates)).values() if part]
    lines.append("Click to apply these settings")
    return "\n".join(lines)
