"""Building a gold set in the window without an LLM: the quick question bar, the coverage view and
the drafts to review, and their menu entries, wired to the window in one place.

* Edit ▸ Quick Question (Ctrl+G): the bar under the text (`quick_gold`);
* Edit ▸ Draft Questions for Review… (Ctrl+Shift+D): the Drafts dock, beside the gold set
  (`drafts_panel`); the current draft's answer is marked in the text;
* Edit ▸ Gold Coverage: the Gold coverage dock, beside the statistics (`coverage`); a click on a
  section scrolls the text there.

Both docks start hidden and appear in View ▸ Panels.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QMainWindow

from inspector.qt.actions.make_action import make_action
from inspector.qt.panels.coverage import CoveragePanel
from inspector.qt.panels.drafts_panel import DraftsPanel
from inspector.qt.panels.quick_gold import GoldWriter, QuickGoldBar

if TYPE_CHECKING:
    from inspector.core.api import Draft, Section


class GoldTools(QObject):
    """The quick question bar, the coverage dock and the drafts dock of a main window."""

    def __init__(self, window: QMainWindow) -> None:
        super().__init__(window)
        w: Any = window
        self.window = w
        self.writer = GoldWriter(w.state, w.retrieval, w.gold_panel, w.messages, parent=w)
        history = getattr(w, "history", None)
        if history is not None:  # its writes are steps of Edit ▸ Undo, with the file's bytes
            history.connect_sources(self.writer)
        self.bar = QuickGoldBar(w.state, w.view, w.retrieval, self.writer)
        self.bar.hide()
        w.centralWidget().layout().addWidget(self.bar)

        self.coverage = CoveragePanel(w.state, w.retrieval, synchronous=w.retrieval.runner.synchronous)
        self.coverage_dock = w.add_panel(self.coverage, "Gold coverage", Qt.DockWidgetArea.LeftDockWidgetArea)
        w.dock_layout.tab_with(w.stats_dock, self.coverage_dock)
        self.coverage_dock.hide()
        self.drafts = DraftsPanel(w.state, w.retrieval, self.writer.add,
                                  synchronous=w.retrieval.runner.synchronous)
        self.drafts_dock = w.add_panel(self.drafts, "Drafts", Qt.DockWidgetArea.BottomDockWidgetArea)
        w.dock_layout.tab_with(w.gold_dock, self.drafts_dock)
        self.drafts_dock.hide()

        self.quick_action = make_action(w, "&Quick Question", self.open_quick, "Ctrl+G",
                                        "Select an answer in the text, type its question, Enter: saved with its span")
        self.drafts_action = make_action(w, "&Draft Questions for Review…", self.open_drafts, "Ctrl+Shift+D",
                                         "Propose questions from the document to accept (A), edit (E) or reject (R)")
        self.coverage_action = make_action(w, "Gold &Coverage", self.show_coverage, None,
                                           "Which sections of the document have no gold question yet")
        for a in w.menuBar().actions():
            if a.menu() is not None and a.text().replace("&", "") == "Edit":
                a.menu().addAction(self.quick_action)
                a.menu().addAction(self.drafts_action)
                a.menu().addAction(self.coverage_action)

        self.bar.coverageRequested.connect(self.show_coverage)
        self.coverage.sectionChosen.connect(self.show_section)
        self.drafts.draftShown.connect(self.show_draft)
        w.installEventFilter(self)

    def open_quick(self) -> None:
        self.bar.open_bar()

    def open_drafts(self) -> None:
        """Show the Drafts dock; draft the current document if it has no drafts yet."""
        self.drafts_dock.show()
        self.drafts_dock.raise_()
        if not self.drafts.items:
            self.drafts.draft()
        self.drafts.tree.setFocus()

    def show_coverage(self) -> None:
        self.coverage_dock.show()
        self.coverage_dock.raise_()
        self.coverage.refresh()

    def show_section(self, s: Section) -> None:
        self.window.view.scroll_to_offset(s.start, context_lines=1)

    def show_draft(self, d: Draft | None) -> None:
        """Mark the draft's answer in the text (and on the strip beside the scroll bar)."""
        w = self.window
        doc = w.state.document
        if d is None or doc is None or d.source != doc.doc_id:
            w.view.set_answer_spans((), reveal=False)
            w.strip.set_marks("answer", ())
            return
        from inspector.qt.controllers.chunk_jobs import _line_index
        from inspector.qt.document.hits import answer_color

        w.view.set_answer_spans([d.answer_span], reveal=True)
        w.strip.set_marks("answer", _line_index(doc).fractions([d.answer_span[0]]).tolist(),
                          answer_color(w.view.theme), 4.0, "Draft answer")

    def eventFilter(self, obj: QObject, e: QEvent) -> bool:
        if obj is self.window and e.type() == QEvent.Type.Close:
            self.drafts.shutdown()
            self.coverage.shutdown()
        return False
