"""Gold coverage: the document's sections with how many gold questions ask about each.

The headings as a tree (a text without headings: ten stretches of it), each with the number of gold
questions whose passage or answer lies in its own text and, in grey, under it with subsections.
Sections with text and no question are highlighted and counted in the line above; a click scrolls
the text there, so the next quick question can be written about it. Counts follow the gold set:
every save, undo or reload recounts (`inspector.core.evaluation.coverage`).

The count runs on a worker thread of its own latest-wins runner and only while the panel is shown
(a hidden panel marks itself stale and counts when shown): on a 20 MB document the Markdown parse
behind it took 12 s, and it froze the window on every open while it ran on the GUI thread. The
tree shows at most `MAX_ROWS` sections (filling a QTreeWidget with 30,000 items takes seconds);
the line above says how many were left out and the count covers all of them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, cast

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QPalette
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from inspector.core import api
from inspector.qt.controllers.retrieval import RetrievalController
from inspector.qt.controllers.state import InspectorState
from inspector.qt.runner import JobRunner, Progress
from inspector.qt.theme import Theme

if TYPE_CHECKING:
    from inspector.core.api import Coverage, Document

SECTION_ROLE = Qt.ItemDataRole.UserRole + 1
MAX_ROWS = 2_000
"""Sections listed in the tree at most (the summary line counts them all)."""


def coverage_job(doc: Document, questions: tuple) -> Callable[[Callable[[], bool], Progress], Iterator[object]]:
    """The count for `doc` and `questions`, on the runner's thread (the document's structure comes
    from the core's shared, locked cache)."""
    def job(_cancelled: Callable[[], bool], _progress: Progress) -> Iterator[object]:
        yield (doc, api.coverage(doc, questions))
    return job


def uncovered_color(palette: QPalette) -> QColor:
    """A warm background that reads on light and dark palettes alike (the theme's `uncovered`)."""
    return Theme.for_palette(palette).uncovered


