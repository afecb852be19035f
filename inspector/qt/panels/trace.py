"""The hit-rate trace drawn under the size slider: one bar per scored notch, aligned with the notch.

Bars stand exactly under the slider positions they score (the slider's own style computes where
the handle would be), so the curve reads as "what the hit rate would be if I moved there". The
current position is a marker in the highlight colour under the line (its bar in that colour too),
its figure sits under the spin box, the best scored position is green, positions still being
scored are flat ticks. The vertical
scale spans at least ten points, so one question's difference does not look like a cliff. A
caption says what the bars are (exact embeddings or BM25, never the pooled preview) and, while
the figures above are the preview, that the two differ in kind. Hovering a bar gives its figures.
Everything is drawn from the core `Trace` snapshot and the slider's geometry: nothing here
computes a score.
"""

from __future__ import annotations

from PySide6.QtCore import QPoint, QPointF, QRectF, Qt, Slot
from PySide6.QtGui import QColor, QFont, QPainter, QPalette, QPen, QPolygonF
from PySide6.QtWidgets import QLabel, QSizePolicy, QStyle, QStyleOptionSlider, QToolTip, QVBoxLayout, QWidget

from inspector.core.api import pct
from inspector.core.viewmodel.trace import Trace, TracePoint
from inspector.qt.controllers.trace import TraceController
from inspector.qt.theme import Theme

#: Height of the bars' area, pixels.
PLOT_HEIGHT = 26
#: The vertical scale spans at least this much hit rate (ten points).
MIN_SPAN = 0.10
#: Height of the current-position marker under the baseline, pixels.
MARKER = 5


def caption(trace: Trace | None, *, preview: bool = False, unit: str = "") -> str:
    """The line under the bars: what they are, their range, the best one, what is pending."""
    if trace is None:
        return ""
    if trace.status and not trace.scored:
        return trace.status
    what = "BM25" if trace.kind == "bm25" else "Exact"
    text = f"{what} hit rate@{trace.k} at nearby {trace.param.replace('_', ' ')}s"
    scored = trace.scored
    if scored:
        rates = [p.score.hit_rate for p in scored if p.score is not None]
        lo, hi = min(rates), max(rates)
        best = trace.best()
        span = pct(lo) if lo == hi else f"{pct(lo, unit='')}–{pct(hi)}"
        text += f": {span}"
        if best and lo != hi:
            if len(best) <= 3:
                where = ", ".join(f"{p.value:g}" for p in best)
                text += f", best at {where}{' ' + unit if unit else ''}{_cost(best)}"
            else:
                text += f", {len(best)} of {len(scored)} tie for best"
    if trace.pending:
        text += f" · scoring {trace.pending} more…"
    if trace.status:
        text += f" · {trace.status}"
    if preview and trace.kind == "exact":
        text += " (exact embeddings; the live figure is the pooled preview)"
    return text


def _cost(best: tuple[TracePoint, ...]) -> str:
    """What the best positions cost: context tokens per question, and the embedder's cut where it
    cuts their chunks (a size the embedder truncates is never called best without saying so)."""
    parts = []
    ctx = [p.score.context_tokens for p in best if p.score is not None and p.score.context_tokens is not None]
    if ctx:
        parts.append(f"{min(ctx):,.0f}" + (f"–{max(ctx):,.0f}" if max(ctx) != min(ctx) else "")
                     + " context tokens/question")
    cut = [(p.value, p.score.truncated) for p in best if p.score is not None and p.score.truncated]
    if cut:
        v, share = max(cut, key=lambda x: x[1])
        parts.append(f"the embedder cuts {pct(share, digits=0)} of the chunks at {v:g}")
    return f" ({'; '.join(parts)})" if parts else ""


