"""A toolbar that keeps every action in view: where its buttons' texts do not fit, some buttons
show only their icons (named in their tooltips) before Qt would hide actions behind ».

At 1024x700 with a corpus open (the Document box shown) the main toolbar wanted 1,083 px and hid
Audit Mode, the one button without an icon, behind its extension menu. The buttons listed first
give way first; a button without an icon never does.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QToolBar, QToolButton


class ToolbarFit(QObject):
    """Fits `toolbar` to its width by dropping the text of `actions`' buttons, in that order."""

    def __init__(self, toolbar: QToolBar, actions: Sequence[QAction]) -> None:
        super().__init__(toolbar)
        self.toolbar = toolbar
        self.actions = list(actions)
        self._savings: dict[QToolButton, int] = {}
        """Pixels a button saves without its text (measured once, the first time it is needed)."""
        self._due = False
        toolbar.installEventFilter(self)

    def buttons(self) -> list[QToolButton]:
        out = []
        for a in self.actions:
            b = self.toolbar.widgetForAction(a)
            if isinstance(b, QToolButton) and not a.icon().isNull():
                out.append(b)
        return out

    def icon_only(self) -> list[QToolButton]:
        """The buttons showing only their icons now (tests)."""
        return [b for b in self.buttons() if b.toolButtonStyle() == Qt.ToolButtonStyle.ToolButtonIconOnly]

    def request(self) -> None:
        """Fit once the current burst of changes is done (an action shown, a resize)."""
        if not self._due:
            self._due = True
            QTimer.singleShot(0, self, self.fit)

    def fit(self) -> None:
        self._due = False
        tb = self.toolbar
        buttons = self.buttons()
        for b in buttons:
            if b not in self._savings:
                self._savings[b] = self._measure(b)
        short = {b for b in buttons if b.toolButtonStyle() == Qt.ToolButtonStyle.ToolButtonIconOnly}
        full = tb.sizeHint().width() + sum(self._savings[b] for b in short)
        need, drop = full, set()
        for b in buttons:
            if need <= tb.width():
                break
            drop.add(b)
            need -= self._savings[b]
        for b in buttons:
            style = Qt.ToolButtonStyle.ToolButtonIconOnly if b in drop else tb.toolButtonStyle()
            if b.toolButtonStyle() != style:
                b.setToolButtonStyle(style)

    def _measure(self, b: QToolButton) -> int:
        style = b.toolButtonStyle()
        b.setToolButtonStyle(self.toolbar.toolButtonStyle())
        with_text = b.sizeHint().width()
        b.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonIconOnly)
        saving = max(0, with_text - b.sizeHint().width())
        b.setToolButtonStyle(style)
        return saving

    def eventFilter(self, obj: QObject, e: QEvent) -> bool:
        if obj is self.toolbar and e.type() in (QEvent.Type.Resize, QEvent.Type.LayoutRequest,
                                                QEvent.Type.ActionAdded, QEvent.Type.ActionChanged):
            self.request()
        return False


__all__ = ["ToolbarFit"]