class CoveragePanel(QWidget):
    """Sections of the current document and the gold questions about each; a click jumps there."""

    sectionChosen = Signal(object)
    """The Section clicked (the window scrolls the text to its start)."""

    def __init__(self, state: InspectorState, controller: RetrievalController,
                 parent: QWidget | None = None, *, synchronous: bool = False) -> None:
        super().__init__(parent)
        self.state = state
        self.controller = controller
        self.result: Coverage | None = None
        self.stale = True
        """The counts do not follow the current document and gold set yet (counted when shown)."""
        self.left_out = 0
        """Sections not listed in the tree (over MAX_ROWS)."""
        self.runner = JobRunner(self, synchronous=synchronous, name="coverage")
        self.runner.stageReady.connect(self._on_result)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.runner.errored.connect(lambda _rid, msg: self.summary.setText(f"Coverage could not be counted: {msg}"))
        self.only_uncovered = QCheckBox("Only sections without a question")
        self.tree = QTreeWidget()
        self.tree.setColumnCount(3)
        # Short headers: the dock is narrow and the section titles need the room.
        self.tree.setHeaderLabels(["Section", "Own", "All"])
        self.tree.setUniformRowHeights(True)
        self.tree.setIndentation(12)
        self.tree.setAlternatingRowColors(False)
        header = self.tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        self.tree.headerItem().setToolTip(1, "Gold questions whose passage (or answer) lies in the section's own "
                                             "text, up to its first subsection")
        self.tree.headerItem().setToolTip(2, "Gold questions in the section or any of its subsections")
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.only_uncovered)
        top.addStretch(1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.summary)
        lay.addLayout(top)
        lay.addWidget(self.tree, 1)
        self.tree.itemClicked.connect(self._on_item)
        self.tree.itemActivated.connect(self._on_item)
        self.only_uncovered.toggled.connect(lambda _on: self._fill())
        controller.goldChanged.connect(lambda _g: self.refresh())
        state.documentChanged.connect(lambda _d: self.refresh())
        self.refresh()

    def refresh(self) -> None:
        """Recount for the current document and gold set (when shown; else once it is)."""
        self.stale = True
        if not self.isVisible():
            return
        doc: Document | None = self.state.document
        if doc is None:
            self.runner.cancel()
            self.stale = False
            self.result = None
            self._fill()
            return
        qs = tuple(self.controller.gold.questions) if self.controller.gold is not None else ()
        if self.result is None or self.state.document is not doc:
            self.summary.setText("Counting the gold questions per section…")
        self.runner.submit(coverage_job(doc, qs))

    def _on_result(self, _rid: int, stage: object) -> None:
        doc, result = cast(tuple[api.Document, api.Coverage], stage)
        if doc is not self.state.document:
            return  # a newer document's count is on its way
        self.stale = False
        self.result = result
        self._fill()

    def showEvent(self, e) -> None:
        super().showEvent(e)
        if self.stale:
            self.refresh()

    def shutdown(self, timeout_ms: int = 30_000) -> None:
        self.runner.shutdown(timeout_ms)

    def _fill(self) -> None:
        self.tree.clear()
        r = self.result
        if r is None:
            self.summary.setText("Open a document to see which of its sections the gold set asks about.")
            return
        with_text = [s for s in r.sections if s.has_text]
        missing = r.uncovered
        if not r.sections:
            self.summary.setText("The document has no sections.")
            return
        doc = self.state.document
        words = "sections" if doc is not None and api.outline_of(doc).headings else "parts of the text"
        text = (f"<b>{len(missing)}</b> of {len(with_text)} {words} have no question yet"
                if missing else f"Every one of the {len(with_text)} {words} has a question")
        text += f" · {r.placed} question{'s' if r.placed != 1 else ''} placed"
        if r.unplaced:
            text += f", {r.unplaced} whose answer is not in the text"
        self.summary.setText(text)
        warm = QBrush(uncovered_color(self.palette()))
        bold = QFont(self.font())
        bold.setBold(True)
        only = self.only_uncovered.isChecked()
        shown = [s for s in r.sections if s.uncovered] if only else list(r.sections)
        self.left_out = max(0, len(shown) - MAX_ROWS)
        if self.left_out:
            self.summary.setText(text + f" · the first {MAX_ROWS:,} listed, {self.left_out:,} more not shown")
        stack: list[tuple[int, QTreeWidgetItem]] = []
        self.tree.setUpdatesEnabled(False)
        for s in shown[:MAX_ROWS]:
            item = QTreeWidgetItem([s.title, str(s.count) if s.has_text else "", str(s.total)])
            item.setData(0, SECTION_ROLE, s)
            item.setTextAlignment(1, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            item.setTextAlignment(2, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            item.setToolTip(0, " › ".join(s.path) or s.title)
            if s.uncovered:
                for col in range(3):
                    item.setBackground(col, warm)
                item.setFont(1, bold)
                item.setToolTip(1, "No gold question about this section's own text yet")
            if only:
                self.tree.addTopLevelItem(item)
                continue
            while stack and stack[-1][0] >= max(1, s.level):
                stack.pop()
            if stack:
                stack[-1][1].addChild(item)
            else:
                self.tree.addTopLevelItem(item)
            stack.append((max(1, s.level), item))
        self.tree.expandAll()
        self.tree.setUpdatesEnabled(True)

    def items(self) -> list[QTreeWidgetItem]:
        """Every row, in text order (tests)."""
        out: list[QTreeWidgetItem] = []

        def walk(item: QTreeWidgetItem | None) -> None:
            if item is None:
                return
            out.append(item)
            for i in range(item.childCount()):
                walk(item.child(i))

        for i in range(self.tree.topLevelItemCount()):
            walk(self.tree.topLevelItem(i))
        return out

    def _on_item(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        s = item.data(0, SECTION_ROLE)
        if isinstance(s, api.Section):
            self.sectionChosen.emit(s)


__all__ = ["CoveragePanel", "uncovered_color"]
