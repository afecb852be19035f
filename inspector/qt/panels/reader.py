"""The Reader: a question's top-k chunks in rank order, exactly as the model would receive them.

Each card shows what a pipeline would put in the prompt for one rank: the context prefix (when the
strategy embeds one) and the chunk's text (the parent's, for parent_child), i.e.
`chunk.embedded_text(doc, with_prefix=...)`. Each can be marked relevant or not; a question with a
relevant chunk (or with answer text selected in a card) can be saved to the gold set.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QFont, QFontDatabase, QFontMetrics, QPainter, QPen
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QTextEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from inspector.core.evaluation.gold import GoldQuestion
from inspector.qt.controllers.retrieval import RetrievalController
from inspector.qt.controllers.retrieval_jobs import RetrievalResult
from inspector.qt.controllers.state import InspectorState
from inspector.qt.document.hits import format_score, hit_color
from inspector.qt.panels.question_bar import mode_text
from inspector.qt.theme import Theme


class FitText(QTextEdit):
    """Read-only, selectable text whose height follows its content at the current width.

    QLabel wraps long text by searching for a height-for-width, which took 20-30 ms per card of a
    few hundred words on the GUI thread; a QTextDocument lays the text out once per width."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setLineWrapMode(QTextEdit.LineWrapMode.WidgetWidth)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.document().setDocumentMargin(0)
        self.document().setUndoRedoEnabled(False)
        self.viewport().setAutoFillBackground(False)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse
                                     | Qt.TextInteractionFlag.TextSelectableByKeyboard)
        self._fit_width = -1

    def set_text(self, text: str) -> None:
        if text != self.toPlainText():
            self.setPlainText(text)
            self._fit_width = -1
            self._fit()

    def text(self) -> str:
        return self.toPlainText()

    def selectedText(self) -> str:  # noqa: N802  (QLabel's name: cards read either the same way)
        return self.textCursor().selectedText().replace("\u2029", "\n")

    def _fit(self) -> None:
        width = self.viewport().width()
        if width <= 0 or width == self._fit_width:
            return
        self._fit_width = width
        doc = self.document()
        doc.setTextWidth(width)
        self.setFixedHeight(int(doc.size().height() + 0.999) + 2 * self.frameWidth())

    def resizeEvent(self, e) -> None:
        super().resizeEvent(e)
        self._fit()


