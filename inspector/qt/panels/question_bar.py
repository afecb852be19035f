"""The question bar above the text: type a question, press Enter, see which chunks come back.

k and the retriever sit beside the field; arrows walk through the hits in the text. A note on the
right says what answered: exact embeddings, the pooled live preview, or BM25 while the model
loads (with a warning colour, since dense figures are what the user asked for).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QStringListModel, Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QComboBox,
    QCompleter,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMenu,
    QSizePolicy,
    QSpinBox,
    QToolButton,
    QWidget,
)

from inspector.qt import theme
from inspector.qt.controllers.retrieval import (
    EXACT,
    FALLBACK,
    MODEL_FAILED,
    MODEL_LOADING,
    POOLED,
    RETRIEVERS,
    RetrievalController,
)
from inspector.qt.document.hits import HitMark
from inspector.qt.document.view import DocumentView
from inspector.qt.panels.elided_label import ElidedLabel

if TYPE_CHECKING:
    from inspector.core.api import Document, HeadingCatalog, RetrievalResult

RETRIEVER_LABELS = {"dense": "Dense", "bm25": "BM25", "hybrid": "Hybrid"}
MAX_K = 50


def hits_elsewhere(result: RetrievalResult | None) -> list:
    """The result's hits in documents other than the one shown (a corpus), best first."""
    if result is None or not result.request.question:
        return []
    doc_id = result.document.doc_id
    return [h for h in result.hits if h.chunk.doc_id != doc_id]


def hit_counts(result: RetrievalResult | None) -> dict[str, tuple[int, int]]:
    """doc_id -> (hits in it, best rank) for a question's result (empty without a question)."""
    out: dict[str, tuple[int, int]] = {}
    if result is None or not result.request.question:
        return out
    for h in result.hits:
        n, best = out.get(h.chunk.doc_id, (0, h.rank))
        out[h.chunk.doc_id] = (n + 1, min(best, h.rank))
    return out


def hit_marks(result: RetrievalResult) -> tuple[HitMark, ...]:
    """The result's hits as the view outlines them (the returned chunk's span, its rank and score);
    over a corpus, only the hits in the shown document."""
    doc_id = result.document.doc_id
    return tuple(HitMark(h.rank, h.chunk.start, h.chunk.end, h.score, h.chunk.id, h.chunk.role)
                 for h in result.hits if h.chunk.doc_id == doc_id)


def mode_text(result: RetrievalResult | None, controller: RetrievalController) -> tuple[str, str]:
    """(short label, tooltip) for what answered."""
    if result is None:
        if controller.model_state == MODEL_LOADING and controller.retriever != "bm25":
            return "model loading: BM25 answers", "The embedding model loads in the background"
        return "", ""
    if result.mode == FALLBACK:
        why = result.note or "no dense vectors yet"
        if controller.model_state == MODEL_LOADING:
            return "BM25 (model loading)", why
        if controller.model_state == MODEL_FAILED:
            return "BM25 (no model)", controller.model_error or why
        return "BM25 (preparing vectors)", why
    if result.mode == POOLED:
        return "pooled preview", ("Chunk vectors averaged from piece vectors while settings change; "
                                  "exact embeddings replace them once the settings rest")
    if result.retriever == "bm25":
        return "BM25", "Lexical retrieval over the embedded texts"
    stored_in = result.index.stored_in
    if stored_in:
        # The user's vector store: its vectors, not ones this app computed (`Index.stored_in`;
        # "exact" and its tip, "every chunk embedded by the model", said the opposite).
        tip = (f"Your store's own vectors, as your pipeline embedded its chunks ({stored_in}); each question "
               "is embedded by the window's model" + (" and BM25 is fused with them" if result.retriever == "hybrid"
                                                       else ""))
        return "store vectors", tip + (f". {result.note}" if result.note else "")
    if result.note:  # exact at once while dragging, because it was predicted to be fast
        return result.note, ("Every chunk embedded by the model, as a production pipeline does; "
                             "predicted fast enough to replace the pooled preview while you drag")
    return "exact", "Every chunk embedded by the model, as a production pipeline does"


