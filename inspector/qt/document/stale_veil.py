"""Out-of-date results look out of date: a veil and a "computing…" label over the text, the
statistics and the chunk table while the chunks they show are no longer the ones asked for.

Switching to a slow strategy (`semantic` embeds every sentence) used to leave the old strategy's
chunks and figures on screen under the new strategy's controls, for seconds, looking current.
`StaleMarker` decides when what is shown is stale: the chunking state is busy and the chunks on
screen are not those of the latest request (a debounced change still waiting, a request running,
or a new document whose chunks are not in yet). The later stages of the latest request (the
embedder's word pieces) are not stale: the chunks are already the new ones.

The veil appears only after `STALE_DELAY_MS`, so a fast re-chunk (milliseconds, the usual case
while dragging a slider) never flickers; it lifts as soon as the new chunks are in.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QEvent, QObject, QRect, QRectF, Qt, QTimer
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPaintEvent, QPalette
from PySide6.QtWidgets import QSplitter, QWidget

from inspector.qt.controllers.chunking import ChunkingController
from inspector.qt.controllers.state import InspectorState
from inspector.qt.theme import STALE_PILL, STALE_PILL_TEXT

#: Busy for longer than this before the veil shows (ms).
STALE_DELAY_MS = 300
#: How much of the base colour the veil lays over the stale content.
VEIL_ALPHA = 0.5


class StaleVeil(QWidget):
    """A translucent wash with a label over the whole of `target`; clicks pass through. A splitter
    would take the veil for one more pane, so over a splitter it is the splitter's sibling."""

    def __init__(self, target: QWidget) -> None:
        host = target.parentWidget() if isinstance(target, QSplitter) and target.parentWidget() else target
        super().__init__(host)
        self.target = target
        self.text = "computing…"
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents, True)
        self.setAttribute(Qt.WidgetAttribute.WA_NoSystemBackground, True)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        target.installEventFilter(self)
        self.setGeometry(self._area())
        self.hide()

    def _area(self) -> QRect:
        """The target's rectangle in the veil's parent."""
        t = self.target
        return t.rect() if self.parentWidget() is t else t.geometry()

    def set_text(self, text: str) -> None:
        if text != self.text:
            self.text = text
            self.update()

    def show_over(self) -> None:
        self.setGeometry(self._area())
        self.show()
        self.raise_()

    def eventFilter(self, obj: QObject, e: QEvent) -> bool:
        if obj is self.target and e.type() in (QEvent.Type.Resize, QEvent.Type.Move):
            self.setGeometry(self._area())
        return False

    def paintEvent(self, e: QPaintEvent) -> None:
        p = QPainter(self)
        pal = self.palette()
        wash = QColor(pal.color(QPalette.ColorRole.Base))
        wash.setAlphaF(VEIL_ALPHA)
        p.fillRect(self.rect(), wash)
        font = QFont(self.font())
        font.setBold(True)
        p.setFont(font)
        fm = QFontMetrics(font)
        w = min(self.width() - 8, fm.horizontalAdvance(self.text) + 24)
        h = fm.height() + 8
        rect = QRectF(self.width() - w - 8, 6, w, h)
        p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(STALE_PILL)
        p.drawRoundedRect(rect, h / 2, h / 2)
        p.setPen(QColor(STALE_PILL_TEXT))
        p.drawText(rect, Qt.AlignmentFlag.AlignCenter, fm.elidedText(self.text, Qt.TextElideMode.ElideRight,
                                                                   int(w) - 12))
        p.end()


class StaleMarker(QObject):
    """Veils `targets` while the chunks they show are not the latest request's."""

    def __init__(self, state: InspectorState, controller: ChunkingController, targets: Sequence[QWidget], *,
                 delay_ms: int = STALE_DELAY_MS, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.controller = controller
        self.veils = [StaleVeil(t) for t in targets]
        self.shown = False
        """Whether the veils are up now."""
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(delay_ms)
        self._timer.timeout.connect(self._show)
        state.busyChanged.connect(self._update)
        state.chunksChanged.connect(self._update)
        state.documentChanged.connect(self._update)
        controller.requested.connect(self._update)

    @property
    def delay_ms(self) -> int:
        return self._timer.interval()

    def set_delay_ms(self, ms: int) -> None:
        self._timer.setInterval(ms)

    def stale(self) -> bool:
        """The state is busy and the chunks on screen are not those of the latest request."""
        s = self.state
        if not s.busy or s.document is None:
            return False
        r = s.result
        return r is None or self.controller.pending or r.request_id != self.controller.runner.latest_id

    def label(self) -> str:
        s = self.state
        if s.result is None:
            return f"chunking {s.strategy}…"
        if self.controller.pending:
            return "re-chunking…"
        return f"computing {s.strategy}…"

    def _update(self, *_args) -> None:
        if self.stale():
            if self.shown:
                self._set_text()
            elif not self._timer.isActive():
                self._timer.start()
        else:
            self._timer.stop()
            if self.shown:
                self.shown = False
                for v in self.veils:
                    v.hide()

    def _set_text(self) -> None:
        text = self.label()
        for v in self.veils:
            v.set_text(text)
            v.setToolTip("")

    def _show(self) -> None:
        if not self.stale():
            return
        self.shown = True
        self._set_text()
        for v in self.veils:
            v.show_over()


__all__ = ["StaleMarker", "StaleVeil", "STALE_DELAY_MS"]
