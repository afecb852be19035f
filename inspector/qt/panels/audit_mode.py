"""Audit mode: the window rearranged for reading and judging a question's top-k chunks.

Evaluate ▸ Audit Mode (Ctrl+Shift+A, or the toolbar's Audit button) hides every dock but the
Reader, puts the Reader on the right at the window's full height and about 60 % of its width, and
shows its summary; the text stays on the left, where a click on a card (or Enter) shows the chunk.
Enter in the question field gives the keyboard to the cards (a click in the field takes it back).
Leaving the mode restores the layout exactly as it was (`saveState`/`restoreState`); closing the
window in audit mode leaves it first, so the saved layout is the user's own, not the audit's.

This module also connects the panel's ways out to the window: chunks shown in the text, the marks
added to the gold file (`GoldActions.add_questions`, no duplicate lines) and the summary exported
(`audit.export_summary`).
"""

from __future__ import annotations

import os
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QByteArray, QEvent, QObject, Qt, QTimer
from PySide6.QtWidgets import QDockWidget, QFileDialog, QMenu, QToolBar

from inspector.core import api
from inspector.core.api import InputError, write_failure
from inspector.qt.actions.make_action import make_action

if TYPE_CHECKING:
    from inspector.core.api import AuditSummary, GoldProposal

#: Share of the window's width the Reader takes in audit mode.
AUDIT_WIDTH = 0.6


def added_text(name: str, questions: Any, outcomes: Any, notes: Any = (), *, in_audit: bool = True) -> tuple[str, str]:
    """(status line, details) after marks went into gold file `name`: how many questions were
    added, updated or already there (short: the status bar of a 1024 px window holds ~70
    characters), and the proposal's notes; the details list each question."""
    counts = {o: sum(1 for x in outcomes if x == o) for o in ("added", "updated", "unchanged")}
    parts = [f"Added {counts['added']} question{'s' if counts['added'] != 1 else ''}"]
    if counts["updated"]:
        parts.append(f"updated {counts['updated']}")
    if counts["unchanged"]:
        parts.append(f"{counts['unchanged']} already there")
    text = ", ".join(parts) + f" in {name}"
    if notes:
        text += " · " + " · ".join(notes)
    words = {"added": "added", "updated": "updated", "unchanged": "already there"}
    details = "\n".join(f"{words.get(o, o)}: {q.question}" for q, o in zip(questions, outcomes, strict=True))
    if notes:
        details += "\n\n" + "\n".join(notes)
    if in_audit:
        details += "\n\nThe Gold set panel shows them once you leave Audit Mode."
    return text, details