class QuestionBar(QWidget):
    """Question field, k, retriever, hit navigation and what answered."""

    asked = Signal(str)

    def __init__(self, controller: RetrievalController, view: DocumentView, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.view = view
        self._heading_catalogs: list[HeadingCatalog] | None = None
        """The catalogs of the documents the filters keep (`_catalogs`), made at the first keystroke."""
        self._jump: tuple[str, int, int] | None = None
        """(doc_id, start, end) of a hit in another document being jumped to."""
        self._reveal = False
        self._build_question()
        self._build_filters()
        self._build_hits()
        self._build_row()
        self._connect()
        self._show_mode(None)
        self._update_nav()

    def _build_question(self) -> None:
        """The question field, k and the retriever."""
        controller = self.controller
        self.field = QLineEdit()
        self.field.setPlaceholderText("Ask a question and press Enter to see which chunks a retriever returns")
        self.field.setClearButtonEnabled(True)
        self.field.setToolTip("Enter runs the question against the current chunks")
        self.field.setMinimumWidth(self.field.fontMetrics().averageCharWidth() * 30)
        self.k_spin = QSpinBox()
        self.k_spin.setRange(1, MAX_K)
        self.k_spin.setValue(controller.k)
        self.k_spin.setPrefix("k = ")
        self.k_spin.setToolTip("How many chunks the retriever returns")
        self.k_spin.setKeyboardTracking(False)
        self.retriever = QComboBox()
        for name in RETRIEVERS:
            self.retriever.addItem(RETRIEVER_LABELS[name], name)
        self.retriever.setToolTip("Dense: cosine of embeddings; BM25: words; Hybrid: reciprocal rank fusion of both")
        self.retriever.setCurrentIndex(RETRIEVERS.index(controller.retriever))

    def _build_filters(self) -> None:
        """Metadata filters: a heading-path prefix (completed from the document's heading paths, by
        the core's own matching rule: what it offers is what the filter keeps) and, for a corpus,
        the documents to search."""
        self.heading_filter = QLineEdit()
        self.heading_filter.setPlaceholderText("under heading…")
        self.heading_filter.setClearButtonEnabled(True)
        self.heading_filter.setToolTip("Only chunks under this heading path, e.g. 'parental > germ': each title "
                                       "by its start (or a word's), any case; the document title may be left out")
        self.heading_filter.setMinimumWidth(110)
        self.heading_filter.setMaximumWidth(220)
        self.completer_model = QStringListModel(self)
        self.completer = QCompleter(self.completer_model, self)
        self.completer.setCompletionMode(QCompleter.CompletionMode.UnfilteredPopupCompletion)
        self.completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.completer.setMaxVisibleItems(14)
        self.heading_filter.setCompleter(self.completer)
        self.doc_filter = QComboBox()
        self.doc_filter.setToolTip("Search every document of the corpus, or one")
        self.doc_filter.addItem("All documents", None)
        self.doc_filter.setVisible(False)
        # As wide as "All documents", whatever the corpus's file names (a name longer than that is
        # elided in the box, whole in its list): sized to its longest name it took the question
        # field's room, down to 115 px in a 1024 px window.
        self.doc_filter.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.doc_filter.setMinimumContentsLength(len("All documents"))

    def _build_hits(self) -> None:
        """Walking the hits in the text, the hits in the corpus's other documents (a menu that
        shows them and jumps there), and what answered."""
        self.prev_button = QToolButton()
        self.prev_button.setText("▲")
        self.prev_button.setToolTip("Previous hit (Shift+F3)")
        self.next_button = QToolButton()
        self.next_button.setText("▼")
        self.next_button.setToolTip("Next hit (F3)")
        self.hit_label = QLabel()
        self.elsewhere = QToolButton()
        self.elsewhere.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.elsewhere.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self.elsewhere.setToolTip("Hits in the other documents of the corpus: choose one to show it")
        self.elsewhere_menu = QMenu(self.elsewhere)
        self.elsewhere.setMenu(self.elsewhere_menu)
        self.elsewhere.hide()
        # What answered takes its text's width and gives way first (elided, whole in its tooltip);
        # the field takes the rest of the row.
        self.mode = ElidedLabel()
        self.mode.set_elide(True)
        self.mode.setMinimumWidth(30)
        self.mode.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        self.mode.setMaximumWidth(self.mode.fontMetrics().horizontalAdvance("BM25 (preparing vectors)") + 8)

    def _build_row(self) -> None:
        """The bar spans the window (a toolbar row of its own): it takes the room it is given and
        never widens the window; the field gets whatever the other controls leave."""
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setMinimumWidth(1)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(6, 4, 6, 4)
        ask = QLabel("Ask")
        ask.setStyleSheet("font-weight: 600;")
        lay.addWidget(ask)
        lay.addWidget(self.field, 1)
        lay.addWidget(self.k_spin)
        lay.addWidget(self.retriever)
        lay.addWidget(self.heading_filter)
        lay.addWidget(self.doc_filter)
        lay.addWidget(self.prev_button)
        lay.addWidget(self.next_button)
        lay.addWidget(self.hit_label)
        lay.addWidget(self.elsewhere)
        lay.addWidget(self.mode)

    def _on_heading_text(self, text: str) -> None:
        if not text:  # the field cleared: every heading again
            self._apply_filters()

    def _connect(self) -> None:
        controller = self.controller
        self.field.returnPressed.connect(self.submit)
        self.k_spin.valueChanged.connect(controller.set_k)
        self.retriever.currentIndexChanged.connect(lambda i: controller.set_retriever(self.retriever.itemData(i)))
        self.heading_filter.editingFinished.connect(self._apply_filters)
        self.heading_filter.textChanged.connect(self._on_heading_text)
        self.heading_filter.textEdited.connect(self._complete_headings)
        self.completer.activated.connect(lambda _text: self._apply_filters())
        self.elsewhere_menu.triggered.connect(lambda a: self.jump_to_hit(*a.data()))
        self.doc_filter.currentIndexChanged.connect(self._on_doc_filter)
        state = getattr(controller, "state", None)
        if state is not None and hasattr(state, "documentsChanged"):
            state.documentsChanged.connect(self._on_documents)
        if state is not None and hasattr(state, "documentChanged"):
            state.documentChanged.connect(lambda *_a: self._fill_headings())
        self.next_button.clicked.connect(self.next_hit)
        self.prev_button.clicked.connect(self.previous_hit)
        clear = QShortcut(QKeySequence(Qt.Key.Key_Escape), self.field, self.clear)
        clear.setContext(Qt.ShortcutContext.WidgetShortcut)  # the find bar has its own Escape
        controller.resultReady.connect(self._on_result)
        controller.cleared.connect(self._on_cleared)
        controller.questionChanged.connect(self._on_question)
        controller.settingsChanged.connect(self._on_settings)
        controller.modelStateChanged.connect(lambda _s: self._show_mode(controller.result))

    # -- filters -------------------------------------------------------------------------------
    def set_filters(self, heading: str = "", doc_id: str | None = None) -> None:
        """Set the filter widgets (tests and the menu use this) and apply them."""
        self.heading_filter.setText(heading)
        i = self.doc_filter.findData(doc_id)
        self.doc_filter.setCurrentIndex(max(i, 0))
        self._apply_filters()

    def _apply_filters(self) -> None:
        parts = [p.strip() for p in self.heading_filter.text().split(">") if p.strip()]
        heading = self._with_title(parts) if parts else None
        doc_id = self.doc_filter.currentData()
        self.controller.set_filters((doc_id,) if doc_id else None, heading)

    def _with_title(self, parts: list[str]) -> tuple[str, ...]:
        """Heading paths start at the top-level heading; let users leave out a title-like first
        heading they do not see in the prefix (e.g. "Employee Handbook"): the core's rule
        (`heading_filter.resolve_heading_filter`) over the paths of the one document the filters
        keep. Over several, the typed path goes as typed, and retrieval puts each document's own
        title back (`Index._heading_mask`): one document's title in front kept that document's
        chunks alone (a folder, "parental": the shown handbook's "Parental leave", not the
        policy's beside it)."""
        catalogs = self._catalogs()
        if len(catalogs) == 1:
            return catalogs[0].resolve(tuple(parts)) or tuple(parts)
        return tuple(parts)

    def _filtered_documents(self) -> list[Document]:
        """The documents the filters keep: the one the document filter names, else every document
        of the corpus, the shown one first (the shown one alone when there is no corpus)."""
        state = getattr(self.controller, "state", None)
        shown = getattr(state, "document", None)
        docs = list(getattr(state, "documents", ()) or ())
        if not docs:
            return [shown] if shown is not None else []
        named = self.doc_filter.currentData()
        if named:
            return [d for d in docs if d.doc_id == named][:1]
        first = [d for d in docs if shown is not None and d.doc_id == shown.doc_id][:1]
        return first + [d for d in docs if d not in first]

    def _catalogs(self) -> list[HeadingCatalog]:
        """The heading paths of the documents the filters keep, made ready once for the filter's
        rule (asked at every keystroke: `HeadingCatalog`); the chunking thread has made the shown
        document's most often (`heading_catalog_of`, issue 31)."""
        if self._heading_catalogs is None:
            from inspector.core.api import heading_catalog_of

            self._heading_catalogs = [heading_catalog_of(d) for d in self._filtered_documents()]
        return self._heading_catalogs

    def _on_doc_filter(self, _index: int) -> None:
        self._fill_headings()
        self._apply_filters()

    def _on_documents(self, *_args: object) -> None:
        self._fill_documents()
        self._fill_headings()

    def _fill_headings(self) -> None:
        """A new document, corpus or document filter: their heading paths are what the completer
        offers."""
        self._heading_catalogs = None
        if self.heading_filter.hasFocus():
            self._complete_headings(self.heading_filter.text())

    def _complete_headings(self, text: str) -> None:
        from inspector.core.api import completions_over

        offered = completions_over(self._catalogs(), text)  # the shown document's first
        self.completer_model.setStringList(offered)
        self._fit_popup(offered)
        if self.heading_filter.hasFocus() and self.completer_model.rowCount():
            self.completer.complete()

    def _fit_popup(self, offered: list[str]) -> None:
        """The popup as wide as its longest path (the field is at most 220 px: "Parental leave >
        Germany" read "Parental leave > …"), but no wider than half the window; the popup keeps
        the field's width at least (`complete` sizes it to the field, the minimum widens it)."""
        popup = self.completer.popup()
        if popup is None:
            return
        if not offered:
            popup.setMinimumWidth(0)
            return
        widest = max(popup.fontMetrics().horizontalAdvance(s) for s in offered)
        bar = popup.verticalScrollBar()
        chrome = 2 * popup.frameWidth() + (bar.sizeHint().width() if bar is not None else 0) + 16
        window = self.window()
        room = max(self.heading_filter.width(), window.width() // 2 if window is not None else 480)
        popup.setMinimumWidth(min(widest + chrome, room))

    def completions(self, text: str) -> list[str]:
        """What the completer offers for `text` (tests; the popup shows the same)."""
        self._complete_headings(text)
        return self.completer_model.stringList()

    def _fill_documents(self) -> None:
        state = self.controller.state
        docs = list(getattr(state, "documents", ()) or ())
        current = self.doc_filter.currentData()
        self.doc_filter.blockSignals(True)
        self.doc_filter.clear()
        self.doc_filter.addItem("All documents", None)
        for d in docs:
            self.doc_filter.addItem(d.doc_id, d.doc_id)
        self.doc_filter.setCurrentIndex(max(self.doc_filter.findData(current), 0))
        self.doc_filter.blockSignals(False)
        self.doc_filter.setVisible(len(docs) > 1)
        # The list shows whole names, however narrow the box.
        fm = self.doc_filter.view().fontMetrics()
        widest = max((fm.horizontalAdvance(self.doc_filter.itemText(i)) for i in range(self.doc_filter.count())),
                     default=0)
        self.doc_filter.view().setMinimumWidth(widest + 32)
        if current is not None and self.doc_filter.currentData() != current:
            self._apply_filters()

    # -- actions -------------------------------------------------------------------------------
    def submit(self, reveal: bool = True) -> int:
        """Ask what the field holds (empty: clear the question). `reveal` scrolls to hit #1 when the
        hits arrive (not on later re-chunks)."""
        text = self.field.text().strip()
        self._reveal = reveal and bool(text)
        self.asked.emit(text)
        return self.controller.ask(text)

    def ask(self, question: str, reveal: bool = True) -> int:
        """Put a question in the field and ask it (the gold panel runs its questions this way,
        without scrolling away from the answer it shows)."""
        self.field.setText(question)
        self.field.setCursorPosition(0)  # show the question's beginning
        return self.submit(reveal)

    def clear(self) -> None:
        self.field.clear()
        self.controller.ask("")

    def next_hit(self) -> None:
        if self.view.next_hit() is not None:
            self._update_nav()

    def previous_hit(self) -> None:
        if self.view.previous_hit() is not None:
            self._update_nav()

    # -- reactions -----------------------------------------------------------------------------
    def jump_to_hit(self, doc_id: str, start: int, end: int) -> bool:
        """Show the document holding a hit (of another document of the corpus) and scroll to it;
        its outline follows when the question's hits for that document are in."""
        state = self.controller.state
        doc = next((d for d in getattr(state, "documents", ()) if d.doc_id == doc_id), None)
        if doc is None:
            return False
        self._jump = (doc_id, start, end)
        self._reveal = False
        if doc is not state.document:
            state.set_document(doc)
        if self.view.document_ is doc:
            self.view.scroll_to_offset(start, context_lines=2)
            self._goto_jump()
        return True

    def jump_to_best_hit(self, doc_id: str) -> bool:
        """Show `doc_id` at its best hit of the current question (False: it has none)."""
        r = self.controller.result
        hits = [h for h in (r.hits if r is not None and r.request.question else ()) if h.chunk.doc_id == doc_id]
        if not hits:
            return False
        return self.jump_to_hit(doc_id, hits[0].chunk.start, hits[0].chunk.end)

    def _goto_jump(self) -> None:
        """Navigate to the hit being jumped to, once the shown hits include it."""
        if self._jump is None or self.view.document_ is None or self.view.document_.doc_id != self._jump[0]:
            return
        for i, h in enumerate(self.view.hits):
            if (h.start, h.end) == self._jump[1:]:
                self.view.goto_hit(i)
                self._jump = None
                self._update_nav()
                return

    def _on_result(self, result: RetrievalResult) -> None:
        marks = hit_marks(result) if result.request.question else ()
        self.view.set_hits(marks)
        if self._reveal and marks:
            self.view.goto_hit(0)
            self._reveal = result.more_coming  # the exact stage may put another chunk first
        self._goto_jump()
        if not result.more_coming and self._jump is not None and self._jump[0] == result.document.doc_id:
            self._jump = None  # the chunk is no longer among the hits: the scroll stays
        self._show_elsewhere(result)
        self._show_mode(result)
        self._update_nav()

    def _show_elsewhere(self, result: RetrievalResult | None) -> None:
        """The menu of hits in the other documents, and its button ("+3 elsewhere")."""
        others = hits_elsewhere(result)
        self.elsewhere_menu.clear()
        if not others:
            self.elsewhere.hide()
            return
        from inspector.qt.document.hits import format_score

        for h in others:
            where = " > ".join(h.chunk.heading_path[-2:]) or f"characters {h.chunk.start:,}–{h.chunk.end:,}"
            a = self.elsewhere_menu.addAction(f"#{h.rank}  {h.chunk.doc_id} · {where}  ({format_score(h.score)})")
            a.setData((h.chunk.doc_id, h.chunk.start, h.chunk.end))
        self.elsewhere.setText(f"+{len(others)} elsewhere")
        self.elsewhere.show()

    def _on_cleared(self) -> None:
        self.view.set_hits(())
        self._show_elsewhere(None)
        self._show_mode(None)
        self._update_nav()

    def _on_question(self, question: str) -> None:
        if self.field.text().strip() != question:
            self.field.setText(question)
        if not question:
            self.view.set_hits(())
            self._show_elsewhere(None)
            self._update_nav()

    def _on_settings(self) -> None:
        if self.k_spin.value() != self.controller.k:
            self.k_spin.blockSignals(True)
            self.k_spin.setValue(self.controller.k)
            self.k_spin.blockSignals(False)
        i = RETRIEVERS.index(self.controller.retriever)
        if self.retriever.currentIndex() != i:
            self.retriever.blockSignals(True)
            self.retriever.setCurrentIndex(i)
            self.retriever.blockSignals(False)

    def _show_mode(self, result: RetrievalResult | None) -> None:
        text, tip = mode_text(result, self.controller)
        warn = result is not None and result.mode == FALLBACK or (result is None and bool(text))
        exact = result is not None and result.mode == EXACT
        color = theme.WARNING if warn else (theme.GOOD if exact else "")
        self.mode.setText(text)
        self.mode.setToolTip(tip)
        self.mode.setStyleSheet(f"color: {color};" if color else "")

    def _update_nav(self) -> None:
        hits = self.view.hits
        self.prev_button.setEnabled(bool(hits))
        self.next_button.setEnabled(bool(hits))
        if not hits:
            self.hit_label.setText("")
        elif self.view.current_hit >= 0:
            self.hit_label.setText(f"hit {self.view.current_hit + 1}/{len(hits)}")
        else:
            self.hit_label.setText(f"{len(hits)} hits")
