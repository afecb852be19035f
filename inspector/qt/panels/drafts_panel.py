"""Drafted questions, reviewed one keystroke at a time: A accepts, E edits, R rejects.

Drafts (`inspector.core.evaluation.drafts`: rules over the text, no network, no language model) are
a separate, labelled list and never a gold set: the banner says so, with what the benchmark
measured about them (`drafts.MEASUREMENT`), and nothing from the list is scored until it is
accepted. Accepting writes that one question to the gold file (through the same `GoldWriter` as the
quick question bar, so Ctrl+Z there undoes it); a draft is written once, and a draft whose question
the gold set already holds is shown as accepted.

Keys (with the list focused): A accept, E edit the question (Enter accepts it, Esc cancels), R
reject, J/↓ next, K/↑ previous. The current draft's answer is marked in the text.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QFont, QKeySequence, QPalette, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from inspector.core import api
from inspector.qt.controllers.retrieval import RetrievalController
from inspector.qt.controllers.state import InspectorState
from inspector.qt.runner import JobRunner
from inspector.qt.theme import Theme

if TYPE_CHECKING:
    from inspector.core.api import Document, Draft, GoldQuestion

PENDING, ACCEPTED, REJECTED = "pending", "accepted", "rejected"
_MARK = {PENDING: "•", ACCEPTED: "✓", REJECTED: "✗"}
DEFAULT_COUNT = 40


@dataclass(slots=True)
class DraftItem:
    """A draft under review."""

    draft: Draft
    status: str = PENDING
    question: str = ""
    """The question as it will be saved (the draft's, or the reviewer's edit)."""

    def __post_init__(self) -> None:
        if not self.question:
            self.question = self.draft.question


class DraftsPanel(QWidget):
    """The drafts of the current document and their review."""

    draftShown = Signal(object)
    """The current Draft (None when there is none): the window marks its answer in the text."""
    reviewChanged = Signal()

    def __init__(self, state: InspectorState, controller: RetrievalController,
                 add: Callable[[GoldQuestion], str | None], *, synchronous: bool = False,
                 parent: QWidget | None = None) -> None:
        """`add(question)` writes one accepted question ("added"/"updated"/"unchanged", or None
        when it could not)."""
        super().__init__(parent)
        self.state = state
        self.controller = controller
        self._add = add
        self.items: list[DraftItem] = []
        self._by_doc: dict[tuple[str, str], list[DraftItem]] = {}
        self._pending_doc: Document | None = None
        self.runner = JobRunner(self, synchronous=synchronous, name="drafts")
        self.runner.stageReady.connect(self._on_drafts)
        self.runner.errored.connect(lambda _rid, msg: self.status.setText(f"drafting failed: {msg}"))

        self.banner = QLabel("<b>DRAFTS — not a gold set.</b> Proposed by rules from the text; none is "
                             "scored until you accept it. Accept, edit or reject each one.")
        self.banner.setWordWrap(True)
        self.banner.setObjectName("drafts_banner")
        self.banner.setAutoFillBackground(True)
        self.banner.setContentsMargins(6, 4, 6, 4)
        # Its text (the drafts' measured quality) is set when the panel is first shown: reading it
        # imports the drafting rules, which the window's first paint does not need (issue 31).
        self.measurement = QLabel()
        self.measurement.setWordWrap(True)
        self.measurement.setObjectName("drafts_measurement")
        self.measurement.setToolTip("benchmarks/drafted_gold.py on Chroma's chunking benchmark; "
                                    "figures in benchmarks/README.md")
        self.draft_button = QPushButton("Draft questions")
        self.draft_button.setToolTip("Propose questions from this document's headings, tables, lists and facts")
        self.count = QSpinBox()
        self.count.setRange(5, 1000)
        self.count.setValue(DEFAULT_COUNT)
        self.count.setPrefix("up to ")
        self.count.setToolTip("How many drafts, spread over the document's sections")
        self.status: QLabel = QLabel()
        self.tree = QTreeWidget()
        self.tree.setColumnCount(4)
        self.tree.setHeaderLabels(["", "Drafted question", "Answer", "Kind"])
        self.tree.setRootIsDecorated(False)
        self.tree.setUniformRowHeights(True)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.tree.setAllColumnsShowFocus(True)
        header = self.tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.ResizeToContents)
        header.resizeSection(2, 220)
        self.editor = QLineEdit()
        self.editor.setPlaceholderText("Edit the question — Enter accepts it, Esc cancels")
        self.editor.hide()
        self.hint = QLabel("<b>A</b> accept · <b>E</b> edit · <b>R</b> reject · <b>J</b>/<b>K</b> next/previous")
        self.hint.setEnabled(False)

        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.draft_button)
        row.addWidget(self.count)
        row.addWidget(self.status, 1)
        row.addWidget(self.hint)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.setSpacing(4)
        lay.addWidget(self.banner)
        lay.addWidget(self.measurement)
        lay.addLayout(row)
        lay.addWidget(self.tree, 1)
        lay.addWidget(self.editor)
        self._style_banner()

        self.draft_button.clicked.connect(lambda: self.draft())
        self.tree.currentItemChanged.connect(lambda *_a: self._on_current())
        self.editor.returnPressed.connect(self._commit_edit)
        QShortcut(QKeySequence(Qt.Key.Key_Escape), self.editor, self._cancel_edit).setContext(
            Qt.ShortcutContext.WidgetShortcut)
        self._keys()
        state.documentChanged.connect(self._on_document)
        controller.goldChanged.connect(lambda _g: self._mark_known())
        self._on_document(state.document)

    # -- keys ------------------------------------------------------------------------------------------
    def _keys(self) -> None:
        def bind(keys: tuple[str, ...], slot) -> None:
            for k in keys:
                sc = QShortcut(QKeySequence(k), self.tree, slot)
                sc.setContext(Qt.ShortcutContext.WidgetShortcut)

        bind(("A",), self.accept_current)
        bind(("E",), self.edit_current)
        bind(("R",), self.reject_current)
        bind(("J",), lambda: self.move_by(1))
        bind(("K",), lambda: self.move_by(-1))

    # -- drafting --------------------------------------------------------------------------------------
    def draft(self, doc: Document | None = None, count: int | None = None) -> None:
        """Draft questions for `doc` (default: the current document) in the background."""
        doc = doc if doc is not None else self.state.document
        if doc is None:
            self.status.setText("Open a document first.")
            return
        n = int(count if count is not None else self.count.value())
        self._pending_doc = doc
        self.status.setText("Drafting…")

        def job(_cancelled, _progress):
            yield doc, api.draft_questions(doc, limit=n)

        self.runner.submit(job)

    def _on_drafts(self, _rid: int, stage: tuple) -> None:
        doc, drafts = stage
        items = [DraftItem(d) for d in drafts]
        self._by_doc[_key(doc)] = items
        if self.state.document is doc:
            self.items = items
            self._mark_known(refill=False)
            self._fill()
            first = self.tree.topLevelItem(0)
            if items and first is not None:
                self.tree.setCurrentItem(first)
                self.tree.setFocus()

    def _on_document(self, doc: Document | None) -> None:
        self._cancel_edit()
        self.items = self._by_doc.get(_key(doc), []) if doc is not None else []
        self._fill()

    def _mark_known(self, refill: bool = True) -> None:
        """Drafts whose question the gold set already holds are accepted."""
        gold = self.controller.gold
        if gold is None or not self.items:
            return
        known = {(api.normalize(q.question), q.source) for q in gold.questions}
        changed = False
        for it in self.items:
            if it.status == PENDING and ((api.normalize(it.question), it.draft.source) in known
                                         or (api.normalize(it.question), None) in known):
                it.status = ACCEPTED
                changed = True
        if changed and refill:
            self._refresh_rows()

    # -- the list --------------------------------------------------------------------------------------
    def _fill(self) -> None:
        self.tree.clear()
        for it in self.items:
            row = QTreeWidgetItem(["", it.question, it.draft.answer, it.draft.kind])
            row.setToolTip(1, it.question)
            row.setToolTip(2, it.draft.answer)
            row.setToolTip(3, " › ".join(it.draft.heading_path))
            self.tree.addTopLevelItem(row)
        self._refresh_rows()

    def _refresh_rows(self) -> None:
        muted = self.palette().color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text)
        good = Theme.for_palette(self.palette()).accepted_draft
        for i, it in enumerate(self.items):
            row = self.tree.topLevelItem(i)
            if row is None:
                continue
            row.setText(0, _MARK[it.status])
            row.setText(1, it.question)
            font = QFont(self.tree.font())
            font.setStrikeOut(it.status == REJECTED)
            for col in range(4):
                row.setFont(col, font)
                row.setForeground(col, QBrush(muted) if it.status == REJECTED else QBrush())
            if it.status == ACCEPTED:
                row.setForeground(0, QBrush(good))
            row.setToolTip(0, it.status)
        self._update_status()
        self.reviewChanged.emit()

    def _update_status(self) -> None:
        if not self.items:
            doc = self.state.document
            self.status.setText("No drafts yet." if doc is not None else "Open a document first.")
            return
        n = {s: sum(1 for it in self.items if it.status == s) for s in (PENDING, ACCEPTED, REJECTED)}
        self.status.setText(f"{len(self.items)} drafts · {n[ACCEPTED]} accepted · {n[REJECTED]} rejected · "
                            f"{n[PENDING]} to review")

    def current_index(self) -> int:
        row = self.tree.currentItem()
        return self.tree.indexOfTopLevelItem(row) if row is not None else -1

    def current(self) -> DraftItem | None:
        i = self.current_index()
        return self.items[i] if 0 <= i < len(self.items) else None

    def set_current(self, i: int) -> None:
        item = self.tree.topLevelItem(i) if 0 <= i < len(self.items) else None
        if item is not None:
            self.tree.setCurrentItem(item)

    def move_by(self, step: int) -> None:
        i = self.current_index()
        self.set_current(max(0, min(len(self.items) - 1, (0 if i < 0 else i + step))))

    def _next_pending(self) -> None:
        """After a decision: the next draft still to review (after this one, then from the top)."""
        i = self.current_index()
        order = list(range(i + 1, len(self.items))) + list(range(0, max(0, i)))
        for j in order:
            if self.items[j].status == PENDING:
                self.set_current(j)
                return
        if i + 1 < len(self.items):
            self.set_current(i + 1)

    def _on_current(self) -> None:
        it = self.current()
        self.draftShown.emit(it.draft if it is not None else None)

    # -- decisions -------------------------------------------------------------------------------------
    def accept_current(self) -> bool:
        """A: write the current draft (its question as edited) to the gold set, once."""
        it = self.current()
        if it is None:
            return False
        if it.status == ACCEPTED:
            self._next_pending()
            return False
        outcome = self._add(it.draft.to_gold(it.question))
        if outcome is None:
            return False
        it.status = ACCEPTED
        self._refresh_rows()
        self._next_pending()
        return True

    def reject_current(self) -> bool:
        """R: leave the current draft out (an accepted one is in the file already: undo it there)."""
        it = self.current()
        if it is None or it.status == ACCEPTED:
            return False
        it.status = REJECTED
        self._refresh_rows()
        self._next_pending()
        return True

    def edit_current(self) -> bool:
        """E: edit the current draft's question below the list; Enter accepts it, Esc cancels."""
        it = self.current()
        if it is None or it.status == ACCEPTED:
            return False
        self.editor.setText(it.question)
        self.editor.show()
        self.editor.setFocus()
        self.editor.selectAll()
        return True

    def _commit_edit(self) -> None:
        it = self.current()
        text = " ".join(self.editor.text().split())
        if it is None or not text:
            return
        it.question = text
        self.editor.hide()
        self.tree.setFocus()
        self.accept_current()

    def _cancel_edit(self) -> None:
        if self.editor.isVisible():
            self.editor.hide()
            self.tree.setFocus()

    # -- looks -----------------------------------------------------------------------------------------
    def _style_banner(self) -> None:
        pal = self.banner.palette()
        theme = Theme.for_palette(self.palette())
        pal.setColor(QPalette.ColorRole.Window, theme.notice)
        pal.setColor(QPalette.ColorRole.WindowText, theme.notice_text)
        self.banner.setPalette(pal)
        font = self.measurement.font()
        font.setPointSizeF(max(7.0, font.pointSizeF() - 0.5))
        self.measurement.setFont(font)

    def showEvent(self, e) -> None:
        if not self.measurement.text():
            self.measurement.setText(api.MEASUREMENT)
        super().showEvent(e)

    def changeEvent(self, e) -> None:
        super().changeEvent(e)
        if e.type() == e.Type.PaletteChange:
            self._style_banner()
            self._refresh_rows()

    def shutdown(self, timeout_ms: int = 10_000) -> None:
        self.runner.shutdown(timeout_ms)


def _key(doc: Document) -> tuple[str, str]:
    return (doc.doc_id, doc.sha256)


__all__ = ["ACCEPTED", "DraftItem", "DraftsPanel", "PENDING", "REJECTED"]