class ReaderCard(QFrame):
    """One retrieved chunk: rank badge, facts, prefix and text, relevance buttons.

    Cards are reused from one result to the next (`set_content`), and their decoration (accent
    bar, badge) is painted rather than styled: style sheets re-polish a widget tree on every
    change, which cost tens of milliseconds per result on the GUI thread."""

    relevanceChanged = Signal(object)
    """True (relevant), False (not relevant) or None (unmarked)."""

    BADGE_W = 40

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.hit: Any = None
        self._theme: Theme | None = None
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        font.setPointSizeF(max(font.pointSizeF(), 9.5))
        self.facts = QLabel()
        self.facts.setTextFormat(Qt.TextFormat.PlainText)
        self.facts.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.facts.setIndent(self.BADGE_W + 4)
        self.prefix = QLabel()
        self.prefix.setTextFormat(Qt.TextFormat.PlainText)
        self.prefix.setWordWrap(True)
        italic = QFont(font)
        italic.setItalic(True)
        self.prefix.setFont(italic)
        self.prefix.setAutoFillBackground(True)
        self.prefix.setMargin(3)
        self.prefix.setToolTip("Context prefix embedded before the chunk's text")
        self.body = FitText()
        self.body.setFont(font)
        self.prefix.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.prefix.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse
                                            | Qt.TextInteractionFlag.TextSelectableByKeyboard)
        self.relevant = QToolButton(text="✓ Relevant")
        self.relevant.setCheckable(True)
        self.relevant.setToolTip("This chunk answers the question")
        self.irrelevant = QToolButton(text="✗ Not relevant")
        self.irrelevant.setCheckable(True)
        self.irrelevant.setToolTip("This chunk does not answer the question")
        marks = QHBoxLayout()
        marks.setContentsMargins(0, 0, 0, 0)
        marks.addStretch(1)
        for b in (self.relevant, self.irrelevant):
            b.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
            b.setAutoRaise(True)
            marks.addWidget(b)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(10, 6, 8, 6)
        lay.setSpacing(4)
        lay.addWidget(self.facts)
        lay.addWidget(self.prefix)
        lay.addWidget(self.body)
        lay.addLayout(marks)
        self.relevant.toggled.connect(lambda on: self._toggled(self.relevant, on))
        self.irrelevant.toggled.connect(lambda on: self._toggled(self.irrelevant, on))

    def set_content(self, hit: Any, text_prefix: str, body: str, facts: str, theme: Theme,
                    relevance: bool | None) -> None:
        self.hit = hit
        if theme is not self._theme:
            self._theme = theme
            pal = self.facts.palette()
            pal.setColor(pal.ColorRole.WindowText, theme.muted)
            self.facts.setPalette(pal)
            pal = self.prefix.palette()
            pal.setColor(pal.ColorRole.Window, theme.fill(1))
            self.prefix.setPalette(pal)
        if self.facts.text() != facts:
            self.facts.setText(facts)
            self.facts.setToolTip(facts)
        if self.prefix.text() != text_prefix:
            self.prefix.setText(text_prefix)
        self.prefix.setVisible(bool(text_prefix))
        self.body.set_text(body)
        self.set_relevance(relevance)
        self.update()

    def paintEvent(self, e) -> None:
        super().paintEvent(e)
        if self.hit is None or self._theme is None:
            return
        theme = self._theme
        accent = hit_color(theme)
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        r = QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5)
        p.setPen(QPen(theme.muted, 1.0))
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawRoundedRect(r, 4, 4)
        p.fillRect(QRectF(r.left(), r.top() + 1, 4, r.height() - 2), accent)
        fm = QFontMetrics(self.facts.font())
        badge = QRectF(10, self.facts.y() + (self.facts.height() - fm.height() - 2) / 2, self.BADGE_W,
                       fm.height() + 2)
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(accent)
        p.drawRoundedRect(badge, badge.height() / 2, badge.height() / 2)
        bold = QFont(self.facts.font())
        bold.setBold(True)
        p.setFont(bold)
        p.setPen(QColor("#ffffff") if not theme.dark else QColor("#1b1b1b"))
        p.drawText(badge, Qt.AlignmentFlag.AlignCenter, f"#{self.hit.rank}")
        p.end()

    def shown_text(self) -> str:
        """What the card shows, read back from its labels: prefix, a blank line, the text."""
        if self.prefix.isVisibleTo(self) and self.prefix.text():
            return f"{self.prefix.text()}\n\n{self.body.text()}"
        return self.body.text()

    def relevance(self) -> bool | None:
        if self.relevant.isChecked():
            return True
        if self.irrelevant.isChecked():
            return False
        return None

    def set_relevance(self, value: bool | None) -> None:
        for b, on in ((self.relevant, value is True), (self.irrelevant, value is False)):
            if b.isChecked() != on:
                b.blockSignals(True)
                b.setChecked(on)
                b.blockSignals(False)

    def selected_text(self) -> str:
        return self.body.selectedText() or self.prefix.selectedText()

    def _toggled(self, button: QToolButton, on: bool) -> None:
        other = self.irrelevant if button is self.relevant else self.relevant
        if on and other.isChecked():
            other.blockSignals(True)
            other.setChecked(False)
            other.blockSignals(False)
        self.relevanceChanged.emit(self.relevance())


