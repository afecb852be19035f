"""The quick question bar: a gold set typed at the speed of reading.

Edit ▸ Quick Question (Ctrl+G) opens a bar under the text. The text selected in the document is
the answer, and its span the reference; the question field has the focus: type, Enter, and the
question is in the gold file (one atomic write), the field is empty for the next one and the
counter says how many questions the document has. Selecting the next answer with the mouse puts
the focus back in the field. Ctrl+Z (or Undo) takes the last saved question out of the file again
(one atomic write; a question that had updated an existing line puts that line back). Esc closes.

Questions go to the open gold file when it is JSON Lines, else to `<stem>.gold.jsonl` beside the
document (created, and loaded from then on): a keyboard flow has no room for a file dialog. Only a
document that is not on disk asks where to write.

`GoldWriter` is the part without widgets that the bar and the drafts panel share: it writes,
remembers what an undo needs, and reloads the gold set.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QKeyEvent, QKeySequence, QShortcut, QTextCursor
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QSizePolicy,
    QToolButton,
    QWidget,
)

from inspector.core import api
from inspector.core.api import InputError, write_failure
from inspector.qt.controllers.retrieval import RetrievalController
from inspector.qt.controllers.state import InspectorState
from inspector.qt.document.view import DocumentView
from inspector.qt.messages import MessageCenter
from inspector.qt.panels.gold_panel import GoldPanel

if TYPE_CHECKING:
    from inspector.core.api import Document, GoldQuestion

JSONL = (".jsonl", ".ndjson")


@dataclass(frozen=True, slots=True)
class Saved:
    """One write `GoldWriter.undo` can take back."""

    path: str
    question: GoldQuestion
    previous: str | None
    """The line before the write, as it was in the file (None: the question was appended)."""


def _short(text: str, n: int = 40) -> str:
    return text if len(text) <= n else text[:n - 1] + "…"


def _bytes(path: str | Path) -> bytes | None:
    """The file's bytes before a write (None: it does not exist or cannot be read)."""
    try:
        return Path(path).read_bytes()
    except OSError:
        return None


def document_questions(controller: RetrievalController, doc: Document | None) -> int:
    """Questions of the loaded gold set about `doc` (or about no document in particular)."""
    gold = controller.gold
    if gold is None or doc is None:
        return 0
    return sum(1 for q in gold.questions if q.source in (None, doc.doc_id))


class GoldWriter(QObject):
    """Adds questions to the gold file of the current document, with an undo stack."""

    saved = Signal(object)
    """The GoldQuestion just written (added or updated)."""
    undone = Signal(object)
    """The GoldQuestion whose write was taken back."""
    aboutToReplace = Signal(str)
    """A question is about to be written to (or taken out of) the gold file and the gold set
    reloaded: the window's undo history keeps what is there now (as for Add to Gold Set…)."""
    fileWritten = Signal(str, object)
    """(path, its bytes before the write or None when it did not exist): the gold file was written.
    The history then knows the reloaded gold set is this write's doing, not a replacement."""

    def __init__(self, state: InspectorState, controller: RetrievalController, panel: GoldPanel,
                 messages: MessageCenter, *, ask_path: Callable[[Path], str] | None = None,
                 parent: QObject | None = None) -> None:
        """`ask_path(suggestion)` names a file when the document has none beside it (default: a
        save dialog); '' cancels."""
        super().__init__(parent)
        self.state = state
        self.controller = controller
        self.panel = panel
        self.messages = messages
        self._ask_path = ask_path or self._dialog
        self.history: list[Saved] = []
        """Writes of this session, the last one first to be undone."""

    def target(self) -> Path | None:
        """Where new questions go: the open JSONL gold file, else `<stem>.gold.jsonl` beside the
        document, else (a document not on disk) the file the user names."""
        gold = self.controller.gold
        if gold is not None and Path(gold.path).suffix.lower() in JSONL:
            return Path(gold.path)
        doc = self.state.document
        if doc is None:
            return None
        if doc.path:
            p = Path(doc.path)
            return p.with_name(p.stem + ".gold.jsonl")
        chosen = self._ask_path(Path("gold.jsonl"))
        return Path(chosen) if chosen else None

    def _dialog(self, suggestion: Path) -> str:
        owner = self.parent()
        parent = owner if isinstance(owner, QWidget) else None
        path, _ = QFileDialog.getSaveFileName(parent, "Save gold questions to", str(suggestion),
                                              "JSON Lines (*.jsonl)")
        return path

    def add(self, q: GoldQuestion) -> str | None:
        """Write one question (`add_questions`: never a duplicate line) and reload the gold set;
        returns "added", "updated" or "unchanged", or None when nothing could be written."""
        path = self.target()
        if path is None:
            return None
        self.aboutToReplace.emit(f"Add question “{_short(q.question)}”")
        before = _bytes(path)
        try:
            previous = api.question_line(path, q)
            outcome = api.add_questions(path, (q,))[0]
        except (InputError, OSError) as exc:
            self.messages.error(write_failure(path, exc))
            return None
        if outcome != "unchanged":
            self.history.append(Saved(str(path), q, previous))
            self.fileWritten.emit(str(path), before)
        self.panel.open_gold(path)
        if outcome != "unchanged":
            self.saved.emit(q)
        return outcome

    def undo(self) -> GoldQuestion | None:
        """Take the last write back (remove the line, or put the old one back); reload."""
        if not self.history:
            self.messages.info("nothing to undo")
            return None
        last = self.history.pop()
        self.aboutToReplace.emit(f"Remove question “{_short(last.question.question)}”")
        before = _bytes(last.path)
        try:
            found = api.remove_question(last.path, last.question, restore=last.previous)
        except (InputError, OSError) as exc:
            self.messages.error(write_failure(last.path, exc))
            return None
        if not found:
            self.messages.error(f"“{last.question.question}” is no longer in {Path(last.path).name}")
            return None
        self.fileWritten.emit(last.path, before)
        if Path(last.path).read_bytes().strip():
            self.panel.open_gold(last.path)
        else:
            # The file's only question was taken back: no gold set (loading an empty file is an error).
            self.controller.set_gold(None)
        self.undone.emit(last.question)
        return last.question


