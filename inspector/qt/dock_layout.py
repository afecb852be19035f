"""Where the window's docks go, for the window's size: a laptop's 1280x800 and a 1024x700 window get
a readable text, not a column of one word per line.

Two arrangements, chosen by the window's width:

* wide (`COMPACT_BELOW` px and more): Strategy above Statistics/Documents on the left, the full
  height; Embedded text/Reader tabbed on the right; Chunks/Gold set tabbed below the text and the
  right column;
* compact (narrower): one column of tabs on the left (Strategy, Statistics, Documents, Embedded
  text, Reader), so the text keeps the width a right column would take, and Chunks/Gold set
  below it all, the window's full width, so the gold table keeps its columns.

Sizes follow the window: the side columns a share of its width within bounds, the bottom docks a
share of its height (a gold panel 208 px tall on a 1920x1200 screen hides its own buttons). The
side panels scroll inside their docks instead of forcing the window taller than the screen.

The arrangement follows the window's size until the user arranges the docks themselves (moves,
floats or closes one) or a saved arrangement is restored; View ▸ Reset Layout applies it again.
It also raises the Gold set tab when a gold set is loaded (the sample handbook opens with its
gold set: the figures are what the user came for).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtWidgets import QDockWidget, QFrame, QScrollArea, QWidget

#: Windows narrower than this get the compact arrangement.
COMPACT_BELOW = 1200
#: The left column: this share of the window's width, within these bounds (px), and never narrower
#: than its panels' controls.
LEFT_SHARE, LEFT_MIN, LEFT_MAX = 0.28, 300, 390
#: Compact: one column of five tabs, a little wider so their titles are not cut.
COMPACT_LEFT_SHARE = 0.35
#: The right column (wide arrangement).
RIGHT_SHARE, RIGHT_MIN, RIGHT_MAX = 0.25, 300, 460
#: The bottom docks (Chunks, Gold set): this share of the window's height.
BOTTOM_SHARE, BOTTOM_MIN, BOTTOM_MAX = 0.38, 230, 480
#: The text never narrower than this when the docks are placed by the window (px).
TEXT_MIN_WIDTH = 360


def clamp(value: float, lo: int, hi: int) -> int:
    return int(max(lo, min(hi, value)))


def scrollable(widget: QWidget) -> QScrollArea:
    """`widget` in a frameless scroll area that resizes it: a panel taller than its dock scrolls
    instead of raising the window's minimum height (the statistics alone need ~360 px)."""
    area = QScrollArea()
    area.setWidget(widget)
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
    return area