class Reader(QWidget):
    """The question's hits, best first, as the model receives them."""

    saveRequested = Signal(object)
    """A GoldQuestion built from the marks (the window appends it to the gold file)."""

    def __init__(self, controller: RetrievalController, state: InspectorState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.state = state
        self.result: RetrievalResult | None = None
        self.cards: list[ReaderCard] = []
        """The cards shown, in rank order."""
        self._pool: list[ReaderCard] = []
        self._dirty = False
        self._marks: dict[tuple, bool] = {}
        """Relevance by (question, chunk key, start, end): kept while the same chunk comes back."""
        self.header = QLabel("Ask a question to read what the retriever returns.")
        self.header.setWordWrap(True)
        self.header.setTextFormat(Qt.TextFormat.RichText)
        self.header.setContentsMargins(6, 4, 6, 4)
        self.list = QWidget()
        self.list_layout = QVBoxLayout(self.list)
        self.list_layout.setContentsMargins(6, 4, 6, 4)
        self.list_layout.setSpacing(8)
        self.list_layout.addStretch(1)
        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.scroll.setWidget(self.list)
        self.hint = QLabel()
        self.hint.setWordWrap(True)
        self.hint.setEnabled(False)
        self.save_button = QPushButton("Save to Gold Set…")
        self.save_button.setToolTip("Append the question to the gold set: the answer is the text selected in a "
                                    "card, else the span of the chunks marked relevant")
        self.save_button.setEnabled(False)
        bottom = QHBoxLayout()
        bottom.setContentsMargins(6, 2, 6, 6)
        bottom.addWidget(self.hint, 1)
        bottom.addWidget(self.save_button)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        lay.addWidget(self.header)
        lay.addWidget(self.scroll, 1)
        lay.addLayout(bottom)
        self.save_button.clicked.connect(self._save)
        controller.resultReady.connect(self.show_result)
        controller.cleared.connect(lambda: self.show_result(None))
        controller.questionChanged.connect(self._on_question)
        self._update_save()
        QTimer.singleShot(300, self, self.warm_up)  # bound to the reader: dropped if it is deleted first

    def _on_question(self, question: str) -> None:
        self._marks.clear()
        if not question:
            self.show_result(None)

    # -- content ---------------------------------------------------------------------------------
    def show_result(self, result: RetrievalResult | None) -> None:
        self.result = result
        if result is None or not result.request.question or result.document is not self.state.document:
            self._set_cards(0)
            self.header.setText("Ask a question to read what the retriever returns.")
            self._update_save()
            return
        if not self.isVisible():
            self._dirty = True  # filled in when the Reader is shown (it may sit behind a tab)
            return
        self._dirty = False
        req = result.request
        doc = result.document
        theme = Theme.for_palette(self.palette())
        label, _tip = mode_text(result, self.controller)
        q = req.question.replace("&", "&amp;").replace("<", "&lt;")
        self.header.setText(f"<b>Top {len(result.hits)}</b> for “{q}” · {result.retriever} · {label}")
        annotated = self.state.result
        self._set_cards(len(result.hits))
        corpus = len(req.documents) > 1
        for card, h in zip(self.cards, result.hits):
            c = h.chunk
            prefix = c.prefix if req.with_prefix and c.prefix else ""
            facts = [f"chunk {c.id}" + (f" ({c.role})" if c.role != "chunk" else ""),
                     f"score {format_score(h.score)}", f"{c.token_count} tokens"]
            if h.matched is not c:
                facts.append(f"matched child {h.matched.id}")
            full = annotated.chunk(c.id) if annotated is not None and annotated.document is doc \
                and c.doc_id == doc.doc_id else None
            if full is not None and (full.start, full.end) == (c.start, c.end) and full.embed_dropped:
                facts.append(f"{full.embed_dropped} word pieces past the model's limit")
            if corpus:
                facts.insert(0, c.doc_id)
            text = doc.text[c.start:c.end] if c.doc_id == doc.doc_id else result.index.text(c)
            card.set_content(h, prefix, text, " · ".join(facts), theme,
                             self._marks.get(self._mark_key(h)))
        self._update_save()

    def _set_cards(self, n: int) -> None:
        """Exactly n cards shown, from a pool of reused ones (hidden ones wait for a larger k)."""
        while len(self._pool) < n:
            self._new_card()
        for i, card in enumerate(self._pool):
            if (i < n) != card.isVisibleTo(self.list):
                card.setVisible(i < n)
        self.cards = self._pool[:n]

    def _new_card(self) -> ReaderCard:
        card = ReaderCard()
        card.relevanceChanged.connect(lambda value, c=card: self._on_mark(c.hit, value))
        card.hide()
        self.list_layout.insertWidget(self.list_layout.count() - 1, card)
        card.ensurePolished()
        self._pool.append(card)
        return card

    def warm_up(self, n: int = 5) -> None:
        """Make the first cards ahead of the first question, one per event-loop turn, so that
        question does not pay for widget creation on the GUI thread all at once."""
        if len(self._pool) < n:
            self._new_card()
            QTimer.singleShot(0, self, lambda: self.warm_up(n))

    def showEvent(self, e) -> None:
        super().showEvent(e)
        if self._dirty:
            self.show_result(self.result)

    def texts(self) -> list[str]:
        """The cards' texts in rank order, as shown."""
        return [c.shown_text() for c in self.cards]

    def relevance(self) -> dict[int, bool | None]:
        return {c.hit.rank: c.relevance() for c in self.cards}

    def set_relevance(self, rank: int, value: bool | None) -> None:
        for c in self.cards:
            if c.hit.rank == rank:
                c.set_relevance(value)

    def selected_text(self) -> str:
        return next((t for t in (c.selected_text() for c in self.cards) if t.strip()), "")

    # -- gold ------------------------------------------------------------------------------------
    def gold_question(self) -> GoldQuestion | None:
        """The question with the answer marked: selected card text, else the relevant chunks' spans."""
        r = self.result
        if r is None or not r.request.question:
            return None
        doc = r.document
        selected = " ".join(self.selected_text().split())
        if selected:
            card = next((c for c in self.cards if c.selected_text().strip()), None)
            source = card.hit.chunk.doc_id if card is not None and card.hit.chunk.doc_id else doc.doc_id
            return GoldQuestion(r.request.question, answers=(selected,), source=source)
        relevant = [c.hit.chunk for c in self.cards if c.relevance() is True]
        # Reference spans are offsets into one document: the first relevant chunk's.
        source = relevant[0].doc_id or doc.doc_id if relevant else doc.doc_id
        spans = sorted({(c.start, c.end) for c in relevant if (c.doc_id or doc.doc_id) == source})
        if not spans:
            return None
        return GoldQuestion(r.request.question, source=source, references=tuple(spans))

    def _mark_key(self, hit: Any) -> tuple:
        q = self.result.request.question if self.result is not None else ""
        return (q, hit.chunk.key, hit.chunk.start, hit.chunk.end)

    def _on_mark(self, hit: Any, value: bool | None) -> None:
        key = self._mark_key(hit)
        if value is None:
            self._marks.pop(key, None)
        else:
            self._marks[key] = value
        self._update_save()

    def _update_save(self) -> None:
        has_question = self.result is not None and bool(self.result.request.question)
        relevant = any(c.relevance() is True for c in self.cards)
        self.save_button.setEnabled(has_question)
        if not has_question:
            self.hint.setText("")
        elif relevant:
            self.hint.setText("Saving keeps the relevant chunks' spans as the reference.")
        else:
            self.hint.setText("Mark a relevant chunk, or select the answer in a card, to save the question.")

    def _save(self) -> None:
        q = self.gold_question()
        if q is None:
            self.hint.setText("Mark a relevant chunk, or select the answer text in a card, first.")
            return
        self.saveRequested.emit(q)