class QuickGoldBar(QWidget):
    """Answer = the selected text; type the question; Enter saves; Ctrl+Z undoes; Esc closes."""

    closed = Signal()
    coverageRequested = Signal()

    def __init__(self, state: InspectorState, view: DocumentView, controller: RetrievalController,
                 writer: GoldWriter, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("quick_gold_bar")
        self.state = state
        self.view = view
        self.controller = controller
        self.writer = writer
        self.answer_span: tuple[int, int] | None = None
        """Code-point span of the answer (the selection, trimmed), None when nothing is selected."""
        self.added = 0
        """Questions saved from this bar since the window opened (undone ones taken off)."""

        title = QLabel("<b>Quick question</b>")
        self.answer_label = QLabel()
        self.answer_label.setTextFormat(Qt.TextFormat.PlainText)
        self.answer_label.setMinimumWidth(120)
        self.answer_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.field = QLineEdit()
        self.field.setPlaceholderText("Question whose answer is the selected text — Enter saves")
        self.field.setClearButtonEnabled(True)
        self.counter = QLabel()
        self.counter.setToolTip("Questions about this document in the gold set (and how many this bar added)")
        self.undo_button = QToolButton()
        self.undo_button.setText("Undo")
        self.undo_button.setToolTip("Take the last saved question out of the gold file again (Ctrl+Z)")
        self.coverage_button = QToolButton()
        self.coverage_button.setText("Coverage")
        self.coverage_button.setToolTip("Which sections have no question yet")
        close = QToolButton()
        close.setText("✕")
        close.setToolTip("Close (Esc)")
        close.setAutoRaise(True)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(6, 3, 6, 3)
        lay.addWidget(title)
        lay.addWidget(QLabel("Answer:"))
        lay.addWidget(self.answer_label, 2)
        lay.addWidget(self.field, 3)
        lay.addWidget(self.counter)
        lay.addWidget(self.undo_button)
        lay.addWidget(self.coverage_button)
        lay.addWidget(close)

        self.field.returnPressed.connect(self.submit)
        self.undo_button.clicked.connect(self.undo)
        self.coverage_button.clicked.connect(self.coverageRequested)
        close.clicked.connect(self.close_bar)
        for keys, slot in ((QKeySequence.StandardKey.Undo, self.undo), (Qt.Key.Key_Escape, self.close_bar)):
            sc = QShortcut(QKeySequence(keys), self, slot)
            sc.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        view.selectionChanged.connect(self._on_selection)
        view.viewport().installEventFilter(self)
        self.field.installEventFilter(self)
        controller.goldChanged.connect(lambda _g: self._update_counter())
        state.documentChanged.connect(lambda _d: self._reset())
        writer.undone.connect(lambda _q: self._update_counter())
        self._reset()

    # -- opening and closing -----------------------------------------------------------------------
    def open_bar(self) -> None:
        """Show the bar with the current selection as the answer, the focus in the question field."""
        self.show()
        self.take_selection()
        self.field.setFocus()
        self._update_counter()

    def close_bar(self) -> None:
        self.hide()
        self.view.setFocus()
        self.closed.emit()

    # -- the answer ---------------------------------------------------------------------------------
    def take_selection(self) -> tuple[int, int] | None:
        """The selection in the text as the answer (whitespace at its ends left out)."""
        doc = self.state.document
        cursor = self.view.textCursor()
        span = None
        if doc is not None and cursor.hasSelection():
            um = self.view.umap
            a, b = um.to_codepoint(cursor.selectionStart()), um.to_codepoint(cursor.selectionEnd())
            while a < b and doc.text[a].isspace():
                a += 1
            while b > a and doc.text[b - 1].isspace():
                b -= 1
            span = (a, b) if b > a else None
        self.answer_span = span
        self._show_answer()
        return span

    @property
    def answer(self) -> str:
        """The answer as saved: the selected text, line breaks and runs of spaces made one space
        (answers are matched with whitespace collapsed anyway)."""
        doc = self.state.document
        if doc is None or self.answer_span is None:
            return ""
        return " ".join(doc.text[self.answer_span[0]:self.answer_span[1]].split())

    def _show_answer(self) -> None:
        text = self.answer
        if not text:
            self.answer_label.setText("select the answer in the text")
            self.answer_label.setEnabled(False)
            self.answer_label.setToolTip("")
            return
        shown = text if len(text) <= 60 else text[:59] + "…"
        self.answer_label.setEnabled(True)
        self.answer_label.setText(f"“{shown}”")
        a, b = self.answer_span or (0, 0)
        self.answer_label.setToolTip(f"{text}\n\ncharacters {a:,}–{b:,}: saved as the reference span")

    def _on_selection(self) -> None:
        if self.isVisible():
            self.take_selection()

    def eventFilter(self, obj: QObject, e: QEvent) -> bool:
        # Ctrl+Z in the empty question field undoes the last save (with text in it, it undoes
        # typing, as in any field).
        if obj is self.field:
            if e.type() in (QEvent.Type.ShortcutOverride, QEvent.Type.KeyPress) and isinstance(e, QKeyEvent) \
                    and e.matches(QKeySequence.StandardKey.Undo) and not self.field.text():
                if e.type() == QEvent.Type.KeyPress:
                    self.undo()
                e.accept()
                return True
            return False
        # A new answer selected with the mouse: straight back to typing its question.
        if (e.type() == QEvent.Type.MouseButtonRelease and self.isVisible()
                and self.view.textCursor().hasSelection()):
            self.take_selection()
            self.field.setFocus()
        return False

    # -- saving and undoing ------------------------------------------------------------------------------
    def submit(self) -> bool:
        """Enter: save the question with the selected answer and its span; clear for the next."""
        doc = self.state.document
        question = self.field.text().strip()
        if doc is None:
            self.writer.messages.error("open a document first")
            return False
        if self.answer_span is None:
            self.writer.messages.error("select the answer in the text first")
            return False
        if not question:
            self.writer.messages.error("type the question first")
            return False
        q = api.GoldQuestion(question, answers=(self.answer,), source=doc.doc_id, references=(self.answer_span,))
        outcome = self.writer.add(q)
        if outcome is None:
            return False
        if outcome == "added":
            self.added += 1
        self.field.clear()
        cursor = self.view.textCursor()
        cursor.clearSelection()
        self.view.setTextCursor(cursor)
        self.answer_span = None
        self._show_answer()
        self._update_counter()
        name = Path(self.writer.history[-1].path).name if self.writer.history else ""
        self.writer.messages.info({"added": f"Saved “{question}” to {name} (Ctrl+Z undoes)",
                                   "updated": f"Updated “{question}” in {name} (Ctrl+Z undoes)",
                                   "unchanged": f"“{question}” is already in the gold set"}[outcome])
        self.field.setFocus()
        return True

    def undo(self) -> bool:
        q = self.writer.undo()
        if q is None:
            return False
        self.added = max(0, self.added - 1)
        self._update_counter()
        self.writer.messages.info(f"Removed “{q.question}” again")
        return True

    # -- the counter ---------------------------------------------------------------------------------
    def _reset(self) -> None:
        self.answer_span = None
        self.field.clear()
        self._show_answer()
        self._update_counter()

    def _update_counter(self) -> None:
        n = document_questions(self.controller, self.state.document)
        text = f"{n} question{'s' if n != 1 else ''}"
        if self.added:
            text += f" · {self.added} new"
        self.counter.setText(text)
        self.undo_button.setEnabled(bool(self.writer.history))

    def select_span(self, a: int, b: int) -> None:
        """Select code points a..b in the text (tests and the drafts panel use it)."""
        cursor = self.view.textCursor()
        cursor.setPosition(self.view.umap.to_utf16(a))
        cursor.setPosition(self.view.umap.to_utf16(b), QTextCursor.MoveMode.KeepAnchor)
        self.view.setTextCursor(cursor)


__all__ = ["GoldWriter", "QuickGoldBar", "Saved", "document_questions"]