class TracePlot(QWidget):
    """The bars (see the module docstring); `control` is the size parameter's NumberControl."""

    def __init__(self, control: QWidget, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.control = control
        self.trace: Trace | None = None
        self.setFixedHeight(PLOT_HEIGHT)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setMouseTracking(True)
        slider = control.slider  # type: ignore[attr-defined]
        slider.valueChanged.connect(self.update)
        slider.rangeChanged.connect(self.update)

    # -- geometry ------------------------------------------------------------------------------
    def x_of(self, value: float) -> float:
        """The x (in this widget) of the handle's centre were the slider at `value`."""
        slider = self.control.slider  # type: ignore[attr-defined]
        scale = self.control.scale  # type: ignore[attr-defined]
        opt = QStyleOptionSlider()
        slider.initStyleOption(opt)
        style = slider.style()
        groove = style.subControlRect(QStyle.ComplexControl.CC_Slider, opt, QStyle.SubControl.SC_SliderGroove, slider)
        handle = style.subControlRect(QStyle.ComplexControl.CC_Slider, opt, QStyle.SubControl.SC_SliderHandle, slider)
        span = max(1, groove.width() - handle.width())
        last = max(1, scale.last)
        x = groove.x() + handle.width() / 2 + span * scale.fraction_of(value) / last
        window = self.window()
        origin = slider.mapTo(window, QPoint(0, 0)) - self.mapTo(window, QPoint(0, 0))
        return origin.x() + x

    def slider_right(self) -> float:
        slider = self.control.slider  # type: ignore[attr-defined]
        window = self.window()
        return float((slider.mapTo(window, QPoint(slider.width(), 0)) - self.mapTo(window, QPoint(0, 0))).x())

    def _y_range(self) -> tuple[float, float]:
        rates = [p.score.hit_rate for p in self.trace.scored] if self.trace is not None else []  # type: ignore[union-attr]
        if not rates:
            return 0.0, 1.0
        lo, hi = min(rates), max(rates)
        if hi - lo < MIN_SPAN:
            mid = (lo + hi) / 2
            lo, hi = mid - MIN_SPAN / 2, mid + MIN_SPAN / 2
            if lo < 0:
                lo, hi = 0.0, MIN_SPAN
            elif hi > 1:
                lo, hi = 1 - MIN_SPAN, 1.0
        return lo, hi

    def baseline(self) -> float:
        """y of the line the bars stand on (the current-position marker hangs below it)."""
        return self.height() - MARKER - 1.5

    def bar_rect(self, point: TracePoint) -> QRectF:
        """Where `point`'s bar is drawn (a flat tick on the baseline while it is pending)."""
        x = self.x_of(point.value)
        w = self._bar_width()
        bottom = self.baseline()
        if point.score is None:
            return QRectF(x - w / 2, bottom - 2, w, 2)
        lo, hi = self._y_range()
        t = (point.score.hit_rate - lo) / (hi - lo) if hi > lo else 1.0
        h = 3.0 + max(0.0, min(1.0, t)) * (bottom - 2.0 - 3.0)
        return QRectF(x - w / 2, bottom - h, w, h)

    def _bar_width(self) -> float:
        scale = self.control.scale  # type: ignore[attr-defined]
        if scale.last < 1:
            return 5.0
        gap = abs(self.x_of(scale.values[1]) - self.x_of(scale.values[0]))
        return max(2.0, min(6.0, gap - 1.0))

    def point_at(self, x: float) -> TracePoint | None:
        if self.trace is None or not self.trace.points:
            return None
        best = min(self.trace.points, key=lambda p: abs(self.x_of(p.value) - x))
        return best if abs(self.x_of(best.value) - x) <= 8 else None

    # -- drawing -------------------------------------------------------------------------------
    @Slot(object)
    def set_trace(self, trace: Trace | None) -> None:
        self.trace = trace
        self.update()

    def paintEvent(self, _e) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        pal = self.palette()
        theme = Theme.for_palette(pal)
        dark = theme.dark
        text = pal.color(QPalette.ColorRole.Text)
        muted = QColor(text)
        muted.setAlpha(80 if dark else 70)
        bar = QColor(text)
        bar.setAlpha(150 if dark else 110)
        best_color = theme.best_position
        accent = pal.color(QPalette.ColorRole.Highlight)
        if dark:
            accent = accent.lighter(130)
        bottom = self.baseline()
        scale = self.control.scale  # type: ignore[attr-defined]
        x0, x1 = self.x_of(scale.values[0]), self.x_of(scale.values[-1])
        p.setPen(QPen(muted, 1))
        p.drawLine(QPointF(x0, bottom + 0.5), QPointF(x1, bottom + 0.5))
        trace = self.trace
        best = {p.value for p in trace.best()} if trace is not None and len(trace.scored) > 1 else set()
        if trace is not None and len(best) == len(trace.scored):
            best = set()  # all equal: nothing stands out
        if trace is not None:
            p.setPen(Qt.PenStyle.NoPen)
            for pt in trace.points:
                if pt.score is None:
                    color = muted
                elif pt.current:
                    color = accent
                elif pt.value in best:
                    color = best_color
                else:
                    color = bar
                p.setBrush(color)
                p.drawRoundedRect(self.bar_rect(pt), 1.0, 1.0)
        # The current position, wherever the slider is now (scored or not): a marker under the line.
        x = self.x_of(self.control.value())  # type: ignore[attr-defined]
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(accent)
        p.drawPolygon(QPolygonF([QPointF(x, bottom + 1.5), QPointF(x - 4, bottom + 1.5 + MARKER),
                                 QPointF(x + 4, bottom + 1.5 + MARKER)]))
        # The current figure, under the spin box.
        here = next((pt for pt in trace.points if pt.current and pt.score is not None), None) if trace else None
        if here is not None and here.score is not None:
            f = QFont(self.font())
            f.setPointSizeF(max(6.5, f.pointSizeF() * 0.85))
            p.setFont(f)
            p.setPen(text)
            left = self.slider_right() + 6
            p.drawText(QRectF(left, 0, max(0.0, self.width() - left), self.height()),
                       int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), pct(here.score.hit_rate))
        p.end()

    def mouseMoveEvent(self, e) -> None:
        pt = self.point_at(e.position().x())
        if pt is None or self.trace is None:
            QToolTip.hideText()
            return
        unit = getattr(self.control.param, "unit", "")  # type: ignore[attr-defined]
        name = self.trace.param.replace("_", " ")
        if pt.score is None:
            tip = f"{name} {pt.value:g} {unit}: being scored"
        else:
            what = "BM25" if self.trace.kind == "bm25" else "exact embeddings"
            tip = (f"{name} {pt.value:g} {unit}: hit rate@{self.trace.k} {pct(pt.score.hit_rate)} "
                   f"({pt.score.hits}/{pt.score.questions}), {what}")
        QToolTip.showText(e.globalPosition().toPoint(), tip, self)


