"""A strip beside the scroll bar with every chunk boundary of the document, and marks on top.

Positions are fractions (0..1) of the document's source lines. The boundaries are drawn once into
a cached image whenever they or the strip's size change, so scrolling repaints only the image and
the viewport indicator. Other layers (retrieved chunks, gold answers) are added with `set_marks`.

With a pinned baseline (`set_compare`) the strip widens into two lanes: the baseline's boundaries
on the left, the current ones on the right, each change in its colour (`compare_lane`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QImage, QPainter, QPaintEvent
from PySide6.QtWidgets import QWidget

from inspector.qt import theme

if TYPE_CHECKING:
    import numpy as np
else:
    from inspector.core.api import lazy_numpy as np


@dataclass(frozen=True)
class MarkLayer:
    """One set of marks: fractions of the document, one colour, drawn `thickness` px high."""

    fractions: tuple[float, ...]
    color: QColor
    thickness: float = 3.0
    tooltip: str = ""


class OverviewStrip(QWidget):
    """Boundaries and marks of the whole document; clicking jumps there."""

    jumpRequested = Signal(float)
    """Fraction (0..1) of the document the user clicked."""

    WIDTH = 16
    COMPARE_WIDTH = 26
    """Width with a baseline lane beside the current boundaries."""
    TOOLTIP = "Chunk boundaries in the whole document; click to jump"

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFixedWidth(self.WIDTH)
        self.setToolTip(self.TOOLTIP)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self._boundaries: Sequence[float] | np.ndarray = ()  # no numpy before the first paint (issue 31)
        self._boundary_color = QColor(theme.QUIET)
        self._layers: dict[str, MarkLayer] = {}
        self._view = (0.0, 0.0)
        self._cache: QImage | None = None
        self._compare: Mapping[str, Sequence[tuple[Sequence[float], QColor]]] | None = None

    # -- data ----------------------------------------------------------------------------
    def set_boundaries(self, fractions: Sequence[float] | np.ndarray, color: QColor | None = None) -> None:
        """Every chunk boundary, as fractions of the document (any sequence or array; kept as an
        array: 50,000 boundaries of a 20 MB document are one vector operation, not a loop)."""
        self._boundaries = np.asarray(fractions, dtype=np.float64).reshape(-1)
        if color is not None:
            self._boundary_color = QColor(color)
            self._boundary_color.setAlphaF(min(self._boundary_color.alphaF(), 0.45))
        self._cache = None
        self.update()

    def set_marks(self, name: str, fractions: Sequence[float], color: QColor | None = None,
                  thickness: float = 3.0, tooltip: str = "") -> None:
        """A named layer of marks drawn over the boundaries (e.g. "retrieved"); an empty sequence
        removes the layer."""
        if not len(fractions):
            self._layers.pop(name, None)
        else:
            self._layers[name] = MarkLayer(tuple(float(f) for f in fractions),
                                           QColor(color if color is not None else theme.MARK), thickness,
                                           tooltip)
        self._cache = None
        self.update()

    def set_compare(self, lanes: Mapping[str, Sequence[tuple[Sequence[float], QColor]]] | None,
                    tooltip: str = "") -> None:
        """Two lanes: `lanes["before"]` (the baseline's boundaries) on the left and the current
        boundaries on the right with `lanes["after"]` over them, each a sequence of (fractions,
        colour); None goes back to one lane."""
        self._compare = lanes
        self.setFixedWidth(self.COMPARE_WIDTH if lanes is not None else self.WIDTH)
        self.setToolTip(tooltip or self.TOOLTIP if lanes is not None else self.TOOLTIP)
        self._cache = None
        self.update()

    @property
    def comparing(self) -> bool:
        return self._compare is not None

    def marks(self, name: str) -> tuple[float, ...]:
        layer = self._layers.get(name)
        return layer.fractions if layer else ()

    @property
    def boundaries(self) -> Sequence[float] | np.ndarray:
        return self._boundaries

    def set_view(self, first: float, last: float) -> None:
        """The part of the document in view, to draw as a translucent box."""
        if (first, last) != self._view:
            self._view = (first, last)
            self.update()

    # -- painting ------------------------------------------------------------------------
    def sizeHint(self) -> QSize:
        return QSize(16, 100)

    def _render(self) -> QImage:
        dpr = self.devicePixelRatioF()
        img = QImage(max(1, int(self.width() * dpr)), max(1, int(self.height() * dpr)),
                     QImage.Format.Format_ARGB32_Premultiplied)
        img.setDevicePixelRatio(dpr)
        img.fill(Qt.GlobalColor.transparent)
        p = QPainter(img)
        h = float(self.height())
        w = float(self.width())
        # Boundaries: one hairline each; thousands of them on one pixel row just overdraw.
        left, right = 2, int(w) - 3
        if self._compare is not None:
            mid = int(w) // 2
            for fractions, color in self._compare.get("before", ()):
                self._hairlines(p, fractions, color, left, mid - 2, h)
            left = mid + 1
        self._hairlines(p, self._boundaries, self._boundary_color, left, right, h)
        if self._compare is not None:
            for fractions, color in self._compare.get("after", ()):
                self._hairlines(p, fractions, color, left, right, h)
        for layer in self._layers.values():
            for f in layer.fractions:
                y = f * (h - layer.thickness)
                p.fillRect(QRectF(0, y, w, layer.thickness), layer.color)
        p.end()
        return img

    @staticmethod
    def _hairlines(p: QPainter, fractions: Sequence[float] | np.ndarray, color: QColor, x0: int, x1: int,
                   h: float) -> None:
        """One line per pixel row that holds a boundary (thousands of boundaries share a row)."""
        if not len(fractions):
            return
        p.setPen(color)
        rows = np.unique((np.asarray(fractions, dtype=np.float64) * (h - 1)).astype(np.int64))
        for row in rows.tolist():
            p.drawLine(x0, row, x1, row)

    def paintEvent(self, e: QPaintEvent) -> None:
        p = QPainter(self)
        pal = self.palette()
        p.fillRect(self.rect(), pal.color(pal.ColorRole.AlternateBase))
        if self._cache is None or self._cache.deviceIndependentSize().toSize() != self.size():
            self._cache = self._render()
        p.drawImage(0, 0, self._cache)
        first, last = self._view
        if last > first:
            h = self.height()
            edge = QColor(pal.color(pal.ColorRole.Highlight))
            box = QColor(edge)
            box.setAlphaF(0.25)
            rect = QRectF(0.5, first * h, self.width() - 1.0, max(4.0, (last - first) * h))
            p.fillRect(rect, box)
            p.setPen(edge)
            p.drawRect(rect)
        p.end()

    def resizeEvent(self, e) -> None:
        self._cache = None
        super().resizeEvent(e)

    def mousePressEvent(self, e) -> None:
        if self.height() > 0:
            self.jumpRequested.emit(min(1.0, max(0.0, e.position().y() / self.height())))

    def mouseMoveEvent(self, e) -> None:
        if e.buttons() & Qt.MouseButton.LeftButton and self.height() > 0:
            self.jumpRequested.emit(min(1.0, max(0.0, e.position().y() / self.height())))
