"""Statistics of the current chunks: figures, a token histogram and flag shares; painted, not charted.

All numbers come from `inspector.core.chunking.stats.chunk_stats`, computed on the worker thread; this module
only formats and paints them.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFontMetrics, QPainter, QPen
from PySide6.QtWidgets import QGridLayout, QLabel, QSizePolicy, QVBoxLayout, QWidget

from inspector.core.api import pct
from inspector.qt.controllers.state import InspectorState
from inspector.qt.theme import FLAG_ORDER, Theme

if TYPE_CHECKING:
    from inspector.core.api import ChunkStats
    from inspector.qt.panels.bill_view import BillView


class Histogram(QWidget):
    """Chunk sizes in tokens: bars over round-number bins, with the strategy's budget marked."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.edges: tuple[int, ...] = ()
        self.counts: tuple[int, ...] = ()
        self.budget: int | None = None
        self.setMinimumHeight(110)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)

    def sizeHint(self) -> QSize:
        return QSize(260, 140)

    def set_data(self, edges: tuple[int, ...], counts: tuple[int, ...], budget: int | None = None) -> None:
        self.edges, self.counts, self.budget = edges, counts, budget
        self.update()

    def paintEvent(self, _e) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        theme = Theme.for_palette(self.palette())
        fm = QFontMetrics(self.font())
        w, h = self.width(), self.height()
        left, right, top, bottom = 6.0, 6.0, fm.height() + 2.0, fm.height() + 6.0
        plot = QRectF(left, top, max(1.0, w - left - right), max(1.0, h - top - bottom))
        p.setPen(theme.muted)
        if not self.counts:
            p.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, "No chunks")
            p.end()
            return
        lo, hi = self.edges[0], self.edges[-1]
        if self.budget is not None:
            hi = max(hi, self.budget + (self.edges[1] - self.edges[0]))
        span = max(1, hi - lo)
        peak = max(self.counts)
        bar_color = theme.bar(0)
        over = theme.flag("over_budget")
        for (a, b), c in zip(itertools.pairwise(self.edges), self.counts, strict=True):
            if not c:
                continue
            x0 = plot.left() + (a - lo) / span * plot.width()
            x1 = plot.left() + (b - lo) / span * plot.width()
            bh = c / peak * plot.height()
            color = over if self.budget is not None and a >= self.budget else bar_color
            p.fillRect(QRectF(x0 + 0.5, plot.bottom() - bh, max(1.0, x1 - x0 - 1.0), bh), color)
        p.setPen(QPen(theme.muted, 1.0))
        p.drawLine(QPointF(plot.left(), plot.bottom()), QPointF(plot.right(), plot.bottom()))
        p.drawText(QRectF(plot.left(), plot.bottom() + 2, plot.width(), fm.height()),
                   Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop, f"{lo:,}")
        p.drawText(QRectF(plot.left(), plot.bottom() + 2, plot.width(), fm.height()),
                   Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop, f"{hi:,} tokens")
        p.drawText(QRectF(plot.left(), 0, plot.width(), fm.height()), Qt.AlignmentFlag.AlignLeft,
                   f"{peak:,} chunks")
        if self.budget is not None and lo <= self.budget <= hi:
            x = plot.left() + (self.budget - lo) / span * plot.width()
            p.setPen(QPen(over, 1.4, Qt.PenStyle.DashLine))
            p.drawLine(QPointF(x, plot.top()), QPointF(x, plot.bottom()))
            p.drawText(QRectF(x - 100, 0, 96, fm.height()), Qt.AlignmentFlag.AlignRight, f"budget {self.budget}")
        p.end()