class DockLayout(QObject):
    """Places the window's docks for its size, and keeps doing so until the user takes over."""

    def __init__(self, window: Any) -> None:  # the MainWindow (not imported, even for mypy: an import cycle)
        """`window`: the `MainWindow` (its docks, panels and retrieval state; not imported here,
        even for mypy only, which would make an import cycle)."""
        super().__init__(window)
        self.window = window
        self.auto = True
        """Follow the window's size (until the user arranges docks or a saved layout is restored)."""
        self.compact: bool | None = None
        """The arrangement applied last (None: none yet)."""
        self._applying = False
        self._gold = None
        self._pending = False
        self._tabbed: list[tuple[QDockWidget, QDockWidget]] = []
        """Docks added later (`tab_with`), each tabbed with an anchor dock on every arrangement."""
        central = window.centralWidget()  # the document view, set before the docks
        if central is not None:
            central.setMinimumWidth(TEXT_MIN_WIDTH)
        for dock in self.side_docks():
            dock.dockLocationChanged.connect(self._user_arranged)
            dock.topLevelChanged.connect(self._user_arranged)
            dock.toggleViewAction().triggered.connect(self._user_arranged)
        window.installEventFilter(self)
        # The strategy panel grows when the slider trace appears (after the layout was applied):
        # give its dock the height again rather than leave the new rows behind a scroll bar.
        window.strategy_panel.installEventFilter(self)
        self._refit_due = False
        window.retrieval.goldChanged.connect(self._on_gold)

    # -- which docks -----------------------------------------------------------------------------
    def side_docks(self) -> list[QDockWidget]:
        w = self.window
        return [w.strategy_dock, w.stats_dock, w.corpus_dock, w.detail_dock, w.reader_dock, w.table_dock,
                w.gold_dock] + [d for _anchor, d in self._tabbed]

    def tab_with(self, anchor: QDockWidget, dock: QDockWidget) -> None:
        """Keep `dock` (a panel added after the window's own) tabbed with `anchor` whatever the
        arrangement: without this, re-arranging moves the anchor and leaves the dock where it was."""
        self._tabbed.append((anchor, dock))
        dock.dockLocationChanged.connect(self._user_arranged)
        dock.topLevelChanged.connect(self._user_arranged)
        dock.toggleViewAction().triggered.connect(self._user_arranged)
        self.window.tabifyDockWidget(anchor, dock)

    def held(self) -> bool:
        """Another arrangement holds the window (audit mode): the docks are left as they are until
        it ends (`follow`), and nothing it moves counts as the user's arranging."""
        mode = getattr(self.window, "audit_mode", None)
        return bool(mode is not None and mode.active)

    @contextmanager
    def arranging(self) -> Iterator[None]:
        """Docks moved inside this block are the program's doing, not the user's (audit mode's
        moves would otherwise stop the layout following the window's size)."""
        was, self._applying = self._applying, True
        try:
            yield
        finally:
            self._applying = was

    def follow(self) -> None:
        """The arrangement for the window's size now, if it follows the size and another one
        (of the other width class) is in place (after audit mode)."""
        if self.auto and not self.held() and self.compact is not None \
                and self.mode_for(self.window.width()) != self.compact:
            self.apply()

    def mode_for(self, width: int) -> bool:
        """True (compact) for a window narrower than COMPACT_BELOW."""
        return width < COMPACT_BELOW

    # -- applying --------------------------------------------------------------------------------
    def request(self) -> None:
        """Apply once the window is laid out (now if it is shown, else on its first show)."""
        if self.window.isVisible():
            self.apply()
        else:
            self._pending = True

    def apply(self, *, arrange: bool = True) -> None:
        """Arrange the docks for the window's current size and size them."""
        w = self.window
        compact = self.mode_for(w.width())
        self._applying = True
        try:
            if arrange or compact != self.compact:
                self._arrange(compact)
            self.compact = compact
            self._size(compact)
        finally:
            self._applying = False
        QTimer.singleShot(0, w, w._hide_stray_tab_bars)

    def reset(self) -> None:
        """View ▸ Reset Layout: back to the arrangement for this size, following it again."""
        self.auto = True
        for dock in (self.window.strategy_dock, self.window.stats_dock, self.window.table_dock,
                     self.window.detail_dock):
            dock.show()
        self.apply()

    def _arrange(self, compact: bool) -> None:
        w = self.window
        L, R, B = (Qt.DockWidgetArea.LeftDockWidgetArea, Qt.DockWidgetArea.RightDockWidgetArea,
                   Qt.DockWidgetArea.BottomDockWidgetArea)
        hidden = {d: d.isHidden() for d in self.side_docks()}
        for d in self.side_docks():
            if d.isFloating():
                d.setFloating(False)
        # Compact: the bottom docks take the bottom-left corner (the window's full width).
        w.setCorner(Qt.Corner.BottomLeftCorner,
                    Qt.DockWidgetArea.BottomDockWidgetArea if compact else Qt.DockWidgetArea.LeftDockWidgetArea)
        w.setCorner(Qt.Corner.BottomRightCorner, Qt.DockWidgetArea.BottomDockWidgetArea)
        w.addDockWidget(L, w.strategy_dock)
        if compact:
            for d in (w.stats_dock, w.corpus_dock, w.detail_dock, w.reader_dock):
                w.tabifyDockWidget(w.strategy_dock, d)
        else:
            w.splitDockWidget(w.strategy_dock, w.stats_dock, Qt.Orientation.Vertical)
            w.tabifyDockWidget(w.stats_dock, w.corpus_dock)
            w.addDockWidget(R, w.detail_dock)
            w.tabifyDockWidget(w.detail_dock, w.reader_dock)
        w.addDockWidget(B, w.table_dock)
        w.tabifyDockWidget(w.table_dock, w.gold_dock)
        for anchor, d in self._tabbed:
            w.tabifyDockWidget(anchor, d)
        for d, was_hidden in hidden.items():
            d.setHidden(was_hidden)
        (w.gold_dock if w.retrieval.gold is not None and not w.gold_dock.isHidden() else w.table_dock).raise_()
        if compact:
            w.strategy_dock.raise_()
        else:
            w.stats_dock.raise_()
            w.detail_dock.raise_()

    def _size(self, compact: bool) -> None:
        w = self.window
        width, height = w.width(), w.height()
        h, v = Qt.Orientation.Horizontal, Qt.Orientation.Vertical
        bar = w.style().pixelMetric(w.style().PixelMetric.PM_ScrollBarExtent)
        controls = max(w.strategy_panel.minimumSizeHint().width(), w.stats_panel.minimumSizeHint().width() + bar)
        left = max(controls + 6, clamp(width * (COMPACT_LEFT_SHARE if compact else LEFT_SHARE), LEFT_MIN, LEFT_MAX))
        docks, widths = [w.strategy_dock], [left]
        if not compact and not w.detail_dock.isHidden():
            docks.append(w.detail_dock)
            widths.append(clamp(width * RIGHT_SHARE, RIGHT_MIN, RIGHT_MAX))
        elif not compact and not w.reader_dock.isHidden():
            docks.append(w.reader_dock)
            widths.append(clamp(width * RIGHT_SHARE, RIGHT_MIN, RIGHT_MAX))
        w.resizeDocks(docks, widths, h)
        bottom = clamp(height * BOTTOM_SHARE, BOTTOM_MIN, BOTTOM_MAX)
        w.resizeDocks([w.table_dock], [bottom], v)
        if not compact:
            self._size_column()

    def _size_column(self) -> None:
        """The strategy panel as tall as its controls want (at most half the column): the tabs
        below get the rest."""
        w = self.window
        hint = w.strategy_panel.sizeHint().height() + 28
        column = max(1, w.height() - 120)
        w.resizeDocks([w.strategy_dock, w.stats_dock], [min(hint, column // 2), max(1, column - hint)],
                      Qt.Orientation.Vertical)

    def _refit_column(self) -> None:
        self._refit_due = False
        w = self.window
        if self.auto and self.compact is False and not self.held() and not w.strategy_dock.isFloating() \
                and w.strategy_dock.height() < w.strategy_panel.sizeHint().height() + 28:
            self._applying = True
            try:
                self._size_column()
            finally:
                self._applying = False

    # -- reactions -------------------------------------------------------------------------------
    def _user_arranged(self, *_args) -> None:
        if not self._applying and self.window.isVisible():
            self.auto = False

    def eventFilter(self, obj: QObject, e: QEvent) -> bool:
        if obj is self.window.strategy_panel:
            if e.type() == QEvent.Type.LayoutRequest and not self._refit_due:
                self._refit_due = True
                QTimer.singleShot(0, self.window, self._refit_column)
            return False
        if obj is self.window:
            if e.type() == QEvent.Type.Show and self._pending:
                self._pending = False
                QTimer.singleShot(0, self.window, self.apply)
            elif e.type() == QEvent.Type.Resize and self.auto and self.compact is not None \
                    and self.mode_for(self._width()) != self.compact and not self.held():
                # Crossing COMPACT_BELOW: the other arrangement, once the resize is done.
                QTimer.singleShot(0, self.window, self.follow)
        return False

    def _width(self) -> int:
        return int(self.window.width())

    def _on_gold(self, gold) -> None:
        """A gold set loaded (not the same one seen again on a document switch): show its tab."""
        if gold is not None and gold is not self._gold and not self.held():
            w = self.window
            w.gold_dock.show()
            w.gold_dock.raise_()
        self._gold = gold


__all__ = ["DockLayout", "COMPACT_BELOW", "TEXT_MIN_WIDTH", "scrollable"]