class AuditMode(QObject):
    """The audit mode's action and layout, and the Reader's connections to the window."""

    def __init__(self, window: Any) -> None:  # the MainWindow (not imported, even for mypy: an import cycle)
        super().__init__(window)
        self.window: Any = window
        self.panel = window.reader
        self.dock: QDockWidget = window.reader_dock
        self.session = self.panel.session
        self.active = False
        self._saved: QByteArray | None = None
        self.action = make_action(window, "&Audit Mode", self.set_active, "Ctrl+Shift+A",
                                  "Read and judge a question's top-k chunks with the window to yourself "
                                  "(1/2/3 judge, J/K move, ]/[ next question)", checkable=True)
        for a in window.menuBar().actions():
            menu = a.menu()  # a QMenu, or None (PySide6's stubs say QObject)
            if isinstance(menu, QMenu) and a.text().replace("&", "") == "Evaluate":
                menu.addSeparator()
                menu.addAction(self.action)
        bar = window.findChild(QToolBar, "toolbar_main")
        if bar is not None:
            bar.addSeparator()
            bar.addAction(self.action)
        # Enter in the question field hands the keys to the cards: 1/2/3/J/K judge and move rather
        # than type into the question (a click in the field takes them back). Connected after the
        # bar's own Enter, which asks the question first.
        window.question_bar.field.returnPressed.connect(self._on_question_entered)
        self._pending: Any = None
        """A chunk of another document being shown: selected once that document's hits are in."""
        window.retrieval.resultReady.connect(self._on_result)
        window.retrieval.questionChanged.connect(lambda _q: setattr(self, "_pending", None))
        self.panel.chunkActivated.connect(self.show_chunk)
        self.panel.currentChanged.connect(lambda c: self.show_chunk(c, quiet=True) if self.active else None)
        self.panel.goldRequested.connect(self.add_gold)
        self.panel.exportRequested.connect(self.export)
        self.session.errored.connect(window.show_error)
        window.installEventFilter(self)

    # -- the layout ------------------------------------------------------------------------------
    def set_active(self, on: bool) -> None:
        on = bool(on)
        if on == self.active:
            return
        w = self.window
        layout = getattr(w, "dock_layout", None)
        with layout.arranging() if layout is not None else nullcontext():
            if on:
                self._saved = w.saveState()
                for d in w.findChildren(QDockWidget):
                    if d is not self.dock:
                        d.hide()
                if self.dock.isFloating():
                    self.dock.setFloating(False)
                w.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.dock)
                self.dock.show()
                self.dock.raise_()
                self.active = True
                self._widen()
                QTimer.singleShot(0, self, self._widen)  # again once the docks are laid out
                self.panel.set_roomy(True)
                self.panel.setFocus()
                current = self.panel.current_chunk()
                if current is not None:  # the text follows the current card from now on
                    self.show_chunk(current, quiet=True)
            else:
                self.active = False
                if self._saved is not None:
                    w.restoreState(self._saved)
                self._saved = None
                self.panel.set_roomy(False)
                hide_stray = getattr(w, "_hide_stray_tab_bars", None)
                if hide_stray is not None:
                    QTimer.singleShot(0, w, hide_stray)
                if layout is not None:
                    # The window may have crossed to the other arrangement's width meanwhile.
                    QTimer.singleShot(0, layout, layout.follow)
        if self.action.isChecked() != on:
            self.action.setChecked(on)

    def _on_question_entered(self) -> None:
        if self.active and self.window.question_bar.field.text().strip():
            self.panel.list.setFocus(Qt.FocusReason.OtherFocusReason)

    def _widen(self) -> None:
        if self.active:
            w = self.window
            w.resizeDocks([self.dock], [int(w.width() * AUDIT_WIDTH)], Qt.Orientation.Horizontal)

    def eventFilter(self, obj: QObject, e: QEvent) -> bool:
        if obj is self.window and e.type() == QEvent.Type.Close and self.active:
            self.set_active(False)  # before the window saves its layout
        elif obj is self.window and e.type() == QEvent.Type.Resize and self.active:
            # A resized window gives its new width to the text (the central widget): the Reader
            # keeps its share once the resize is done.
            QTimer.singleShot(0, self, self._widen)
        return False

    # -- the panel's ways out --------------------------------------------------------------------
    def show_chunk(self, chunk: Any, quiet: bool = False) -> None:
        """Show a card's chunk in the text: select it and scroll to it (its hit outline emphasised).
        A chunk of another document of the corpus shows that document first, and is selected and
        scrolled to once the question's hits for it are in. `quiet`: say nothing when it cannot be
        shown (the mode following the cards)."""
        w = self.window
        doc = w.state.document
        if doc is None:
            return
        self._pending = None
        if chunk.doc_id and chunk.doc_id != doc.doc_id:
            home = next((d for d in w.state.documents if d.doc_id == chunk.doc_id), None)
            if home is None:
                if not quiet:
                    w.show_message(f"That chunk is in {chunk.doc_id}, which is not open")
                return
            self._pending = chunk
            w.state.set_document(home)
            return
        r, chunks = w.retrieval.result, w.state.result
        if r is None or r.document is not doc or chunks is None or chunks.document is not doc:
            self._pending = chunk  # the document was just shown: its chunks and hits are on their way
            return
        if chunks.chunk(chunk.id) is not None:
            w.state.select(chunk.id)
        at = next((i for i, h in enumerate(w.view.hits) if (h.start, h.end) == (chunk.start, chunk.end)), None)
        if at is not None:
            w.view.goto_hit(at)
        else:
            w.view.scroll_to_offset(chunk.start, context_lines=2)

    def _on_result(self, result: Any) -> None:
        chunk = self._pending
        if chunk is not None and result.document.doc_id == chunk.doc_id and result.request.question:
            self.show_chunk(chunk)

    def add_gold(self, proposal: GoldProposal) -> bool:
        """Add Marked as Gold Questions: the marks' questions into the gold file (no duplicate
        lines). The status bar says what went in (Details… lists each question), since in audit
        mode the Gold set dock stays out of the way."""
        gold = self.window.gold
        ok = bool(gold.add_questions(proposal.questions))
        if not ok:
            for note in proposal.notes:
                self.window.show_message(note)
            return False
        path = self.window.retrieval.gold.path if self.window.retrieval.gold is not None else ""
        text, details = added_text(Path(path).name, proposal.questions, gold.last_outcomes, proposal.notes,
                                   in_audit=self.active)
        self.window.messages.info(text, details)
        return ok

    def export(self, summary: AuditSummary, path: str | os.PathLike[str] | None = None) -> bool:
        """Write the summary (Markdown or CSV by the file's extension); asks for the file when
        `path` is None."""
        if path is None:
            doc = self.window.state.document
            base = Path(doc.path).with_name(Path(doc.path).stem + ".audit.md") if doc is not None and doc.path \
                else Path("audit.md")
            path, _ = QFileDialog.getSaveFileName(self.window, "Export audit summary", str(base),
                                                  "Markdown (*.md);;CSV (*.csv)")
            if not path:
                return False
        try:
            api.export_summary(path, summary)
        except (InputError, OSError) as exc:
            self.window.show_error(write_failure(path, exc))
            return False
        self.window.show_message(f"Audit summary written to {Path(path).name}")
        return True


__all__ = ["AuditMode", "AUDIT_WIDTH", "added_text"]
