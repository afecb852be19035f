"""A label that can shrink to one line: its text stays whole (`text()`), the view elides it.

Used where a panel is short (the gold panel's baseline line at 1024x700): the sentence would wrap
to four lines and push the list under it out of view; elided, it takes one line and shows the
rest in its tooltip. The one elided label of the window: the gold panel's head and figures, the
question bar's note and the audit panel's key hint all use it.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter, QPaintEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget


class ElidedLabel(QLabel):
    """A plain-text QLabel that, when `elide` is on, shows its first line elided to its width
    (an ellipsis marks what is left out; the tooltip holds the whole text)."""

    def __init__(self, text: str = "", parent: QWidget | None = None, *, whole_in_tip: bool = True) -> None:
        """`whole_in_tip`: an elided text is shown whole at the top of the tooltip (off where the
        tooltip already spells it out, as the audit panel's key hint does)."""
        super().__init__(text, parent)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self._elide = False
        self._tip = ""
        self._whole_in_tip = whole_in_tip

    @property
    def elide(self) -> bool:
        return self._elide

    def set_elide(self, on: bool) -> None:
        if on != self._elide:
            self._elide = on
            self.setWordWrap(not on)
            self.setSizePolicy(QSizePolicy.Policy.Ignored,
                               QSizePolicy.Policy.Fixed if on else QSizePolicy.Policy.Preferred)
            self.updateGeometry()
            self.update()
            self._update_tip()

    def setText(self, text: str) -> None:
        super().setText(text)
        self._update_tip()

    def setToolTip(self, tip: str) -> None:
        self._tip = tip
        self._update_tip()

    def shown_text(self) -> str:
        """What the label displays now (elided or whole)."""
        if not self._elide:
            return self.text()
        lines = self.text().split("\n")
        first = lines[0] + (" …" if len(lines) > 1 else "")
        return self.fontMetrics().elidedText(first, Qt.TextElideMode.ElideRight, max(1, self.contentsRect().width()))

    def _update_tip(self) -> None:
        elided = self._whole_in_tip and self._elide and self.shown_text() != self.text()
        super().setToolTip("\n".join(t for t in (self.text() if elided else "", self._tip) if t))

    def resizeEvent(self, e) -> None:
        super().resizeEvent(e)
        self._update_tip()

    def sizeHint(self) -> QSize:
        if self._elide:
            return QSize(super().sizeHint().width(), self.fontMetrics().height() + 2)
        return super().sizeHint()

    def minimumSizeHint(self) -> QSize:
        if self._elide:
            return QSize(10, self.fontMetrics().height() + 2)
        return super().minimumSizeHint()

    def paintEvent(self, e: QPaintEvent) -> None:
        if not self._elide:
            super().paintEvent(e)
            return
        p = QPainter(self)
        p.setPen(self.palette().color(self.foregroundRole()) if self.isEnabled()
                 else self.palette().color(self.palette().ColorGroup.Disabled, self.foregroundRole()))
        p.drawText(self.contentsRect(), int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter),
                   self.shown_text())
        p.end()