class ShareBar(QWidget):
    """A thin horizontal bar for a share 0..1 in a flag's colour."""

    def __init__(self, flag: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.flag = flag
        self.share = 0.0
        self.setFixedHeight(8)
        self.setMinimumWidth(60)

    def set_share(self, share: float) -> None:
        self.share = share
        self.update()

    def paintEvent(self, _e) -> None:
        p = QPainter(self)
        theme = Theme.for_palette(self.palette())
        track = QColor(theme.text)
        track.setAlphaF(0.10)
        p.fillRect(self.rect(), track)
        p.fillRect(QRectF(0, 0, self.width() * min(1.0, self.share), self.height()), theme.flag(self.flag))
        p.end()


class StatsPanel(QWidget):
    """Figures of `ChunkStats`, the histogram and a share bar per flag."""

    FIGURES = (("count", "Chunks"), ("tokens", "Tokens min / median / p95 / max"),
               ("total", "Tokens embedded"), ("document", "Tokens in the document"),
               ("inflation", "Overlap inflation"), ("pieces", "Embedder word pieces"), ("time", "Computed in"))

    def __init__(self, state: InspectorState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.stats: ChunkStats | None = None
        self.figures: dict[str, QLabel] = {}
        self.titles: dict[str, QLabel] = {}
        grid = QGridLayout()
        grid.setHorizontalSpacing(12)
        grid.setVerticalSpacing(3)
        for key, title in self.FIGURES:
            t = QLabel(title)
            t.setForegroundRole(t.foregroundRole())
            t.setStyleSheet("color: palette(placeholder-text);")
            v = QLabel("–")
            v.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            v.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            self.titles[key] = t
            self.figures[key] = v
        self._grid = grid
        self.stacked_rows: frozenset[str] | None = None
        """The figures shown under their titles (too wide beside them in the panel's width)."""
        self._place_figures(None)
        self.histogram = Histogram()
        self.shares: dict[str, tuple[ShareBar, QLabel]] = {}
        flags = QGridLayout()
        flags.setHorizontalSpacing(8)
        flags.setVerticalSpacing(4)
        theme = Theme.for_palette(self.palette())
        for row, f in enumerate(FLAG_ORDER):
            name = QLabel(theme.flag_label(f).capitalize())
            bar = ShareBar(f)
            share = QLabel("–")
            share.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            share.setMinimumWidth(QFontMetrics(share.font()).horizontalAdvance("100.0% (9999)"))
            flags.addWidget(name, row, 0)
            flags.addWidget(bar, row, 1)
            flags.addWidget(share, row, 2)
            self.shares[f] = (bar, share)
        flags.setColumnStretch(1, 1)
        self._flags = flags
        lay = QVBoxLayout(self)
        lay.addLayout(grid)
        lay.addWidget(self.histogram, 1)
        lay.addLayout(flags)
        self._layout = lay
        self.bill_view: BillView | None = None
        """The bill of the current chunks (`set_bill`): indexing cost and embedding time."""
        state.chunksChanged.connect(self.set_result)
        self._fit()

    # -- fitting the column -------------------------------------------------------------------------
    # Title and value side by side took 430 px once the token figures had four digits
    # ("1,454 / 1,536 / 1,536 / 1,541"); the left column is 300-390 px, and its scroll area cut the
    # values at the right edge. A value too wide beside its title goes under it, so the panel's
    # minimum is its widest single text, never a value cut off.
    def _widths(self) -> dict[str, tuple[int, int]]:
        return {key: (t.fontMetrics().horizontalAdvance(t.text()),
                      self.figures[key].fontMetrics().horizontalAdvance(self.figures[key].text()))
                for key, t in self.titles.items()}

    def _pad(self) -> int:
        layout = self.layout()
        m = layout.contentsMargins() if layout is not None else None
        return (m.left() + m.right() if m is not None else 0) + 4

    def _least(self) -> int:
        """The narrowest the panel can be: its widest single text (a value under its title), the
        flags' rows, the bill."""
        rest = self._flags.minimumSize().width()
        if self.bill_view is not None:
            rest = max(rest, self.bill_view.minimumSizeHint().width())
        return max([rest] + [max(tw, vw) for tw, vw in self._widths().values()]) + self._pad()

    def _place_figures(self, room: int | None) -> None:
        """Each value beside its title where both fit in `room` px (None: all of them), else under it."""
        gap, pad = self._grid.horizontalSpacing(), self._pad()
        beside = self._widths()
        if room is not None:
            # The titles beside their values share one column, the values another: move the widest
            # rows under their titles until the two columns fit.
            while beside and max(t for t, _v in beside.values()) + gap + max(v for _t, v in beside.values()) \
                    + pad > room:
                del beside[max(beside, key=lambda k: sum(beside[k]))]
        under = frozenset(self.titles) - frozenset(beside)
        if under == self.stacked_rows:
            return
        self.stacked_rows = under
        grid = self._grid
        for row, (key, _title) in enumerate(self.FIGURES):
            t, v = self.titles[key], self.figures[key]
            grid.removeWidget(t)
            grid.removeWidget(v)
            if key in under:
                grid.addWidget(t, 2 * row, 0, 1, 3)
                grid.addWidget(v, 2 * row + 1, 0, 1, 3)
            else:
                grid.addWidget(t, 2 * row, 0)
                grid.addWidget(v, 2 * row, 1, 1, 2)

    @property
    def stacked(self) -> bool:
        """Some value stands under its title (the column is too narrow for both on one line)."""
        return bool(self.stacked_rows)

    def _fit(self) -> None:
        least = self._least()
        if self.minimumWidth() != least:
            self.setMinimumWidth(least)
        self._place_figures(self.width())

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        # The window sizes its left column from this: the stacked width, not titles beside values.
        return QSize(self._least(), super().minimumSizeHint().height())

    def resizeEvent(self, e) -> None:
        super().resizeEvent(e)
        self._fit()

    def set_bill(self, bill) -> None:
        """Show the bill (`inspector.qt.controllers.bill.BillState`) below the flags."""
        from inspector.qt.panels.bill_view import BillView

        view = self.bill_view = BillView(bill)
        self._layout.addWidget(view)
        if self.stats is not None:
            view.set_counts(self.stats.count, self.stats.total_tokens)
        self._fit()

    def text(self, key: str) -> str:
        """The figure shown for `key` (see FIGURES), as displayed."""
        return self.figures[key].text()

    def share_text(self, flag: str) -> str:
        return self.shares[flag][1].text()

    def set_result(self, result) -> None:
        if result is None:
            self.stats = None
            if self.bill_view is not None:
                self.bill_view.clear()
            for v in self.figures.values():
                v.setText("–")
            self.histogram.set_data((), ())
            for bar, share in self.shares.values():
                bar.set_share(0.0)
                share.setText("–")
            self._fit()
            return
        s: ChunkStats = result.stats
        self.stats = s
        if self.bill_view is not None:
            self.bill_view.set_counts(s.count, s.total_tokens)
        count = f"{s.count:,}" + (f" (+ {s.parents:,} parents)" if s.parents else "")
        self.figures["count"].setText(count)
        if s.count:
            self.figures["tokens"].setText(f"{s.min_tokens:,} / {s.median_tokens:,.0f} / {s.p95_tokens:,.0f} / "
                                           f"{s.max_tokens:,}")
        else:
            self.figures["tokens"].setText("–")
        self.figures["total"].setText(f"{s.total_tokens:,}")
        self.figures["document"].setText(f"{s.document_tokens:,}")
        self.figures["inflation"].setText(f"× {s.inflation:.2f}")
        self.figures["inflation"].setToolTip("Tokens embedded / tokens in the document: above 1 when chunks "
                                             "overlap, below 1 when text is left out of every chunk")
        if s.embedded_word_pieces is None:
            self.figures["pieces"].setText("measuring…" if not result.complete else "–")
        else:
            dropped = f" ({s.dropped_word_pieces:,} dropped)" if s.dropped_word_pieces else ""
            self.figures["pieces"].setText(f"{s.embedded_word_pieces:,}{dropped}")
        self.figures["time"].setText(f"{result.seconds * 1000:,.0f} ms")
        self.histogram.set_data(s.bin_edges, s.bin_counts, _budget(result))
        for f, (bar, share) in self.shares.items():
            if f == "truncated_by_embedder" and not result.complete:
                bar.set_share(0.0)
                share.setText("…")
                continue
            bar.set_share(s.share(f))
            share.setText(f"{pct(s.share(f), unit='%')} ({s.flag_counts.get(f, 0):,})")
        self._fit()


def _budget(result) -> int | None:
    """The strategy's token budget, when it has one (its `size` in tokens)."""
    from inspector.core.api import get_strategy

    try:
        strat = get_strategy(result.request.strategy)
    except ValueError:
        return None
    params = strat.validate(result.request.params)
    units = {p.name: p.unit for p in strat.params}
    # The cap above which a chunk is over budget: markdown's hard cap, else the size.
    for name in ("hard_cap", "size", "child_size", "max_size"):
        if units.get(name) == "tokens":
            return int(params[name])
    return None