class TraceStrip(QWidget):
    """The trace under the size slider: bars and a caption, fed by a `TraceController`."""

    def __init__(self, controller: TraceController, control: QWidget, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.control = control
        self.plot = TracePlot(control)
        self.caption = QLabel()
        self.caption.setWordWrap(True)
        self.caption.setTextFormat(Qt.TextFormat.PlainText)
        self.caption.setEnabled(False)
        f = QFont(self.caption.font())
        f.setPointSizeF(max(6.5, f.pointSizeF() * 0.85))
        self.caption.setFont(f)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        lay.addWidget(self.plot)
        lay.addWidget(self.caption)
        controller.traceChanged.connect(self.set_trace)
        self.set_trace(controller.trace)

    @Slot(object)
    def set_trace(self, trace: Trace | None) -> None:
        """Show `trace` if it is about this control's parameter (hidden when there is none)."""
        param = getattr(self.control, "param", None)
        if trace is not None and param is not None and trace.param != param.name:
            trace = None
        self.plot.set_trace(trace)
        unit = getattr(param, "unit", "")
        self.caption.setText(caption(trace, preview=self.controller.preview_shown, unit=unit))
        self.plot.setVisible(trace is not None and bool(trace.points))
        self.setVisible(trace is not None)

    @property
    def trace(self) -> Trace | None:
        return self.plot.trace


__all__ = ["TraceStrip", "TracePlot", "caption"]
